"""The look shared by every experiment's figures: large fonts and thick lines, for a projector.

Figures are built with ``matplotlib.figure.Figure`` directly (the non-interactive Agg canvas),
so drawing them never opens a window nor changes pyplot's global state.
"""

import contextlib
import pathlib

import matplotlib
import matplotlib.colors  # noqa: F401  (colormaps for the experiments)
import matplotlib.patches  # noqa: F401  (legend handles for the experiments)
import matplotlib.ticker  # noqa: F401  (tick locators for the experiments)
from matplotlib.figure import Figure

STYLE = {
    "font.size": 17,
    "axes.titlesize": 19,
    "axes.labelsize": 17,
    "legend.fontsize": 14,
    "xtick.labelsize": 15,
    "ytick.labelsize": 15,
    "lines.linewidth": 3.0,
    "lines.markersize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "savefig.bbox": "tight",
}

# One colour per norm, the same in every figure.
COLORS = {
    "none": "tab:gray",
    "batchnorm": "tab:blue",
    "layernorm": "tab:orange",
    "rmsnorm": "tab:green",
    "groupnorm": "tab:red",
}
LABELS = {"none": "no norm", "batchnorm": "BatchNorm", "layernorm": "LayerNorm", "rmsnorm": "RMSNorm",
          "groupnorm": "GroupNorm"}


@contextlib.contextmanager
def figure(ncols=1, nrows=1, size=(11, 6.5), **subplot_kw):
    """Yield (fig, axes) drawn in normcore's style; axes is one Axes or an array of them."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=size, layout="constrained")
        axes = fig.subplots(nrows, ncols, squeeze=True, **subplot_kw)
        yield fig, axes


def save(fig, outdir, name):
    """Write ``fig`` as ``outdir/name.png`` and return the path."""
    path = pathlib.Path(outdir) / f"{name}.png"
    with matplotlib.rc_context(STYLE):
        fig.savefig(path)
    return path
