"""The targets of the fast tier, each against the ratio it is measured by, and how the
benchmark's results are read against them.
"""

import math
from dataclasses import dataclass

from ..i18n import translator
from .baselines import NO_FAST, NOT_TORCH
from .cases import SHAPES
from .timing import paired_ratio

_ = translator("cli")

# The targets of the FAST tier, float32 at SHAPES[0], each against the ratio it is measured by.
FAST_VS_TORCH_TARGET = 2.5  # LayerNorm and BatchNorm1d fwd+bwd time / torch's on one thread
FAST_VS_TORCH_STRETCH = 2.0  # the stretch goal for the same ratio
RMS_VS_LN_TARGET = 0.8  # fast RMSNorm fwd+bwd time / fast LayerNorm's
CACHE_TARGET = 1.1  # fast forward cache bytes / input bytes, the largest over the cases
TRANSFORMER_TARGET = 1.5  # training step time vs PyTorch's, one thread each


@dataclass
class Target:
    what: str
    measured: float  # NaN when it could not be measured
    limit: float
    stretch: float = math.nan  # the stretch goal, when the target has one
    note: str = ""

    @property
    def met(self):
        return self.measured <= self.limit

    @property
    def stretch_met(self):
        return self.measured <= self.stretch


def compute_targets(results, step, torch, fast, shape=SHAPES[0]):
    """The targets of the fast tier, read from the float32 results at ``shape``."""
    nan = math.nan
    by = {(r.layer, r.shape, r.dtype): r for r in results}
    case = lambda layer: by.get((layer, tuple(shape), "float32"))  # noqa: E731
    missing = "" if fast else _(NO_FAST)
    targets = []
    for layer in ("LayerNorm", "BatchNorm1d"):
        r = case(layer)
        ratio = r.ratio("fast", "torch 1t", "fwd+bwd") if r and torch else nan
        targets.append(Target(_("{layer} fwd+bwd / torch {n} thread").format(layer=layer, n=1), ratio,
                              FAST_VS_TORCH_TARGET, FAST_VS_TORCH_STRETCH,
                              missing or ("" if torch else _(NOT_TORCH))))
    ln, rms = case("LayerNorm"), case("RMSNorm")
    ratio = (paired_ratio(rms.times["fast", "fwd+bwd"], ln.times["fast", "fwd+bwd"])
             if fast and ln and rms else nan)
    targets.append(Target(_("{layer} fwd+bwd / {other} fwd+bwd").format(layer="RMSNorm", other="LayerNorm"),
                          ratio, RMS_VS_LN_TARGET, note=missing))
    caches = [(r.cache.get("fast", nan), r) for r in results]
    caches = [(c, r) for c, r in caches if c == c]
    what = _("forward cache / input bytes, largest")
    if caches:
        worst, r = max(caches, key=lambda cr: cr[0])
        targets.append(Target(what, worst, CACHE_TARGET, note=f"{r.layer} {r.shape} {r.dtype}"))
    else:
        targets.append(Target(what, nan, CACHE_TARGET, note=missing or _("the fast tier keeps no _cache")))
    what = _("Transformer step / torch, {n} thread each").format(n=1)
    if step.error or "torch 1t" not in step.times:
        targets.append(Target(what, nan, TRANSFORMER_TARGET, note=step.error or _(NOT_TORCH)))
    else:
        note = _("reference tier")
        if "torch Nt" in step.times:
            note += _("; all threads each: {ratio}x").format(ratio=f"{step.ratio('Nt'):.2f}")
        targets.append(Target(what, step.ratio("1t"), TRANSFORMER_TARGET, note=note))
    return targets
