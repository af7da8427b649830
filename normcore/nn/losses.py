"""Losses: cross-entropy on logits with integer targets (PyTorch's layout, classes on axis 1),
and mean squared error.

A loss's ``forward`` returns a scalar (a 0-d float; per-element losses with
``reduction="none"``) and ``backward(dloss)`` returns the gradient of ``dloss * loss`` (of
``sum(dloss * loss)`` for "none") with respect to the prediction, to hand to the model's backward.
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._array import as_array, check_upstream, compute_dtype, float_input, integer, real_number
from ..module import Module
from .activations import log_softmax
from .embedding import index_input


def _scalar_upstream(dloss: ArrayLike, who: str) -> np.ndarray:
    dloss = as_array(dloss, f"{who}.backward", "upstream gradient")
    if dloss.shape != () or not np.issubdtype(dloss.dtype, np.number) or np.iscomplexobj(dloss):
        raise ValueError(f"{who}.backward expects a real scalar upstream gradient (the loss is a scalar), "
                         f"got {dloss!r}")
    return dloss


REDUCTIONS = ("mean", "sum", "none")


def _reduction(value: object, who: str) -> str:
    if not isinstance(value, str) or value not in REDUCTIONS:
        raise ValueError(f"{who}: reduction must be one of {REDUCTIONS}, got {value!r}")
    return value


class CrossEntropyLoss(Module):
    r"""Cross-entropy between logits and integer class targets, PyTorch's layout and semantics,
    fused with log-softmax so the backward needs no softmax Jacobian.

    Shapes, the CLASS AXIS 1 as in PyTorch: logits (N, C) with targets (N,), or (N, C, d1, ...)
    with targets (N, d1, ...), or unbatched (C,) with a 0-d target. Targets are integers in
    [0, C) or ``ignore_index``; class probabilities as targets are not supported. Transformer
    logits (B, T, V) go in as ``logits.reshape(-1, V)`` with ``targets.reshape(-1)``.

    With w the class weights (``weight``, all ones by default), eps = ``label_smoothing``, and
    for every position n (the class axis moved last; sums over classes c)::

        logp[n]  = log_softmax(logits[n])                                   (C,)
        q[n, c]  = (1 - eps) * w[y_n] * [c == y_n] + (eps / C) * w[c]          the target weights
        l[n]     = -sum_c q[n, c] * logp[n, c],   0 where y_n == ignore_index
        mean: sum_n l[n] / sum_(n kept) w[y_n]   sum: sum_n l[n]   none: l (the targets' shape)

        dlogits[n] = g[n] * (softmax(logits[n]) * sum_c q[n, c] - q[n])

    where g[n] is dloss / sum_(n kept) w[y_n] (mean), dloss (sum) or the upstream gradient's
    entry n (none), and 0 on ignored positions. This is d l[n] / d logits[n] because
    d logp_c / d x_j = [c == j] - p_j. Without smoothing and weights it is the familiar
    p - onehot(y). The weighted mean divides by the weights of the kept targets, not by their
    number, and the smoothing term is divided by the same sum, exactly as PyTorch does.
    When nothing is kept, the mean is NaN (0/0, as in PyTorch) and its gradient 0.

    ``backward(dloss=None)``: for "mean" and "sum" a scalar (None means 1.0); for "none" an
    array of the loss's shape (required). Cache: logp, the targets, the mask of kept positions,
    the class weights and the mean's denominator.
    """

    weight: np.ndarray | None  # a buffer: the class weights, (C,)

    def __init__(self, weight: ArrayLike | None = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        who = "CrossEntropyLoss"
        if weight is not None:
            weight = as_array(weight, who, "weight")
            if not np.issubdtype(weight.dtype, np.floating):
                raise TypeError(f"{who}: weight must be a floating-point array of shape (C,), got dtype {weight.dtype}")
            if weight.ndim != 1:
                raise ValueError(f"{who}: weight must have shape (C,), one weight per class, got {weight.shape}")
            weight = weight.copy()
        self.ignore_index = integer(ignore_index, "ignore_index", who)
        self.reduction = _reduction(reduction, who)
        self.label_smoothing = real_number(label_smoothing, "label_smoothing", who, low=0.0, high=1.0)
        self.register_buffer("weight", weight)

    def extra_repr(self) -> str:
        return (f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, "
                f"label_smoothing={self.label_smoothing}" + ("" if self.weight is None else ", weight=(C,)"))

    def _inputs(self, logits: ArrayLike, targets: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check the arguments; return logits with the class axis last (*, C) and targets (*)."""
        who = "CrossEntropyLoss"
        logits = float_input(logits, who)
        if logits.ndim < 1:
            raise ValueError(f"{who} expects logits of shape (C,), (N, C) or (N, C, d1, ...), got a scalar")
        C = logits.shape[0] if logits.ndim == 1 else logits.shape[1]
        target_shape = () if logits.ndim == 1 else logits.shape[:1] + logits.shape[2:]
        t = as_array(targets, who, "targets")
        if np.issubdtype(t.dtype, np.floating):
            raise TypeError(f"{who}: targets must be integer class indices; class probabilities "
                            f"(a float target, dtype {t.dtype}) are not supported")
        targets = index_input(t, C, who, "target", allowed=self.ignore_index)
        if targets.shape != target_shape:
            raise ValueError(f"{who}: for logits of shape {logits.shape} (classes on axis "
                             f"{0 if logits.ndim == 1 else 1}) targets must have shape {target_shape}, "
                             f"got {targets.shape}")
        if self.weight is not None and self.weight.shape != (C,):
            raise ValueError(f"{who}: weight has shape {self.weight.shape} but the logits have {C} classes")
        x = logits[None] if logits.ndim == 1 else logits  # (N, C, ...)
        return np.moveaxis(x, 1, -1), targets.reshape(x.shape[:1] + x.shape[2:]), logits

    def forward(self, logits: ArrayLike, targets: ArrayLike) -> np.ndarray:
        x, y, logits = self._inputs(logits, targets)  # x (*, C), y (*)
        dtype = compute_dtype(logits.dtype)
        x = x.astype(dtype, copy=False)  # float16 is computed in float32
        C = x.shape[-1]
        w = np.ones(C, dtype) if self.weight is None else self.weight.astype(dtype)  # (C,)
        eps = self.label_smoothing if C else 0.0  # no classes: nothing to smooth over
        keep = y != self.ignore_index  # (*)
        safe = np.where(keep, y, 0)  # (*), any valid index for ignored positions
        logp = log_softmax(x, axis=-1)  # (*, C)
        w_y = w[safe] * keep  # (*), the weight of each kept target, 0 where ignored
        nll = -np.take_along_axis(logp, safe[..., None], axis=-1)[..., 0]  # (*)
        loss = (1.0 - eps) * w_y * nll  # (*)
        if eps:
            smooth = -np.sum(logp * w, axis=-1)  # (*)
            loss = loss + (eps / C) * smooth
        loss = np.where(keep, loss, 0.0)  # (*); an ignored position adds exactly 0 (even if its logp is -inf)
        denom = float(np.sum(w_y))
        out: Any  # the loss per position for "none", else a scalar
        if self.reduction == "none":
            out = loss.reshape(logits.shape[:1] + logits.shape[2:] if logits.ndim > 1 else ())
        elif self.reduction == "sum":
            out = np.sum(loss)
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                out = np.sum(loss) / denom if y.size else np.nan  # 0/0 -> NaN, as in PyTorch
        self._cache = (logp, safe, keep, w, denom, out.shape if self.reduction == "none" else (),
                       logits.shape, logits.dtype)
        return np.asarray(out, dtype=logits.dtype).copy()

    def backward(self, dloss: ArrayLike | None = None) -> np.ndarray:
        logp, safe, keep, w, denom, out_shape, in_shape, in_dtype = self._cached()
        C = logp.shape[-1]
        eps = self.label_smoothing if C else 0.0  # no classes: nothing to smooth over
        if self.reduction == "none":
            if dloss is None:
                raise ValueError("CrossEntropyLoss(reduction='none').backward needs an upstream gradient "
                                 f"of the loss's shape {out_shape}")
            g = check_upstream(dloss, out_shape, "CrossEntropyLoss").reshape(keep.shape)  # (*)
        else:
            g = _scalar_upstream(1.0 if dloss is None else dloss, "CrossEntropyLoss")
            if self.reduction == "mean":
                g = g / denom if denom else np.zeros_like(g, dtype=logp.dtype)
        g = np.where(keep, g, 0.0).astype(logp.dtype)  # (*)
        onehot = np.zeros_like(logp)  # (*, C)
        np.put_along_axis(onehot, safe[..., None], 1.0, axis=-1)
        q = (1.0 - eps) * w[safe][..., None] * onehot + (eps / max(C, 1)) * w  # (*, C), the target weights
        dx = g[..., None] * (np.exp(logp) * q.sum(axis=-1, keepdims=True) - q)  # (*, C); exp(logp) = softmax
        dx = np.moveaxis(dx, -1, 1)  # (N, C, ...)
        return dx.reshape(in_shape).astype(in_dtype, copy=False)


class MSELoss(Module):
    r"""Mean squared error over every element.

    Shapes: pred and target the same shape, N elements::

        loss  = mean((pred - target)**2)                 scalar
        dpred = dloss * 2 * (pred - target) / N          the shape of pred

    ``backward`` returns dpred only (the target is data), in pred's dtype. Over no elements
    (N = 0) the loss is NaN, as in PyTorch. Cache: pred - target.
    """

    def forward(self, pred: ArrayLike, target: ArrayLike) -> np.ndarray:
        pred = float_input(pred, "MSELoss")
        target = float_input(target, "MSELoss")
        if pred.shape != target.shape:
            raise ValueError(f"MSELoss: pred and target must have the same shape, "
                             f"got {pred.shape} and {target.shape}")
        diff = pred - target  # (*)
        loss = np.sum(diff * diff) / diff.size if diff.size else np.nan
        self._cache = (diff, pred.dtype)
        return np.asarray(loss, dtype=pred.dtype)

    def backward(self, dloss: ArrayLike = 1.0) -> np.ndarray:
        diff, pred_dtype = self._cached()
        dloss = _scalar_upstream(dloss, "MSELoss")
        return (dloss * 2.0 * diff / max(diff.size, 1)).astype(pred_dtype, copy=False)  # (*)
