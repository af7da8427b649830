"""Soft-capping: a smooth bound on logits, y = c * tanh(x / c), as Gemma 2 applies it to its
attention scores and to its final logits.

The arithmetic is written once, as ``softcap`` and ``softcap_backward``; ``SoftCap`` is the
layer, and the attention (``attn_softcap=``) and the models (``logit_softcap=``) call the
same two functions.
"""

from typing import Any

import numpy as np

from .._array import real_number, sech2
from ..i18n import translator
from .activations import _Elementwise

_ = translator("cli")


def softcap_value(cap: object, name: str, who: str, allow_none: bool = False) -> float | None:
    """``cap`` checked: a finite number > 0 (or None when ``allow_none``); ``TypeError`` for a
    non-number, ``ValueError`` for 0, a negative number, inf or NaN."""
    value = real_number(cap, name, who, allow_none=allow_none)  # a finite number (or None)
    if value is not None and value <= 0.0:
        raise ValueError(_("{who}: {name} must be a number > 0 (the cap c in c * tanh(x / c)), got {value}")
                         .format(who=who, name=name, value=value))
    return value


def softcap(x: np.ndarray, cap: float) -> tuple[np.ndarray, np.ndarray]:
    """(y, slope): y = cap * tanh(x / cap) and its slope dy/dx = 1 - tanh(x / cap)**2, computed
    as sech(x / cap)**2 (``sech2``: no cancellation where tanh is near +-1). The slope is
    1 - (y / cap)**2, not 1 - y**2: the cap divides inside and multiplies outside."""
    t = x / cap  # (*)
    return cap * np.tanh(t), sech2(t)  # (*), (*)


def softcap_backward(dy: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """dx = dy * (1 - tanh(x / cap)**2): the chain rule through cap * tanh(x / cap), where the
    outer cap and the inner 1 / cap cancel."""
    return dy * slope  # (*)


class SoftCap(_Elementwise):
    r"""Soft-capping: y = c * tanh(x / c), any shape, element by element.

    Forward and backward, with t = x / c::

        y  = c * tanh(t)                      (*)    |y| < c, and y ~ x where |x| << c
        dx = dy * (1 - tanh(t)**2)            (*)    = dy * (1 - (y / c)**2)

    The c of the forward and the 1/c of t cancel in the slope; writing it as 1 - y**2 (the
    slope of a plain tanh) is the mistake to avoid. The cap bounds the output smoothly: a logit
    can approach c but never pass it, and the gradient fades as it nears it. Gemma 2 caps its
    attention scores at c = 50 and its final logits at c = 30 (the Gemma 2 report, arXiv
    2408.00118; the published configuration's ``attn_logit_softcapping`` and
    ``final_logit_softcapping``); in normcore
    the attention takes ``attn_softcap=`` and the models ``logit_softcap=``, which use the
    same ``softcap`` and ``softcap_backward``. ``cap`` must be a finite number > 0. PyTorch
    has no such layer: ``c * torch.tanh(x / c)`` computes it. No parameters; cache: the slope.
    """

    def __init__(self, cap: float) -> None:
        value = softcap_value(cap, "cap", "SoftCap")
        assert value is not None  # None is refused without allow_none
        self.cap: float = value

    def extra_repr(self) -> str:
        return f"cap={self.cap:g}"

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        return softcap(x, self.cap)

    def _df(self, dy: np.ndarray, slope: np.ndarray) -> np.ndarray:
        return softcap_backward(dy, slope)
