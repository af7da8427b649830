"""The classroom notebooks (``notebooks/`` of a clone of normcore), in the language in use.

A notebook NAME may have a Chinese edition, NAME_zh, built from the same source
(``notebooks/build.py``). ``in_language("batchnorm")`` is the name to point a reader at: NAME_zh
when the language in use is Chinese and that edition exists (``notebooks/`` holds it, or
``notebooks/build.py`` builds it: its ``TOPICS``), else NAME. ``listing()`` is what the tour
prints: each notebook once, in the reader's language where it has an edition in it, and
otherwise with its title in the reader's language and marked as English.

    in_language("interview_practice.ipynb")   # 'interview_practice_zh.ipynb' in Chinese
    in_language("dropout")                    # 'dropout': no Chinese edition
"""

import ast
import json
from functools import cache
from pathlib import Path

from .i18n import LANGUAGES, N_, language, translator

_ = translator("cli")
FOLDER = Path(__file__).resolve().parents[1] / "notebooks"  # in a clone of the repository
SUFFIX = ".ipynb"

# Each notebook's title, as its first heading says it in English: the tour translates it for
# a notebook that has no edition in the reader's language (a test holds these to the notebooks).
TITLES = {
    "batchnorm": N_("BatchNorm, one node at a time"),
    "batchnorm_in_practice": N_("BatchNorm in practice: folded, recalibrated, frozen, "
                                "synchronised, decayed"),
    "claims": N_("Four write-ups' claims on normalization, tested"),
    "dropout": N_("Dropout: a random mask, and the scale that keeps the expectation"),
    "groupnorm_instancenorm": N_("GroupNorm and InstanceNorm: LayerNorm on groups of channels"),
    "interview_practice": N_("Interview practice: hand-write a norm, forward and backward"),
    "layernorm": N_("LayerNorm, one node at a time"),
    "llm_norms": N_("Norms in today's LLMs: the reordered norm, QK-norm's scope, depth, z-loss, "
                    "soft-capping"),
    "modern_norms": N_("Normalization since 2020: DyT, QK-norm, Peri-LN"),
    "pre_post_norm": N_("Pre-Norm vs Post-Norm: where the norm sits in a Transformer block"),
    "rmsnorm": N_("RMSNorm, one node at a time"),
    "weight_side": N_("The weight side: WeightNorm, Weight Standardization, Batch Renorm, Ghost BN, "
                      "LayerScale"),
}


@cache
def _built_topics(folder):
    """The topics ``folder/build.py`` builds (its ``TOPICS``, read without running it: it needs
    nbformat), or () without one."""
    try:
        tree = ast.parse((folder / "build.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return ()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TOPICS" for t in node.targets):
            try:
                return tuple(ast.literal_eval(node.value))
            except ValueError:
                return ()
    return ()


def available(folder=FOLDER):
    """The names (no suffix) of the notebooks there are: those ``folder`` holds and those its
    build.py builds."""
    folder = Path(folder)
    held = {path.stem for path in folder.glob("*" + SUFFIX)}
    return sorted(held | set(_built_topics(folder.resolve())))


def in_language(name, lang=None, folder=FOLDER):
    """The notebook to point a reader of ``lang`` (default: the language in use) at instead of
    ``name`` ("batchnorm" or "batchnorm.ipynb", the suffix kept as given): its edition in that
    language when there is one, else ``name`` itself."""
    lang = language() if lang is None else lang
    stem, suffix = (name[:-len(SUFFIX)], SUFFIX) if name.endswith(SUFFIX) else (name, "")
    if lang == "en" or stem.endswith("_" + lang):
        return name
    edition = f"{stem}_{lang}"
    return edition + suffix if edition in available(folder) else name


def _heading(path):
    """A notebook's first heading, or '' when it cannot be read."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = next(c for c in cells if c["cell_type"] == "markdown")
        return "".join(first["source"]).splitlines()[0].lstrip("# ").strip()
    except (OSError, ValueError, KeyError, IndexError, StopIteration):
        return ""


def listing(lang=None, folder=FOLDER):
    """[(file name, title)] of the notebooks for a reader of ``lang`` (default: the language in
    use). In English, every notebook ``folder`` holds, with its heading. In another language, each
    notebook once: its edition in that language where there is one, with that edition's
    heading; otherwise the English notebook, its title translated and marked as English."""
    lang = language() if lang is None else lang
    folder = Path(folder)
    names = available(folder)
    if lang == "en":  # the notebooks there are now, whatever their language
        return [(path.name, _heading(path)) for path in sorted(folder.glob("*" + SUFFIX))]
    editions = tuple("_" + other for other in LANGUAGES if other != "en")
    out = []
    for name in (n for n in names if not n.endswith(editions)):
        shown = in_language(name, lang, folder)
        if shown != name:
            out.append((shown + SUFFIX, _heading(folder / (shown + SUFFIX)) or _(TITLES.get(name, name))))
        else:
            title = _(TITLES[name]) if name in TITLES else _heading(folder / (name + SUFFIX))
            out.append((name + SUFFIX, _("{title} (in English)").format(title=title)))
    return out
