"""Learning-rate schedules: small callables ``schedule(step) -> lr``, with step counted from 0.

    constant(lr)                                   lr
    linear_warmup(lr, warmup)                      lr * min(1, (step + 1) / warmup)
    warmup_inverse_sqrt(lr, warmup)                lr * min((step + 1) / warmup, sqrt(warmup / (step + 1)))
    warmup_cosine(lr, warmup, total, min_lr=0)     linear warmup, then
                                                   min_lr + (lr - min_lr) * (1 + cos(pi * progress)) / 2,
                                                   progress = (step + 1 - warmup) / (total - warmup), at most 1

Each reaches ``lr`` at step warmup - 1. Warmup matters most for Post-Norm: at initialisation
its gradients near the output are large, and a full-size first step can throw it off.
"""

import math
from collections.abc import Callable

from .._array import positive_int, real_number


class Schedule:
    """A named ``step -> lr`` function; ``repr`` gives the name, e.g. for a plot's legend."""

    def __init__(self, name: str, fn: Callable[[int], float]) -> None:
        self.name, self._fn = name, fn

    def __call__(self, step: int) -> float:
        if step < 0:
            raise ValueError(f"schedule step must be >= 0, got {step}")
        return float(self._fn(step))

    def __repr__(self) -> str:
        return self.name


def _checked(lr: float, warmup: int, who: str) -> tuple[float, int]:
    """lr as a number >= 0 and warmup as a positive int, or an error saying so."""
    return real_number(lr, "lr", who, low=0.0), positive_int(warmup, "warmup", who)


def _warmup_factor(step: int, warmup: int) -> float:
    return min(1.0, (step + 1) / warmup)


def constant(lr: float) -> Schedule:
    """lr at every step."""
    lr = real_number(lr, "lr", "constant", low=0.0)
    return Schedule(f"constant(lr={lr:g})", lambda step: lr)


def linear_warmup(lr: float, warmup: int) -> Schedule:
    """lr * min(1, (step + 1) / warmup): a linear ramp over ``warmup`` steps, then constant."""
    lr, warmup = _checked(lr, warmup, "linear_warmup")
    return Schedule(f"linear_warmup(lr={lr:g}, warmup={warmup})", lambda step: lr * _warmup_factor(step, warmup))


def warmup_inverse_sqrt(lr: float, warmup: int) -> Schedule:
    """Linear warmup, then lr * sqrt(warmup / (step + 1)) (the original Transformer's schedule)."""
    lr, warmup = _checked(lr, warmup, "warmup_inverse_sqrt")
    return Schedule(f"warmup_inverse_sqrt(lr={lr:g}, warmup={warmup})",
                    lambda step: lr * min((step + 1) / warmup, math.sqrt(warmup / (step + 1))))


def warmup_cosine(lr: float, warmup: int, total: int, min_lr: float = 0.0) -> Schedule:
    """Linear warmup, then a half cosine from lr down to min_lr, reached at step total - 1."""
    lr, warmup = _checked(lr, warmup, "warmup_cosine")
    total = positive_int(total, "total", "warmup_cosine")
    min_lr = real_number(min_lr, "min_lr", "warmup_cosine", low=0.0)
    if total <= warmup:
        raise ValueError(f"warmup_cosine needs total > warmup, got total={total}, warmup={warmup}")

    def fn(step: int) -> float:
        if step < warmup:
            return lr * _warmup_factor(step, warmup)
        progress = min(1.0, (step + 1 - warmup) / (total - warmup))
        return min_lr + (lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))

    return Schedule(f"warmup_cosine(lr={lr:g}, warmup={warmup}, total={total}, min_lr={min_lr:g})", fn)
