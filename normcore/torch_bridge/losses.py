"""The losses' twins: CrossEntropyLoss and MSELoss, torch's own with the same arguments."""

from .. import nn
from .core import _torch, converts


@converts(nn.CrossEntropyLoss)
def _cross_entropy(m, sub):
    weight = None if m.weight is None else _torch().empty(m.weight.shape)  # loaded below
    return _torch().nn.CrossEntropyLoss(weight, ignore_index=m.ignore_index,
                                        reduction=m.reduction, label_smoothing=m.label_smoothing)


@converts(nn.MSELoss)
def _mse(m, sub):
    return _torch().nn.MSELoss(reduction=m.reduction)
