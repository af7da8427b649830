"""The norm layers and Dropout, one file per family."""

from .batchnorm import BatchNorm1d, BatchNorm2d
from .dropout import Dropout
from .groupnorm import GroupNorm, InstanceNorm1d, InstanceNorm2d
from .layernorm import LayerNorm, standardize, standardize_backward
from .rmsnorm import RMSNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "Dropout", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "LayerNorm", "RMSNorm", "standardize", "standardize_backward"]
