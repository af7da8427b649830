"""``normcore tour``: the first command to run. It proves every backward pass (the gradient
check table), walks through one derivation node by node, and says where the notebooks and
figures are and what to run next. Every line fits in 80 columns."""

from pathlib import Path

from ..derivations import step_through
from ..gradcheck import gradcheck
from ..i18n import N_, joined, translator
from ..i18n.width import clip, display_width, fill, pad
from ..layer_cases import all_cases
from ..notebooks import in_language, listing
from . import COMMANDS
from ._options import seed

_ = translator("cli")
WIDTH = 80
ROOT = Path(__file__).resolve().parents[2]  # the repository, when run from a clone


DESCRIPTION = N_("""\
Start here: the gradient check of every layer (one line each), LayerNorm's
backward worked through node by node on a 2x3 input, the notebooks and
figures and where they are, and what to run next. Every line fits in 80
columns; exit status 1 if a check fails.""")

EPILOG = N_("""\
examples:
  normcore tour              the whole tour
  normcore tour | less       one page at a time
  normcore tour --seed 1     other random inputs""")


def add_arguments(parser):
    parser.description = _(DESCRIPTION)
    parser.epilog = _(EPILOG)
    parser.add_argument("--seed", type=seed, default=0,
                        help=_("seed of the random inputs (default %(default)s)"))


def _say(text=""):
    print(fill(text, WIDTH) if text else "")


def _heading(text):
    print()
    print(text)
    print("-" * display_width(text))


def _cut(label, width):
    """``label`` in at most ``width`` columns: whole, or cut at a space with "…" after it."""
    if display_width(label) <= width:
        return label
    head = clip(label, width - 1)
    return (head.rsplit(" ", 1)[0] if " " in head else head).rstrip(",，") + "…"


def _gradcheck_table(seed):
    """One line per layer: its worst relative error over the input and parameter gradients."""
    cases = all_cases(seed)
    heads = [_("layer"), _("gradients"), _("worst rel error"), _("result")]
    numbers = [max(n, display_width(h)) for n, h in zip((9, 15), heads[1:3])]
    last = max(display_width(word) for word in (heads[3], _("pass"), _("FAIL")))
    room = WIDTH - sum(numbers) - last - 6  # what the label may take of the 80 columns
    widths = [min(room, max(display_width(heads[0]), *(display_width(c.shown) for c in cases))), *numbers]
    width = widths[0]
    print(f"{pad(heads[0], widths[0])}  {pad(heads[1], widths[1], '>')}  "
          f"{pad(heads[2], widths[2], '>')}  {heads[3]}")
    failed = 0
    for case in cases:
        report = gradcheck(case.module, *case.inputs, seed=seed)
        worst = max(c.rel_error for c in report.checks)
        failed += not report.passed
        verdict = _("pass") if report.passed else _("FAIL")
        print(f"{pad(_cut(case.shown, width), widths[0])}  {len(report.checks):>{widths[1]}}  "
              f"{worst:>{widths[2]}.1e}  {verdict}")
    return len(cases), failed


def _figures():
    """[(title, [png paths])]: the committed figures, grouped by the experiment that drew them."""
    pngs = sorted((ROOT / "figures").glob("*.png"))
    groups = []
    try:
        from .. import experiments
        for name in experiments.EXPERIMENTS:
            mine = [p for p in pngs if p.stem == name or p.stem.startswith(name + "_")]
            if mine:
                groups.append((_(experiments.load(name).TITLE), mine))
                pngs = [p for p in pngs if p not in mine]
    except (ImportError, LookupError, AttributeError):
        pass  # no experiments package here: list the files as they are
    return groups + ([(_("Other figures"), pngs)] if pngs else [])


def run(args):
    print("normcore tour".center(WIDTH).rstrip())
    print("=" * WIDTH)
    _say(_("normcore is normalization in deep networks written out in NumPy: BatchNorm, "
           "LayerNorm, RMSNorm, GroupNorm and InstanceNorm, Dropout, and where a norm sits "
           "in a Transformer block. Every backward pass is derived by hand, and every one is "
           "checked against numbers measured without any derivative."))

    _heading("1. " + _("Every gradient, checked"))
    _say(_("Each layer below runs in float64 with random parameters (never the ones and zeros "
           "they start at) and a random upstream gradient dy; its hand-derived gradients, of the "
           "input and of each parameter, are compared with central differences of "
           "L = sum(y * dy)."))
    print()
    total, failed = _gradcheck_table(args.seed)
    print()
    verdict = (_.ngettext("{n} layer, all gradients pass.", "{n} layers, all gradients pass.", total)
               if not failed else
               _.ngettext("{n} layer, {failed} FAIL.", "{n} layers, {failed} FAIL.", total))
    _say(joined(verdict.format(n=total, failed=failed),
                _("For the per-tensor table: {command}").format(command="normcore gradcheck")))

    _heading("2. " + _("One gradient, one node at a time"))
    _say(_("Where does LayerNorm's compact backward come from? The forward is a chain of "
           "elementary steps; the backward visits them in reverse, each passing a share of the "
           "gradient to its inputs. The numbers below are for a {shape} input.").format(shape="2x3"))
    print()
    st = step_through("layernorm", shape=(2, 3), seed=args.seed)
    print(st.text(width=WIDTH, latex=False))

    _heading("3. " + _("Notebooks and figures"))
    notebooks = listing()
    if notebooks:
        _say(_("The notebooks (in notebooks/, saved with their outputs, so they read on a web "
               "page; run them with Jupyter to change the numbers):"))
        for name, title in notebooks:
            print(fill(_("{name}: {title}").format(name=name, title=title), WIDTH, indent="  ",
                       subsequent_indent="    "))
        _say(_("New to the topic? Start with {first}, then {second}.").format(
            first=in_language("batchnorm.ipynb"), second=in_language("layernorm.ipynb")))
    else:
        _say(_("The notebooks are in the notebooks/ folder of the normcore repository."))
    figures = _figures()
    if figures:
        print()
        _say(_("The figures (in figures/, drawn by the experiments of normcore figures):"))
        for title, paths in figures:
            print(fill(title, WIDTH, indent="  ", subsequent_indent="    "))
            for path in paths:
                print(f"      figures/{path.name}")

    _heading("4. " + _("What to run next"))
    examples = [
        ("normcore explain batchnorm --shape 4x3", _("BatchNorm: statistics over the batch")),
        ("normcore explain rmsnorm --shape 2x4", _("RMSNorm: no mean, no beta")),
        ("normcore explain softmax --shape 4x4 --causal", _("the softmax inside causal attention")),
    ]
    examples += [(f"normcore {name}", _(help_)) for name, (_module, help_) in COMMANDS.items()
                 if name not in ("tour", "explain")]
    examples.append(("normcore COMMAND --help", _("the options of any command")))
    for command, what in examples:
        print(command)
        print(fill(what, WIDTH, indent="    "))
    return 1 if failed or not st.passed else 0
