"""Experiments that test, at laptop scale, what the literature claims about normalization, and
draw the figures. Several fall short of the claim they test: the README's Figures section lists
where, and the modules' docstrings give the detail.

Each experiment is one module here with::

    NAME      the module name, used by ``normcore figures NAME``
    TITLE     a one-line title
    TAKEAWAY  the one-line lesson, as the README quotes it under the figure
    run(quick=False, seed=0, progress=None) -> dict of measured NumPy arrays and scalars
    plot(result, outdir) -> list of the PNG paths written (one per figure)

``progress`` is None or a callable ``progress(done, total, label)``. ``quick=True`` is a
smaller configuration that runs in seconds (what the tests use); the full one draws the
committed figures in ``figures/``. ``run_and_plot(..., quick=True)`` marks its figures as quick
runs in their titles. Data are synthetic; nothing is downloaded.

    from normcore import experiments
    result, paths = experiments.run_and_plot("invariance", quick=True, outdir="figures")
"""

import contextlib
import importlib
import pathlib

from .._array import flag
from ..perf.threads import single_thread

# The order ``normcore figures`` runs them in.
EXPERIMENTS = [
    "saturation",
    "covariate_shift",
    "loss_landscape",
    "batch_size",
    "batch_noise",
    "invariance",
    "pre_post_gradients",
    "warmup",
    "output_change",
    "effective_depth",
    "running_stats",
    "dropout",
    "speed",
    # since 2020
    "layernorm_tanh",
    "dyt_training",
    "qk_norm",
    "peri_ln",
    "rmsnorm_vs_layernorm",
    # the LLM era
    "curse_of_depth",
    "logit_control",
    # BatchNorm in practice
    "bn_placement",
    "recalibration",
    "sync_batchnorm",
    "weight_decay_bn",
    # weights normalised, small batches, residual scaling instead of norms
    "small_batches",
    "grad_weight",
    "no_norm",
]


class ExperimentNotFound(LookupError):
    """The named experiment is unknown, or its module is not part of this installation."""


def load(name):
    """Import the experiment module ``name`` (one of ``EXPERIMENTS``) and return it."""
    if name not in EXPERIMENTS:
        raise ExperimentNotFound(f"unknown experiment {name!r}; expected one of: {', '.join(EXPERIMENTS)}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as err:
        if err.name != f"{__name__}.{name}":
            raise  # the module exists but something it imports does not
        raise ExperimentNotFound(
            f"experiment {name!r} is listed but its module normcore/experiments/{name}.py is missing"
        ) from None


def run_and_plot(name, quick=False, outdir="figures", seed=0, progress=None):
    """Run experiment ``name`` and write its figures into ``outdir``; returns (result, paths).
    With ``quick=True`` each figure's title says it is a quick run."""
    from . import _plot  # matplotlib: imported here, so that the command line starts without it

    quick = flag(quick, "quick", "run_and_plot")
    module = load(name)
    outdir = pathlib.Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    with single_thread():
        result = module.run(quick=quick, seed=seed, progress=progress)
    with _plot.quick_run() if quick else contextlib.nullcontext():
        paths = module.plot(result, outdir)
    return result, [pathlib.Path(p) for p in paths]
