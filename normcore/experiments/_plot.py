"""The look shared by every experiment's figures: large fonts and thick lines, for a projector.

Figures are built with ``matplotlib.figure.Figure`` directly (the non-interactive Agg canvas),
so drawing them never opens a window nor changes pyplot's global state.

Colours come from the Okabe-Ito palette, which readers with any common colour-vision
deficiency can tell apart, and every series also has its own line style and marker, so no
figure depends on telling two colours apart (nor on colour at all, printed in grey).
Figures drawn inside ``quick_run()`` are marked as quick runs in their title.
"""

import contextlib
import contextvars
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

# The Okabe-Ito palette (Okabe & Ito 2008), safe for red-green colour blindness, plus a grey.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",  # bluish green
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",  # reddish purple
    "grey": "#767676",
}

# One colour, marker and line style per norm, the same in every figure.
COLORS = {
    "none": OKABE_ITO["grey"],
    "batchnorm": OKABE_ITO["blue"],
    "layernorm": OKABE_ITO["orange"],
    "rmsnorm": OKABE_ITO["green"],
    "groupnorm": OKABE_ITO["purple"],
    "dyt": OKABE_ITO["vermillion"],
}
MARKERS = {"none": "X", "batchnorm": "o", "layernorm": "s", "rmsnorm": "^", "groupnorm": "D", "dyt": "v"}
LINESTYLES = {"none": ":", "batchnorm": "-", "layernorm": "--", "rmsnorm": "-.", "groupnorm": (0, (6, 2, 1, 2)),
              "dyt": (0, (1, 1))}
LABELS = {"none": "no norm", "batchnorm": "BatchNorm", "layernorm": "LayerNorm", "rmsnorm": "RMSNorm",
          "groupnorm": "GroupNorm", "dyt": "DyT"}


def series(name, colors=COLORS, markers=MARKERS, linestyles=LINESTYLES, **overrides):
    """Keyword arguments for ``ax.plot`` that draw series ``name`` in its colour, marker and line
    style (by default a norm's; pass another family's dicts, e.g. the norm positions')."""
    kw = {"color": colors[name], "marker": markers[name], "linestyle": linestyles[name]}
    kw.update(overrides)
    return kw


_QUICK = contextvars.ContextVar("quick_run", default=False)
QUICK_MARK = "QUICK RUN (small configuration, not the committed figure)"


@contextlib.contextmanager
def quick_run():
    """Within this block ``save`` marks every figure as a quick run, above its title."""
    token = _QUICK.set(True)
    try:
        yield
    finally:
        _QUICK.reset(token)


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
        if _QUICK.get():
            title = fig.get_suptitle()
            fig.suptitle(f"{QUICK_MARK}\n{title}" if title else QUICK_MARK, color=OKABE_ITO["vermillion"])
        fig.savefig(path)
    return path
