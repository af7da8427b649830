"""The losses' twins: CrossEntropyLoss and MSELoss, torch's own with the same arguments;
with a z-loss, torch's CrossEntropyLoss with the z-loss added (``z_loss_twin()``: torch has
no z-loss)."""

import functools

from .. import nn
from .core import _torch, converts


@converts(nn.CrossEntropyLoss)
def _cross_entropy(m, sub):
    weight = None if m.weight is None else _torch().empty(m.weight.shape)  # loaded below
    cls = z_loss_twin() if m.z_loss else _torch().nn.CrossEntropyLoss
    t = cls(weight, ignore_index=m.ignore_index, reduction=m.reduction, label_smoothing=m.label_smoothing)
    if m.z_loss:
        t.z_loss = m.z_loss
    return t


@converts(nn.MSELoss)
def _mse(m, sub):
    return _torch().nn.MSELoss(reduction=m.reduction)


@functools.cache
def z_loss_twin():
    """torch's CrossEntropyLoss plus normcore's z-loss, built on first use."""
    torch = _torch()

    class CrossEntropyWithZLoss(torch.nn.CrossEntropyLoss):
        """``torch.nn.CrossEntropyLoss`` + z_loss * lse**2 per kept position, lse the logsumexp
        over the class axis; kept: every position with probabilities as targets, the targets
        that are not ``ignore_index`` with class indices. Reduced as normcore's
        ``CrossEntropyLoss`` says: "mean" the plain mean over the kept positions (class
        weights do not enter), "sum" the sum, "none" per position (0 where ignored)."""

        z_loss = 0.0

        def forward(self, input, target):
            axis = 0 if input.dim() == 1 else 1  # the class axis
            probabilities = target.is_floating_point()
            kept = (torch.ones(input.shape[:axis] + input.shape[axis + 1:], dtype=torch.bool) if probabilities
                    else target != self.ignore_index)  # the positions: the logits' shape without the class axis
            lse = torch.where(kept, torch.logsumexp(input, dim=axis), 0.0)
            z = self.z_loss * lse ** 2
            z = {"mean": lambda: z.sum() / kept.sum(), "sum": z.sum, "none": lambda: z}[self.reduction]()
            return super().forward(input, target) + z

    return CrossEntropyWithZLoss
