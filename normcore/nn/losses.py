"""Losses: cross-entropy on logits with class-index or class-probability targets (PyTorch's
layout, classes on axis 1), and mean squared error.

A loss's ``forward`` returns a scalar (a 0-d float; per-element losses with
``reduction="none"``) and ``backward(dloss)`` returns the gradient of ``dloss * loss`` (of
``sum(dloss * loss)`` for "none") with respect to the prediction, to hand to the model's backward.
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._array import as_array, check_upstream, compute_dtype, float_input, integer, real_number
from ..i18n import translator
from ..module import Module
from .activations import log_softmax
from .embedding import index_input

_ = translator("cli")


def logsumexp(x: np.ndarray) -> np.ndarray:
    """log(sum_c exp(x[..., c])) over the last axis, (*, C) -> (*), shifted by the row's maximum
    so that no exp overflows (-inf for a row of -inf, and for no classes)."""
    if x.shape[-1] == 0:
        return np.full(x.shape[:-1], -np.inf, x.dtype)
    m = np.max(x, axis=-1, keepdims=True)  # (*, 1)
    m = np.where(np.isfinite(m), m, 0.0)  # a row of -inf (or +inf) is left to exp and log
    return (m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True)))[..., 0]  # (*)


def _scalar_upstream(dloss: ArrayLike, who: str) -> np.ndarray:
    dloss = as_array(dloss, f"{who}.backward", "upstream gradient")
    if dloss.shape != () or not np.issubdtype(dloss.dtype, np.number) or np.iscomplexobj(dloss):
        raise ValueError(f"{who}.backward: expected a real scalar upstream gradient (the loss is a scalar), "
                         f"got shape {dloss.shape} and dtype {dloss.dtype}")
    return dloss


REDUCTIONS = ("mean", "sum", "none")


def _reduction(value: object, who: str) -> str:
    if not isinstance(value, str) or value not in REDUCTIONS:
        raise ValueError(f"{who}: expected reduction to be one of {REDUCTIONS}, got {value!r}")
    return value


def class_index_weights(y: np.ndarray, w: np.ndarray, eps: float,
                        ignore_index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The target weights of class indices y (*): q (*, C), the kept positions (*), the terms
    of l that PyTorch adds (*, C) and the mean's denominator D, as in CrossEntropyLoss."""
    C = w.shape[0]
    kept = y != ignore_index  # (*)
    onehot = (np.arange(C) == y[..., None]) & kept[..., None]  # (*, C), all False where ignored
    w_y = np.sum(onehot * w, axis=-1)  # (*), w[y_n], 0 where ignored
    q = (1.0 - eps) * w_y[..., None] * onehot + (eps / max(C, 1)) * w * kept[..., None]  # (*, C)
    terms = onehot | (kept[..., None] & (eps > 0))  # (*, C): the target's term; every class's when smoothing
    return q, kept, terms, float(np.sum(w_y))


