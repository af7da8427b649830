"""Dropout, in its inverted form: the scaling happens in training, evaluation is the identity."""

import numpy as np
from numpy.typing import ArrayLike

from .._array import RngLike, check_upstream, compute_dtype, float_input, make_rng, real_number
from ..module import Module


class Dropout(Module):
    r"""Inverted dropout: zero each unit with probability p and scale the kept ones by 1/(1 - p).

    Training::

        mask ~ Bernoulli(1 - p)   i.i.d., one per element, drawn once per forward
        y  = x * mask / (1 - p)          so that E[y] = x
        dx = dy * mask / (1 - p)         the *same* mask as the forward

    Evaluation (and p = 0): y = x, dx = dy. p = 1 gives zeros (and zero gradients).
    Without the 1/(1 - p) in training the expected activation shrinks by (1 - p) and the
    network sees larger inputs at evaluation than it was trained on.

    As ``torch.nn.Dropout`` does, evaluation (and p = 0) returns the input array itself, not a
    copy: writing into that output writes into the input. Nothing of it is cached (only its
    shape and dtype), so that cannot change a later backward. y and dx have the input's dtype
    (float16 is computed in float32). ``rng`` is None, an int seed, or a ``np.random.Generator``.
    Cache: the mask.
    """

    def __init__(self, p: float = 0.5, rng: RngLike = None) -> None:
        p = real_number(p, "p", "Dropout")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.rng = make_rng(rng)

    def extra_repr(self) -> str:
        return f"p={self.p}"

    @property
    def scale(self) -> float:
        """1 / (1 - p), the factor kept units are multiplied by (0 when p = 1)."""
        return 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)

    def forward(self, x: ArrayLike) -> np.ndarray:
        x = float_input(x, "Dropout")
        if not self.training or self.p == 0.0:
            self._cache = (None, x.shape, x.dtype)
            return x  # the identity, as in PyTorch: the very same array
        mask = self.rng.random(x.shape) >= self.p  # (*), True for the units kept
        xc = x.astype(compute_dtype(x.dtype), copy=False)
        self._cache = (mask, x.shape, x.dtype)
        return (xc * mask * xc.dtype.type(self.scale)).astype(x.dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        mask, shape, in_dtype = self._cached()
        dy = check_upstream(dy, shape, "Dropout")
        if mask is None:
            return dy.astype(in_dtype, copy=False)  # dx = dy
        dy = dy.astype(compute_dtype(in_dtype), copy=False)
        return (dy * mask * dy.dtype.type(self.scale)).astype(in_dtype, copy=False)
