"""Losses: cross-entropy on logits with integer targets, and mean squared error.

A loss's ``forward`` returns a scalar (a 0-d float) and ``backward(dloss=1.0)`` returns the
gradient of ``dloss * loss`` with respect to the prediction, to hand to the model's backward.
"""

import numpy as np

from .._array import as_array, compute_dtype, float_input, integer
from ..module import Module
from .embedding import index_input


def _scalar_upstream(dloss, who):
    dloss = as_array(dloss, f"{who}.backward", "upstream gradient")
    if dloss.shape != () or not np.issubdtype(dloss.dtype, np.number) or np.iscomplexobj(dloss):
        raise ValueError(f"{who}.backward expects a real scalar upstream gradient (the loss is a scalar), "
                         f"got {dloss!r}")
    return dloss


class CrossEntropyLoss(Module):
    r"""Mean cross-entropy between logits and integer class targets, stable and fused with softmax.

    Shapes: logits (*, V), targets integer (*) in [0, V) or ``ignore_index``; n = the number of
    targets not ignored::

        logp   = logits - max - log(sum(exp(logits - max)))     (*, V)   log_softmax
        loss   = -(1/n) * sum over kept positions of logp[target]         scalar
        dlogits = dloss * (softmax(logits) - onehot(target)) / n          (*, V), 0 on ignored rows

    Fusing softmax and the log into one backward gives the short ``p - onehot`` instead of
    the softmax Jacobian times 1/p, which is both cheaper and free of division by tiny p.
    ``ignore_index`` (default -100, as in PyTorch) marks positions without a target; when
    every position is ignored the loss is NaN, as in PyTorch. Cache: softmax, targets, n.
    """

    def __init__(self, ignore_index=-100):
        self.ignore_index = integer(ignore_index, "ignore_index", "CrossEntropyLoss")

    def forward(self, logits, targets):
        logits = float_input(logits, "CrossEntropyLoss")
        if logits.ndim < 1:
            raise ValueError("CrossEntropyLoss expects logits of shape (*, V), got a scalar")
        V = logits.shape[-1]
        targets = index_input(targets, V, "CrossEntropyLoss", "target", allowed=self.ignore_index)
        if targets.shape != logits.shape[:-1]:
            raise ValueError(f"CrossEntropyLoss: targets must have shape {logits.shape[:-1]} "
                             f"(the logits' shape without the class axis), got {targets.shape}")
        keep = targets != self.ignore_index  # (*)
        n = int(keep.sum())
        x = logits.astype(compute_dtype(logits.dtype), copy=False)  # float16 is computed in float32
        z = x - x.max(axis=-1, keepdims=True, initial=-np.inf)  # (*, V); initial: no error for V = 0
        logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # (*, V)
        safe = np.where(keep, targets, 0)  # (*), any valid index for ignored rows
        picked = np.take_along_axis(logp, safe[..., None], axis=-1)[..., 0]  # (*)
        loss = -np.sum(picked * keep) / n if n else np.nan
        self._cache = (np.exp(logp), safe, keep, n, logits.dtype)
        return np.asarray(loss, dtype=logits.dtype)

    def backward(self, dloss=1.0):
        p, safe, keep, n, in_dtype = self._cached()
        dloss = _scalar_upstream(dloss, "CrossEntropyLoss")
        onehot = np.zeros_like(p)  # (*, V)
        np.put_along_axis(onehot, safe[..., None], 1.0, axis=-1)
        dlogits = (p - onehot) * keep[..., None] * (dloss / max(n, 1))  # (*, V), 0 on ignored rows
        return dlogits.astype(in_dtype, copy=False)


class MSELoss(Module):
    r"""Mean squared error over every element.

    Shapes: pred and target the same shape, N elements::

        loss  = mean((pred - target)**2)                 scalar
        dpred = dloss * 2 * (pred - target) / N          the shape of pred

    ``backward`` returns dpred only (the target is data), in pred's dtype. Over no elements
    (N = 0) the loss is NaN, as in PyTorch. Cache: pred - target.
    """

    def forward(self, pred, target):
        pred = float_input(pred, "MSELoss")
        target = float_input(target, "MSELoss")
        if pred.shape != target.shape:
            raise ValueError(f"MSELoss: pred and target must have the same shape, "
                             f"got {pred.shape} and {target.shape}")
        diff = pred - target  # (*)
        loss = np.sum(diff * diff) / diff.size if diff.size else np.nan
        self._cache = (diff, pred.dtype)
        return np.asarray(loss, dtype=pred.dtype)

    def backward(self, dloss=1.0):
        diff, pred_dtype = self._cached()
        dloss = _scalar_upstream(dloss, "MSELoss")
        return (dloss * 2.0 * diff / max(diff.size, 1)).astype(pred_dtype, copy=False)  # (*)
