"""The norm layers, one file per family: the reference tier, readable first.

``standardization`` holds the arithmetic LayerNorm, BatchNorm (Batch Renorm and Ghost
BatchNorm too), GroupNorm and InstanceNorm share; ``base`` the bookkeeping every norm shares.
The fast tier is ``normcore.fast``.
"""

from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .batchrenorm import BatchRenorm1d, BatchRenorm2d
from .dyt import DyT
from .ghostbatchnorm import GhostBatchNorm1d, GhostBatchNorm2d
from .groupnorm import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .layernorm import LayerNorm
from .rmsnorm import RMSNorm
from .standardization import (mean_over, moments, scaled_mean_square, size_scale, standardize, standardize_backward,
                              standardize_backward_from_means)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "BatchRenorm1d", "BatchRenorm2d", "GhostBatchNorm1d",
           "GhostBatchNorm2d", "DyT", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d",
           "LayerNorm", "RMSNorm", "mean_over", "moments", "scaled_mean_square", "size_scale", "standardize",
           "standardize_backward", "standardize_backward_from_means"]