def class_probability_weights(p: np.ndarray, w: np.ndarray,
                              eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The target weights of class probabilities p (*, C): q (*, C), the kept positions (*,
    all), the terms of l that PyTorch adds (*, C, all) and the mean's denominator D, as in
    CrossEntropyLoss."""
    C = w.shape[0]
    q = w * ((1.0 - eps) * p + eps / max(C, 1))  # (*, C), w[c] * p'[n, c]
    with np.errstate(invalid="ignore"):
        D = float(np.float64(p.size) / C)  # numel / C, PyTorch's count of positions: 0/0 = NaN without classes
    return q, np.ones(p.shape[:-1], bool), np.ones(p.shape, bool), D


class CrossEntropyLoss(Module):
    r"""Cross-entropy between logits and class targets (indices or probabilities), PyTorch's
    layout and semantics, fused with log-softmax so the backward needs no softmax Jacobian.

    Shapes, the CLASS AXIS 1 as in PyTorch: logits (N, C), (N, C, d1, ...) or unbatched (C,).
    Targets are either class indices, integers in [0, C) or ``ignore_index``, of the logits'
    shape without the class axis ((N,), (N, d1, ...) or 0-d); or class probabilities, floating,
    of the logits' own shape. Transformer logits (B, T, V) go in as ``logits.reshape(-1, V)``
    with ``targets.reshape(-1)``.

    With w the class weights (``weight``, all ones by default), eps = ``label_smoothing``, and
    for every position n (the class axis moved last; sums over classes c), either kind of target
    becomes target weights q[n, c] and a mean's denominator D::

        class index y_n:    q[n, c] = (1 - eps) * w[y_n] * [c == y_n] + (eps / C) * w[c]
                            q[n]    = 0 where y_n == ignore_index   (the position is not kept)
                            D       = sum_(n kept) w[y_n]           the weight of the kept targets
        probabilities p[n]: q[n, c] = w[c] * p'[n, c],   p' = (1 - eps) * p + eps / C
                            D       = the number of positions (numel / C)

        logp[n]  = log_softmax(logits[n])                                 (C,)
        l[n]     = -sum_c q[n, c] * logp[n, c]
        mean: sum_n l[n] / D      sum: sum_n l[n]      none: l (the positions' shape)

        dlogits[n] = g[n] * (softmax(logits[n]) * sum_c q[n, c] - q[n])

    where g[n] is dloss / D (mean), dloss (sum) or the upstream gradient's entry n (none), and 0 on
    ignored positions. This is d l[n] / d logits[n] because d logp_c / d x_j = [c == j] - p_j.
    Without smoothing and weights it is the familiar softmax - onehot(y), or softmax - p for
    probabilities that sum to 1. With class indices the weighted mean divides by the weights of
    the kept targets, not by their number, and the smoothing term is divided by the same sum;
    with probabilities it divides by the number of positions: exactly as PyTorch does.

    PyTorch's edge cases, kept:

    - For a class index, l[n] adds the terms PyTorch adds: the target's, and every class's when
      smoothing. An ignored position adds exactly 0, and a logit of -inf in a class that is
      neither the target nor smoothed does not make the loss NaN. Probabilities add every
      class's term (a probability 0 at a logit of -inf gives NaN, as in PyTorch).
    - The mean when D = 0 (every target ignored, or the kept targets' weights sum to 0) is NaN
      (0/0), and so is its gradient at every kept position; ignored positions get 0. (Negative
      weights that cancel to D = 0 are NaN here too, where PyTorch's order of operations can
      give +-inf instead.)
    - No classes (C = 0): a class index can only be ``ignore_index``; with smoothing every loss
      is NaN (PyTorch's smoothing term is (eps / C) * 0). Logits (N, 0, d1, ...) with class
      indices are refused, as PyTorch refuses them. With probabilities the mean is 0/0 = NaN.
    - Probabilities are not checked: they may be negative or not sum to 1, and the loss is the
      formula above all the same (PyTorch does not check them either). ``ignore_index`` does not
      apply to them; PyTorch refuses probabilities when ``ignore_index`` >= 0, and so does this.
    - Probabilities are used in the logits' computing dtype and the loss has the logits' dtype
      (PyTorch promotes float32 logits with float64 probabilities to a float64 loss).

    ``z_loss`` (default 0: none) adds PaLM's auxiliary z-loss (Chowdhery et al. 2022; Wortsman
    et al. 2023 use it to keep the output logits from drifting), z_loss * log(Z)**2 per kept
    position, with Z = sum_c exp(logits[n, c]) the softmax's normaliser; it pulls log Z
    towards 0 without changing the softmax itself. Over the kept positions K (every position
    with probabilities; the targets that are not ``ignore_index`` with class indices), with
    lse[n] = logsumexp(logits[n])::

        mean: ... + z_loss * sum_(n kept) lse[n]**2 / |K|     the plain mean over kept positions,
                                                               not divided by the class weights D
        sum:  ... + z_loss * sum_(n kept) lse[n]**2
        none: l[n] + z_loss * lse[n]**2                        0 at an ignored position

        dlogits[n] += gz[n] * 2 * z_loss * lse[n] * softmax(logits[n])

    with gz[n] = dloss / |K| (mean), dloss (sum) or the upstream gradient's entry n (none), 0 on
    ignored positions: d lse / d logits = softmax(logits), so the softmax factor multiplies
    2 * lse. Class weights and label smoothing do not enter the z-loss. With no kept position
    the mean's z-loss is 0/0 = NaN, as the mean itself is. PyTorch has no z-loss; the same
    number is ``F.cross_entropy(...) + z_loss * torch.logsumexp(logits, 1)[kept].pow(2).mean()``.

    ``backward(dloss=None)``: for "mean" and "sum" a scalar (None means 1.0); for "none" an
    array of the loss's shape (required). It returns dlogits only (targets are data). Cache:
    logp, q, the kept positions and D (and lse with a z-loss).
    """

    weight: np.ndarray | None  # a buffer: the class weights, (C,)

    def __init__(self, weight: ArrayLike | None = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0, z_loss: float = 0.0) -> None:
        who = "CrossEntropyLoss"
        if weight is not None:
            weight = as_array(weight, who, "weight")
            if not np.issubdtype(weight.dtype, np.floating):
                raise TypeError(f"{who}: expected a floating-point weight of shape (C,), one per class, "
                                f"got dtype {weight.dtype}")
            if weight.ndim != 1:
                raise ValueError(f"{who}: expected weight of shape (C,), one per class, got shape {weight.shape}")
            weight = weight.copy()
        self.ignore_index = integer(ignore_index, "ignore_index", who)
        self.reduction = _reduction(reduction, who)
        self.label_smoothing = real_number(label_smoothing, "label_smoothing", who, low=0.0, high=1.0)
        self.z_loss = real_number(z_loss, "z_loss", who, low=0.0)
        self.register_buffer("weight", weight)

    def extra_repr(self) -> str:
        return (f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, "
                f"label_smoothing={self.label_smoothing}" + ("" if self.weight is None else ", weight=(C,)")
                + (f", z_loss={self.z_loss:g}" if self.z_loss else ""))

    def _inputs(self, logits: ArrayLike, targets: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check the arguments; return logits with the class axis last (*, C), the targets (class
        indices (*), or probabilities (*, C) with the class axis last), and the logits as given."""
        who = "CrossEntropyLoss"
        logits = float_input(logits, who)
        if logits.ndim < 1:
            raise ValueError(f"{who}: expected logits of shape (C,), (N, C) or (N, C, d1, ...), got a scalar")
        C = logits.shape[0] if logits.ndim == 1 else logits.shape[1]
        index_shape = () if logits.ndim == 1 else logits.shape[:1] + logits.shape[2:]
        if self.weight is not None and self.weight.shape != (C,):
            raise ValueError(f"{who}: expected weight of shape ({C},), one per class of the logits "
                             f"{logits.shape}, got {self.weight.shape}")
        t = as_array(targets, who, "targets")
        floating = np.issubdtype(t.dtype, np.floating)
        expected = (f"expected class indices (integers) of shape {index_shape} or class probabilities "
                    f"(floating) of the logits' shape {logits.shape}")
        if t.shape == logits.shape and not floating:
            raise TypeError(f"{who}: {expected}, got targets of the logits' shape with dtype {t.dtype}")
        if t.shape == index_shape and floating:
            raise TypeError(f"{who}: {expected}, got targets of shape {t.shape} with dtype {t.dtype}")
        if t.shape not in (index_shape, logits.shape):
            raise ValueError(f"{who}: for logits of shape {logits.shape} (classes on axis "
                             f"{0 if logits.ndim == 1 else 1}) {expected}, got targets of shape {t.shape}")
        x = logits[None] if logits.ndim == 1 else logits  # (N, C, ...)
        if floating:
            if self.ignore_index >= 0:
                raise ValueError(f"{who}: expected ignore_index < 0 with class probabilities as targets "
                                 f"(it applies to class indices only, as in PyTorch), got {self.ignore_index}")
            p = t[None] if t.ndim == 1 else t  # (N, C, ...)
            return np.moveaxis(x, 1, -1), np.moveaxis(p, 1, -1), logits
        if C == 0 and logits.ndim > 2 and t.size:
            raise ValueError(f"{who}: expected at least one class on axis 1 for targets of shape {t.shape}, "
                             f"got logits of shape {logits.shape} (PyTorch refuses them too)")
        y = index_input(t, C, who, "target", allowed=self.ignore_index, among="the logits' class axis")
        return np.moveaxis(x, 1, -1), y.reshape(x.shape[:1] + x.shape[2:]), logits

    def forward(self, logits: ArrayLike, targets: ArrayLike) -> np.ndarray:
        x, t, logits = self._inputs(logits, targets)  # x (*, C); t: class indices (*) or probabilities (*, C)
        dtype = compute_dtype(logits.dtype)
        x = x.astype(dtype, copy=False)  # float16 is computed in float32
        C = x.shape[-1]
        w = np.ones(C, dtype) if self.weight is None else self.weight.astype(dtype)  # (C,)
        eps = self.label_smoothing
        probabilities = t.ndim == x.ndim
        if probabilities:
            q, kept, terms, D = class_probability_weights(t.astype(dtype), w, eps)  # (*, C), (*), (*, C), scalar
        else:
            q, kept, terms, D = class_index_weights(t, w, eps, self.ignore_index)  # (*, C), (*), (*, C), scalar
        logp = log_softmax(x, axis=-1)  # (*, C)
        with np.errstate(invalid="ignore"):  # 0 * -inf: dropped where PyTorch adds no such term, else NaN
            loss = -np.sum(np.where(terms, q * logp, 0.0), axis=-1)  # (*), l[n]
        lse = z = None
        if self.z_loss:
            lse = np.where(kept, logsumexp(x), 0.0)  # (*), log Z[n]; 0 where ignored
            z = self.z_loss * lse * lse  # (*), z_loss * log(Z[n])**2
        out: Any  # the loss per position for "none", else a scalar
        if self.reduction == "none":
            out = (loss if z is None else loss + z).reshape(logits.shape[:1] + logits.shape[2:]
                                                             if logits.ndim > 1 else ())
        elif self.reduction == "sum":
            out = np.sum(loss) + (0.0 if z is None else np.sum(z))
        else:
            out = np.sum(loss) / D if D else np.nan  # nothing kept (or kept weights summing to 0): 0/0
            if z is not None:
                K = int(np.sum(kept))
                out = out + (np.sum(z) / K if K else np.nan)  # the z-loss's mean over the kept positions
        if eps and not C and not probabilities:
            out = np.full(np.shape(out), np.nan)  # PyTorch's smoothing term (eps / C) * 0 without classes
        self._cache = (logp, q, kept, D, lse, np.shape(out), logits.shape, logits.dtype)
        return np.asarray(out, dtype=logits.dtype).copy()

    def backward(self, dloss: ArrayLike | None = None) -> np.ndarray:
        logp, q, kept, D, lse, out_shape, in_shape, in_dtype = self._cached()
        gz = None  # the z-loss's share of the upstream gradient per position
        if self.reduction == "none":
            if dloss is None:
                raise ValueError("CrossEntropyLoss(reduction='none').backward: expected an upstream gradient "
                                 f"of the loss's shape {out_shape}, got None")
            g = gz = check_upstream(dloss, out_shape, "CrossEntropyLoss").reshape(kept.shape)  # (*)
        else:
            g = gz = _scalar_upstream(1.0 if dloss is None else dloss, "CrossEntropyLoss")
            if self.reduction == "mean":
                K = int(np.sum(kept))
                gz = g / K if K else np.full_like(g, np.nan, float)  # the z-loss's mean over kept positions
                g = g / D if D else np.full_like(g, np.nan, float)  # the mean is 0/0: NaN wherever a target is kept
        g = np.where(kept, g, 0.0).astype(logp.dtype)  # (*)
        p = np.exp(logp)  # (*, C), softmax(logits)
        dx = g[..., None] * (p * q.sum(axis=-1, keepdims=True) - q)  # (*, C)
        if lse is not None:
            gz = np.where(kept, gz, 0.0).astype(logp.dtype)  # (*)
            dx = dx + (gz * 2.0 * self.z_loss * lse)[..., None] * p  # (*, C), d(z_loss * lse**2) = 2 z lse softmax
        dx = np.moveaxis(dx, -1, 1)  # (N, C, ...)
        return dx.reshape(in_shape).astype(in_dtype, copy=False)


class MSELoss(Module):
    r"""Squared error per element, averaged, summed or kept, as ``torch.nn.MSELoss``.

    Shapes: pred and target the same shape, N elements; ``reduction`` "mean" (the default),
    "sum" or "none"::

        l     = (pred - target)**2                      per element, the shape of pred
        mean: sum(l) / N      sum: sum(l)      none: l
        dpred = g * 2 * (pred - target)                 the shape of pred

    where g is dloss / N (mean), dloss (sum) or the upstream gradient itself (none: an array of
    pred's shape, one entry per element). ``backward(dloss=None)``: for "mean" and "sum" a
    scalar (None means 1.0); for "none" an array of the loss's shape (required). It returns
    dpred only (the target is data), in pred's dtype. Over no elements (N = 0) the mean is NaN
    and the sum 0, as in PyTorch. Cache: pred - target.
    """

    def __init__(self, reduction: str = "mean") -> None:
        self.reduction = _reduction(reduction, "MSELoss")

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"

    def forward(self, pred: ArrayLike, target: ArrayLike) -> np.ndarray:
        pred = float_input(pred, "MSELoss")
        target = float_input(target, "MSELoss")
        if pred.shape != target.shape:
            raise ValueError(f"MSELoss: expected a target of the same shape as pred {pred.shape}, "
                             f"got {target.shape}")
        diff = pred - target  # (*)
        loss = diff * diff  # (*), l
        if self.reduction == "sum":
            loss = np.sum(loss)
        elif self.reduction == "mean":
            loss = np.sum(loss) / diff.size if diff.size else np.nan
        self._cache = (diff, pred.dtype)
        return np.asarray(loss, dtype=pred.dtype)

    def backward(self, dloss: ArrayLike | None = None) -> np.ndarray:
        diff, pred_dtype = self._cached()
        if self.reduction == "none":
            if dloss is None:
                raise ValueError("MSELoss(reduction='none').backward: expected an upstream gradient "
                                 f"of the loss's shape {diff.shape}, got None")
            g = check_upstream(dloss, diff.shape, "MSELoss")  # (*)
        else:
            g = _scalar_upstream(1.0 if dloss is None else dloss, "MSELoss")
            if self.reduction == "mean":
                g = g / max(diff.size, 1)
        return (g * 2.0 * diff).astype(pred_dtype, copy=False)  # (*)
