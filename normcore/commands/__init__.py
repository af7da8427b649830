"""One module per ``normcore`` subcommand, and the table of them that ``normcore.cli`` builds
its parser from (the tour lists them too)."""

from ..i18n import N_

# name -> (module under normcore.commands, one-line help: translated where it is shown, _(help))
COMMANDS = {
    "gradcheck": ("gradcheck", N_("check every layer's backward against numerical gradients")),
    "tour": ("tour", N_("start here: the gradient checks, one derivation, the notebooks and figures")),
    "explain": ("explain", N_("step through a norm's backward one node at a time, with numbers")),
    "practice": ("practice", N_("interview practice: write a norm layer by hand, get graded and diagnosed")),
    "figures": ("figures", N_("run the experiments and write their figures (PNG) into figures/")),
    "bench": ("bench", N_("time both tiers of the norms against PyTorch and the memory floor")),
    "compare": ("compare", N_("a built-in model in normcore and in PyTorch: every output and gradient")),
}
