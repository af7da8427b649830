"""SGD, Adam and AdamW with PyTorch's update rules, and clipping by the global gradient norm.

An optimizer holds a list of ``Parameter`` and updates ``p.data`` in place from ``p.grad`` on
``step()``. ``lr`` is a plain attribute, so a schedule can set it before each step.
"""

import math
from collections.abc import Iterable

import numpy as np

from .._array import real_number
from ..module import Module, Parameter

Params = Module | Iterable[Parameter]
"""What an optimizer or a gradient-norm function takes: a Module (its parameters) or Parameters."""


def _param_list(params: Params, who: str) -> list[Parameter]:
    """A Module's parameters, or a list of Parameter without repeats, in order."""
    if isinstance(params, Module):
        return params.parameters()
    out, seen = [], set()
    for i, p in enumerate(params):
        if not isinstance(p, Parameter):
            raise TypeError(f"{who} takes Parameters (e.g. model.parameters()), "
                            f"got {type(p).__name__} at position {i}")
        if id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    if not out:
        raise ValueError(f"{who} expected at least one Parameter to optimize (e.g. model.parameters()), "
                         "got an empty parameter list")
    return out


def grad_norm(params: Params) -> float:
    """The global gradient norm sqrt(sum over every parameter of sum(grad**2))."""
    params = _param_list(params, "grad_norm")
    return float(np.sqrt(sum(float(np.sum(np.square(p.grad, dtype=np.float64))) for p in params)))


def clip_grad_norm(params: Params, max_norm: float) -> float:
    """Scale every gradient by max_norm / (total_norm + 1e-6) when that is below 1; return total_norm.

    total_norm is the global norm before clipping (as ``torch.nn.utils.clip_grad_norm_``
    returns it). Clipping rescales all gradients together, so the update keeps its direction.
    """
    params = _param_list(params, "clip_grad_norm")
    if max_norm != math.inf:  # inf only measures the norm, as PyTorch allows
        max_norm = real_number(max_norm, "max_norm", "clip_grad_norm")
    if max_norm <= 0:
        raise ValueError(f"clip_grad_norm: max_norm must be positive, got {max_norm}")
    total = grad_norm(params)
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for p in params:
            p.grad *= coef
    return total


class Optimizer:
    """Bookkeeping shared by the optimizers: the parameter list, ``lr``, the step count, state."""

    def __init__(self, params: Params, lr: float, weight_decay: float = 0.0) -> None:
        name = type(self).__name__
        self.lr = real_number(lr, "lr", name, low=0.0)
        self.weight_decay = real_number(weight_decay, "weight_decay", name, low=0.0)
        self.params = _param_list(params, name)
        self.step_count = 0
        self.state: list[dict[str, np.ndarray]] = [{} for _ in self.params]

    def zero_grad(self) -> None:
        """Reset the gradient of every parameter to zero."""
        for p in self.params:
            p.grad[...] = 0

    def step(self) -> None:
        """Update every parameter once from its current gradient."""
        self.step_count += 1
        for p, state in zip(self.params, self.state):
            self._update(p, p.grad, state)

    def _update(self, p: Parameter, g: np.ndarray, state: dict[str, np.ndarray]) -> None:
        raise NotImplementedError


class SGD(Optimizer):
    r"""Stochastic gradient descent with momentum and (coupled) weight decay.

    As ``torch.optim.SGD``::

        g   = grad + weight_decay * p
        buf = g                        on the first step
        buf = momentum * buf + g       afterwards           (momentum > 0 only)
        p   = p - lr * buf             (p - lr * g without momentum)
    """

    def __init__(self, params: Params, lr: float, momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        super().__init__(params, lr, weight_decay)
        self.momentum = real_number(momentum, "momentum", "SGD", low=0.0)

    def _update(self, p: Parameter, g: np.ndarray, state: dict[str, np.ndarray]) -> None:
        g = g + self.weight_decay * p.data
        if self.momentum:
            state["buf"] = g.copy() if "buf" not in state else self.momentum * state["buf"] + g
            g = state["buf"]
        p.data -= self.lr * g


class Adam(Optimizer):
    r"""Adam (Kingma and Ba, 2015), as ``torch.optim.Adam``; t counts steps from 1::

        g     = grad + weight_decay * p                     weight decay added to the gradient
        m     = beta1 * m + (1 - beta1) * g                 first moment, starts at 0
        v     = beta2 * v + (1 - beta2) * g**2              second moment, starts at 0
        m_hat = m / (1 - beta1**t),  v_hat = v / (1 - beta2**t)    bias corrections
        p     = p - lr * m_hat / (sqrt(v_hat) + eps)

    With weight decay added to g, Adam divides the decay by sqrt(v_hat) too, so parameters
    with large gradients are barely decayed; AdamW fixes that.
    """

    decoupled = False

    def __init__(self, params: Params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        super().__init__(params, lr, weight_decay)
        name = type(self).__name__
        if not isinstance(betas, (tuple, list)):
            raise TypeError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        if len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = tuple(real_number(b, f"betas[{i}]", name, low=0.0) for i, b in enumerate(betas))
        if not all(b < 1.0 for b in self.betas):
            raise ValueError(f"{name}: betas must lie in [0, 1), got {betas}")
        self.eps = real_number(eps, "eps", name, low=0.0)

    def _update(self, p: Parameter, g: np.ndarray, state: dict[str, np.ndarray]) -> None:
        beta1, beta2 = self.betas
        t = self.step_count
        if self.decoupled:
            p.data *= 1.0 - self.lr * self.weight_decay
        else:
            g = g + self.weight_decay * p.data
        m = state["m"] = beta1 * state.get("m", 0.0) + (1.0 - beta1) * g
        v = state["v"] = beta2 * state.get("v", 0.0) + (1.0 - beta2) * g * g
        m_hat = m / (1.0 - beta1**t)
        v_hat = v / (1.0 - beta2**t)
        p.data -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov and Hutter, 2019), as ``torch.optim.AdamW``::

        p = p * (1 - lr * weight_decay)          decay first, not through the gradient
        then Adam's update with g = grad         (m, v, m_hat, v_hat as in ``Adam``)

    The decay shrinks every weight by the same factor whatever its gradient history.
    """

    decoupled = True

    def __init__(self, params: Params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.01) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)
