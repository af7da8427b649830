"""The check labels of the report in the language in use: "train (8, 4): dgamma after two
backward calls" reads "训练 (8, 4): dgamma 两次反向后" in Chinese.

The grader keeps its labels in English (they seed each probe's random inputs, and the hints
read them); the report shows them through ``show_label``, which translates the phrases a label
is made of (``PHRASES``) and leaves the rest (shapes, code, formulas) as it is. A ``{n}`` in a
phrase stands for a number, which the translation keeps.
"""

import re
from functools import cache

from ..i18n import N_, language, translator

_ = translator("practice")

PHRASES = (
    # the rows: what a check compares
    N_("forward"), N_("output"), N_("output dtype"), N_("loss"), N_("parameters"),
    N_("after {n} step"), N_("after {n} steps"), N_("after two backward calls"),
    N_("after the eval forward"), N_("eval:"), N_("train() again:"), N_("alpha assigned:"),
    N_("of each worker"), N_("of each worker (its local share)"),
    N_("(the shards concatenated)"), N_("output / input"),
    N_("factor on the kept units"), N_("factor on the kept gradients"),
    N_("fraction of units dropped"), N_("fraction of columns dropped in every row"),
    N_("gradients masked unlike the forward (fraction)"),
    N_("forward with the default alpha_init"), N_("input unchanged"),
    N_("inputs left unchanged"), N_("unchanged by forward"),
    N_("two layers with rng={n} drop the same units"), N_("(folded weight)"),
    N_("(folded bias)"), N_("buffers"), N_("buffers detached"), N_("autograd intact"),
    N_("batches tracked"), N_("state_dict keys"),
    # the probes: what input, in which mode
    N_("train"), N_("eval"), N_("eval mode"), N_("rank {n}"), N_("batch of {n}"),
    N_("constant channel"), N_("constant row"), N_("constant group"), N_("small variance"),
    N_("running stats"), N_(", {n} steps, then eval:"), N_("one sample"), N_("one channel"),
    N_("one position"), N_("default eps"), N_("zero row"), N_("after a training forward"),
    N_("logits around {n}"), N_("two logits + {n}"), N_("peaked"), N_("confidently wrong"),
    N_("confident and wrong"), N_("one logit - {n}"), N_("classes"),
    N_("gradients accumulate"), N_("shards"), N_("shards of {n}"), N_("uneven shards"), N_("worker {n} empty"),
    N_("mean ~"), N_("default alpha_init, then alpha assigned"),
    N_("forward on tanh(x): the input, autograd"), N_("large x, scale ~"),
    N_("negative alpha"), N_("no bias, b = {n}"), N_("q and k near {n}, eps matters"),
    N_("near eps"), N_("seeded rng"), N_("square"), N_("tanh nearly linear"),
    N_("tanh saturated"), N_("the module; then {n} training forwards"), N_("causal"),
    N_("rows of v far apart in length"), N_("one output"),
    N_("reordered norm"),
)
NUMBER = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


@cache
def _pattern():
    """One regular expression for every phrase, the longest first (so that "eval mode" wins over
    "eval"), each a whole word or phrase; ``{n}`` matches a number."""
    alternatives = []
    for k, phrase in sorted(enumerate(PHRASES), key=lambda kp: -len(kp[1])):
        body = re.escape(phrase).replace(re.escape("{n}"), rf"(?P<n{k}>{NUMBER})")
        before = r"(?<!\w)" if phrase[0].isalnum() else ""
        after = r"(?!\w)" if phrase[-1].isalnum() else ""
        alternatives.append(rf"(?P<p{k}>{before}{body}{after})")
    return re.compile("|".join(alternatives))


def _translate(match):
    k = int(next(name for name, value in match.groupdict().items()
                 if value is not None and name.startswith("p"))[1:])
    number = match.group(f"n{k}") if f"n{k}" in match.re.groupindex else None
    text = _(PHRASES[k])
    return text.format(n=number) if number is not None else text


def show_label(label):
    """``label`` (a probe, a row, or "probe: row") in the language in use."""
    if language() == "en":
        return label
    # Chinese punctuation carries its own space: "推理：前向", "dx（分片拼接）", not "推理： 前向"
    # or "dx （分片拼接）"
    return re.sub(r"\s+(?=[：，（])|(?<=[：，（])\s+", "", _pattern().sub(_translate, label))
