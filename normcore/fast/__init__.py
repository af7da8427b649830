"""The fast tier: the reference norms with cache-blocked, in-place kernels.

    import normcore.fast
    ln = normcore.fast.LayerNorm(768, dtype=np.float32)    # the same layer as nc.LayerNorm

Each class here subclasses its reference class in ``normcore.norms`` (same constructor,
parameters, state_dict, train/eval behaviour, dtypes and errors) and replaces only
``forward`` and ``backward``, which call the kernels in ``normcore.fast.kernels``. Those
kernels are the one deliberate second copy of the formulas; ``tests/test_fast_tier.py``
holds them equal to the reference tier (to 1e-12 in float64) on random shapes, memory
layouts, dtypes and configurations. Read the reference tier to learn the formulas; use this
one where time matters.
"""

from . import kernels
from .norms import (BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, InstanceNorm1d, InstanceNorm2d,
                    InstanceNorm3d, LayerNorm, RMSNorm)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "RMSNorm", "kernels"]
