"""One module per ``normcore`` subcommand, and the table of them that ``normcore.cli`` builds
its parser from (the tour lists them too)."""

# name -> (module under normcore.commands, one-line help)
COMMANDS = {
    "gradcheck": ("gradcheck", "check every layer's backward against numerical gradients"),
    "tour": ("tour", "start here: the gradient checks, one derivation, the notebooks and figures"),
    "explain": ("explain", "step through a norm's backward one node at a time, with numbers"),
    "practice": ("practice", "interview practice: write a norm layer by hand, get graded and diagnosed"),
    "figures": ("figures", "run the experiments and write their figures (PNG) into figures/"),
    "bench": ("bench", "time both tiers of the norms against PyTorch and the memory floor"),
    "compare": ("compare", "a built-in model in normcore and in PyTorch: every output and gradient"),
}
