"""SGD, Adam and AdamW with PyTorch's update rules, and clipping by the global gradient norm.

An optimizer holds parameter groups, as ``torch.optim`` does: lists of ``Parameter`` with their
own hyperparameters (lr, weight_decay, ...), and updates ``p.data`` in place from ``p.grad`` on
``step()``. Setting ``optimizer.lr`` sets every group's lr, so a schedule can set it before each
step. ``param_groups_no_decay(model, weight_decay)`` builds the usual two groups: weight decay
on the weight matrices only.
"""

import copy
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from .._array import as_array, flag, real_number
from ..module import Module, Parameter
from ..norms.base import _Norm

Params = Module | Iterable[Parameter]
"""What an optimizer or a gradient-norm function takes: a Module (its parameters) or Parameters."""
ParamsOrGroups = Params | Iterable[Mapping[str, Any]]
"""What an optimizer takes: one group's parameters, or parameter groups (dicts with a "params" key)."""


def _param_list(params: Params | Parameter, who: str) -> list[Parameter]:
    """A Module's parameters, or a list of Parameter without repeats, in order (one Parameter: [it])."""
    if isinstance(params, Module):
        return params.parameters()
    if isinstance(params, Parameter):
        return [params]
    if isinstance(params, (set, frozenset)) or not isinstance(params, Iterable):
        raise TypeError(f"{who} takes Parameters in an ordered collection (e.g. model.parameters()), "
                        f"got {type(params).__name__}")
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


def _groups(params: ParamsOrGroups, who: str) -> list[Mapping[str, Any]]:
    """The parameter groups an optimizer is given: a list of dicts as is, or one group holding a
    Module's parameters or an iterable of Parameter."""
    if isinstance(params, (Module, Parameter, set, frozenset)) or not isinstance(params, Iterable):
        return [{"params": params}]  # _param_list accepts it or says what it expected
    items = list(params)
    groups = [item for item in items if isinstance(item, Mapping)]
    if not groups:
        return [{"params": items}]  # Parameters (an empty list: _param_list says it is empty)
    if len(groups) != len(items):
        raise TypeError(f"{who} takes either Parameters or parameter-group dicts, not a mix of both")
    return groups


def param_groups_no_decay(model: Module, weight_decay: float) -> list[dict[str, Any]]:
    """Two parameter groups for an optimizer: weight decay on the weight matrices, none elsewhere.

    The convention of GPT-2 and minGPT (and most training code since): decay the parameters with
    two or more dimensions (the weights of Linear, Embedding, attention projections) and not
    biases, nor any parameter of a norm module (BatchNorm, LayerNorm, RMSNorm, GroupNorm,
    InstanceNorm, DyT: gamma, beta, DyT's alpha), whatever its shape. Decaying gamma pulls a
    norm's output scale towards zero, and decaying a bias pulls its shift towards zero; neither
    is a capacity that decay is meant to limit. Groups with no parameters are left out::

        opt = AdamW(param_groups_no_decay(model, 0.1), lr=1e-3)   # decay 0.1 on matrices only
    """
    if not isinstance(model, Module):
        raise TypeError(f"param_groups_no_decay takes a Module, got {type(model).__name__}")
    weight_decay = real_number(weight_decay, "weight_decay", "param_groups_no_decay", low=0.0)
    in_norms = {id(p) for _, m in model.named_modules() if isinstance(m, _Norm) for p in m.parameters()}
    decay = [p for p in model.parameters() if p.ndim >= 2 and id(p) not in in_norms]
    taken = {id(p) for p in decay}
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": [p for p in model.parameters() if id(p) not in taken], "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]


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
    """Parameter groups, their hyperparameters, per-parameter state, and state dicts.

    As ``torch.optim``: ``params`` is a Module, an iterable of Parameter (one group), or a list
    of dicts, each a group ``{"params": [...], "lr": ..., ...}`` whose missing hyperparameters
    default to the constructor's (``optimizer.defaults``)::

        AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=1e-3)

    ``param_groups`` is that list of dicts, each with ``"params"`` and every hyperparameter;
    ``g["lr"] = ...`` on a group takes effect at the next ``step()``, which checks every group's
    values before it changes anything. ``optimizer.lr`` is a convenience for schedules
    (``normcore.fit`` sets it before each step): reading it gives the first group's lr, setting it
    sets every group's lr (so it overwrites per-group lrs; scale them yourself for ratios).

    ``load_state_dict`` keeps a saved group's keys that normcore does not use (``initial_lr``,
    which torch's learning-rate schedulers add to every group, ``param_names``) and
    ``state_dict`` gives them back, as torch does.

    Differences from torch, on purpose: a group with no parameters and an unknown key in a group
    given to the constructor or to ``add_param_group`` (a misspelt ``"weight_decy"``) raise instead
    of passing silently; a Parameter repeated within a group is kept once (torch warns).
    """

    def __init__(self, params: ParamsOrGroups, defaults: dict[str, Any]) -> None:
        self.defaults = self._checked_hyper(defaults, type(self).__name__)
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[Parameter, dict[str, Any]] = {}  # per parameter, filled by its first step
        for group in _groups(params, type(self).__name__):
            self._add_group(group, type(self).__name__)

    # --- groups -------------------------------------------------------------------------------
    def _checked_hyper(self, hyper: Mapping[str, Any], who: str) -> dict[str, Any]:
        """Every hyperparameter of ``hyper`` checked (``lr`` >= 0, ...); subclasses add theirs."""
        return {"lr": real_number(hyper["lr"], "lr", who, low=0.0),
                "weight_decay": real_number(hyper["weight_decay"], "weight_decay", who, low=0.0)}

    def _checked_group(self, group: object, who: str) -> dict[str, Any]:
        """A new group dict: its parameters as a list, every hyperparameter (defaults filled in) checked."""
        if not isinstance(group, Mapping):
            raise TypeError(f"{who}: a parameter group must be a dict with a 'params' key, got {type(group).__name__}")
        if "params" not in group:
            raise KeyError(f"{who}: a parameter group needs a 'params' key (its Parameters), got keys {list(group)}")
        unknown = [k for k in group if k != "params" and k not in self.defaults]
        if unknown:
            raise ValueError(f"{who}: unknown key(s) {unknown} in a parameter group; "
                             f"expected 'params' and hyperparameters among {list(self.defaults)}")
        hyper = self._checked_hyper({**self.defaults, **group}, who)
        return {"params": _param_list(group["params"], who), **hyper}

    def add_param_group(self, param_group: Mapping[str, Any]) -> None:
        """Append a group (as in the constructor); raises and changes nothing if it is invalid or
        shares a Parameter with an existing group."""
        self._add_group(param_group, f"{type(self).__name__}.add_param_group")

    def _add_group(self, param_group: Mapping[str, Any], who: str) -> None:
        group = self._checked_group(param_group, who)
        taken = {id(p) for p in self.params}
        if any(id(p) in taken for p in group["params"]):
            raise ValueError(f"{who}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    @property
    def params(self) -> list[Parameter]:
        """Every parameter, group after group (the order of the indices in ``state_dict``)."""
        return [p for group in self.param_groups for p in group["params"]]

    @property
    def lr(self) -> float:
        """The first group's lr (all groups' after ``optimizer.lr = value``)."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        value = real_number(value, "lr", type(self).__name__, low=0.0)
        for group in self.param_groups:
            group["lr"] = value

    # --- the update ---------------------------------------------------------------------------
    def zero_grad(self) -> None:
        """Reset the gradient of every parameter to zero."""
        for p in self.params:
            p.grad[...] = 0

    def step(self) -> None:
        """Update every parameter once from its current gradient, with its group's hyperparameters."""
        name = type(self).__name__
        groups = [self._checked_hyper(g, f"{name}.step: param_groups[{i}]") for i, g in enumerate(self.param_groups)]
        for group, hyper in zip(self.param_groups, groups):
            for p in group["params"]:
                self._update(p, p.grad, self.state.setdefault(p, {}), **hyper)

    _update: Callable[..., None]
    """``_update(p, grad, state, **hyper)``: one parameter's update with its group's hyperparameters."""

    # --- state dicts --------------------------------------------------------------------------
    TORCH_FLAGS: dict[str, tuple[Any, ...]] = {"foreach": (None, False, True), "differentiable": (False,),
                                                "fused": (None, False)}
    """Keys of a torch state dict's groups that choose torch's implementation, not the update:
    accepted at these values (the behaviour normcore has) and not kept."""
    LOAD_DEFAULTS: dict[str, Any] = {}
    """Hyperparameters a saved group may lack (saved before torch had them): these values, as
    torch's ``__setstate__`` fills them in."""

    def _state_keys(self, hyper: Mapping[str, Any]) -> tuple[str, ...]:
        """The keys of a parameter's state once it has taken a step in a group with ``hyper``."""
        return ()

    def state_dict(self) -> dict[str, Any]:
        """torch's layout, with copies: ``{"state": {index: {key: array}}, "param_groups": [{...,
        "params": [indices]}]}``, indices counting parameters group after group."""
        index = {id(p): i for i, p in enumerate(self.params)}
        state = {index[id(p)]: {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for k, v in s.items()}
                 for p, s in self.state.items() if s}
        groups = [{**copy.deepcopy({k: v for k, v in g.items() if k != "params"}),
                   "params": [index[id(p)] for p in g["params"]]} for g in self.param_groups]
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load hyperparameters and state from ``state_dict`` (this optimizer's own, or a torch
        optimizer's converted to NumPy); everything is checked before anything changes.

        As in torch, the saved groups' parameter indices are matched to this optimizer's
        parameters by position, group after group (the indices themselves may be any distinct
        numbers, e.g. 10, 11, ...), and each index's state goes to the parameter at its position.
        Every key of a saved group replaces this optimizer's group's keys, those normcore does
        not use included."""
        who = f"{type(self).__name__}.load_state_dict"
        if (not isinstance(state_dict, Mapping) or set(state_dict) != {"state", "param_groups"}
                or not isinstance(state_dict["state"], Mapping)):
            raise ValueError(f"{who} expects a dict with keys 'state' (a dict) and 'param_groups'")
        saved = list(state_dict["param_groups"])
        if not all(isinstance(g, Mapping) for g in saved):
            raise ValueError(f"{who}: param_groups must be a list of dicts")
        if [len(g.get("params", ())) for g in saved] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError(f"{who}: the saved groups' sizes {[len(g.get('params', ())) for g in saved]} "
                             f"differ from this optimizer's {[len(g['params']) for g in self.param_groups]}")
        loaded = [self._saved_group(g, f"{who}: param_groups[{i}]") for i, g in enumerate(saved)]
        saved_index = [i for g in saved for i in g["params"]]
        if len(set(saved_index)) != len(saved_index):
            raise ValueError(f"{who}: a parameter index appears twice in the saved groups")
        order = dict(zip(saved_index, self.params))  # saved index -> this optimizer's Parameter
        hyper_of = {i: g for g, s in zip(loaded, saved) for i in s["params"]}  # saved index -> its group
        state = {}
        for i, s in state_dict["state"].items():
            if i not in order:
                raise ValueError(f"{who}: state for parameter index {i!r}, which no group lists")
            state[order[i]] = self._checked_state(s, order[i], self._state_keys(hyper_of[i]), f"{who}: state[{i}]")
        for group, new in zip(self.param_groups, loaded):
            params = group["params"]
            group.clear()
            group.update(new, params=params)
        self.state = state

    def _saved_group(self, group: Mapping[str, Any], who: str) -> dict[str, Any]:
        """A saved group without its "params": its hyperparameters checked (missing ones that torch
        fills in filled in), torch's implementation flags checked and dropped, and any other key
        kept as it is (a copy)."""
        out, kept = dict(self.LOAD_DEFAULTS), {}
        for k, v in group.items():
            if k in self.defaults:
                out[k] = v
            elif k in self.TORCH_FLAGS:
                if v not in self.TORCH_FLAGS[k]:
                    raise ValueError(f"{who}: {k}={v!r} is not supported "
                                     f"(normcore implements {k}={self.TORCH_FLAGS[k][0]!r})")
            elif k != "params":
                kept[k] = copy.deepcopy(v)
        missing = [k for k in self.defaults if k not in out]
        if missing:
            raise ValueError(f"{who}: missing hyperparameter(s) {missing}")
        return {**self._checked_hyper(out, who), **kept}

    def _checked_state(self, s: Mapping[str, Any], p: Parameter, keys: tuple[str, ...], who: str) -> dict[str, Any]:
        """One parameter's saved state as copies in its dtype, its keys (``keys``, or none) and
        shapes checked."""
        present = {k for k, v in s.items() if v is not None} if isinstance(s, Mapping) else None
        if present is None or (present and present != set(keys)):
            raise ValueError(f"{who}: expected a dict with keys {list(keys)} (or none), got {s!r}")
        out: dict[str, Any] = {}
        for k, v in s.items():
            if v is None:  # torch's SGD keeps momentum_buffer=None without momentum
                continue
            if k == "step":
                step = float(np.asarray(v))
                if step != int(step) or step < 0:
                    raise ValueError(f"{who}: step must be a count >= 0, got {v!r}")
                out[k] = int(step)
                continue
            a = as_array(v, who, k)
            if a.shape != p.shape:
                raise ValueError(f"{who}: {k} must have the parameter's shape {p.shape}, got {a.shape}")
            out[k] = a.astype(p.dtype, copy=True)
        return out


class SGD(Optimizer):
    r"""Stochastic gradient descent with momentum (heavy-ball or Nesterov) and (coupled) weight decay.

    As ``torch.optim.SGD``, one step of each parameter p (its gradient ``grad``)::

        g   = grad                                  (-grad with maximize=True: ascend instead)
        g   = g + weight_decay * p
        buf = g                                     on the first step      } momentum > 0 only;
        buf = momentum * buf + (1 - dampening) * g  afterwards             } buf is the state
        g   = g + momentum * buf                    with nesterov=True, else g = buf
        p   = p - lr * g

    Nesterov momentum needs momentum > 0 and dampening = 0 (a ValueError otherwise, as torch).
    State per parameter, under torch's name: momentum_buffer (buf), only with momentum > 0.
    The arguments are torch's, in torch's order.
    """

    LOAD_DEFAULTS = {"nesterov": False, "maximize": False}

    def __init__(self, params: ParamsOrGroups, lr: float, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False) -> None:
        super().__init__(params, {"lr": lr, "momentum": momentum, "dampening": dampening,
                                  "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize})

    def _checked_hyper(self, hyper: Mapping[str, Any], who: str) -> dict[str, Any]:
        momentum = real_number(hyper["momentum"], "momentum", who, low=0.0)
        dampening = real_number(hyper["dampening"], "dampening", who)
        nesterov = flag(hyper["nesterov"], "nesterov", who)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"{who}: Nesterov momentum requires a momentum and zero dampening, "
                             f"got momentum={momentum:g} and dampening={dampening:g}")
        return {**super()._checked_hyper(hyper, who), "momentum": momentum, "dampening": dampening,
                "nesterov": nesterov, "maximize": flag(hyper["maximize"], "maximize", who)}

    def _state_keys(self, hyper: Mapping[str, Any]) -> tuple[str, ...]:
        return ("momentum_buffer",)

    def _update(self, p: Parameter, grad: np.ndarray, state: dict[str, Any], lr: float, momentum: float,
                dampening: float, weight_decay: float, nesterov: bool, maximize: bool) -> None:
        g = -grad if maximize else grad
        g = g + weight_decay * p.data
        if momentum:
            buf = state.get("momentum_buffer")
            buf = state["momentum_buffer"] = g.copy() if buf is None else momentum * buf + (1.0 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p.data -= lr * g


class Adam(Optimizer):
    r"""Adam (Kingma and Ba, 2015), as ``torch.optim.Adam``; t counts this parameter's steps from 1::

        g     = grad                                        (-grad with maximize=True: ascend instead)
        g     = g + weight_decay * p                        weight decay added to the gradient
        m     = beta1 * m + (1 - beta1) * g                 first moment, starts at 0
        v     = beta2 * v + (1 - beta2) * g**2              second moment, starts at 0
        v_max = max(v_max, v)                               amsgrad=True only, starts at 0
        m_hat = m / (1 - beta1**t)                          bias corrections
        v_hat = v / (1 - beta2**t)        (v_max / (1 - beta2**t) with amsgrad=True)
        p     = p - lr * m_hat / (sqrt(v_hat) + eps)

    With weight decay added to g, Adam divides the decay by sqrt(v_hat) too, so parameters
    with large gradients are barely decayed; AdamW fixes that. AMSGrad (Reddi et al., 2018)
    divides by the largest second moment so far instead of the current one: the paper shows
    convex problems where Adam's exponential average forgets rare large gradients and Adam
    does not converge, and gives it this long-term memory. State per parameter, under torch's
    names: step (t), exp_avg (m), exp_avg_sq (v), and max_exp_avg_sq (v_max) with
    amsgrad=True. The arguments are torch's, in torch's order.
    """

    decoupled = False
    TORCH_FLAGS = {**Optimizer.TORCH_FLAGS, "capturable": (False,), "decoupled_weight_decay": (False,)}
    LOAD_DEFAULTS = {"amsgrad": False, "maximize": False}

    def __init__(self, params: ParamsOrGroups, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": amsgrad, "maximize": maximize})

    def _checked_hyper(self, hyper: Mapping[str, Any], who: str) -> dict[str, Any]:
        betas = hyper["betas"]
        if not isinstance(betas, (tuple, list)):
            raise TypeError(f"{who}: betas must be a pair (beta1, beta2), got {betas!r}")
        if len(betas) != 2:
            raise ValueError(f"{who}: betas must be a pair (beta1, beta2), got {betas!r}")
        betas = tuple(real_number(b, f"betas[{i}]", who, low=0.0) for i, b in enumerate(betas))
        if not all(b < 1.0 for b in betas):
            raise ValueError(f"{who}: betas must lie in [0, 1), got {betas}")
        return {**super()._checked_hyper(hyper, who), "betas": betas,
                "eps": real_number(hyper["eps"], "eps", who, low=0.0),
                "amsgrad": flag(hyper["amsgrad"], "amsgrad", who), "maximize": flag(hyper["maximize"], "maximize", who)}

    def _state_keys(self, hyper: Mapping[str, Any]) -> tuple[str, ...]:
        return ("step", "exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if hyper["amsgrad"] else ())

    def _update(self, p: Parameter, grad: np.ndarray, state: dict[str, Any], lr: float,
                betas: tuple[float, float], eps: float, weight_decay: float, amsgrad: bool, maximize: bool) -> None:
        beta1, beta2 = betas
        t = state["step"] = state.get("step", 0) + 1
        g = -grad if maximize else grad
        if self.decoupled:
            p.data *= 1.0 - lr * weight_decay
        else:
            g = g + weight_decay * p.data
        m = state["exp_avg"] = beta1 * state.get("exp_avg", 0.0) + (1.0 - beta1) * g
        v = state["exp_avg_sq"] = beta2 * state.get("exp_avg_sq", 0.0) + (1.0 - beta2) * g * g
        if amsgrad:
            v = state["max_exp_avg_sq"] = np.maximum(state.get("max_exp_avg_sq", 0.0), v)
        m_hat = m / (1.0 - beta1**t)
        v_hat = v / (1.0 - beta2**t)
        p.data -= lr * m_hat / (np.sqrt(v_hat) + eps)


class AdamW(Adam):
    r"""Adam with decoupled weight decay (Loshchilov and Hutter, 2019), as ``torch.optim.AdamW``::

        p = p * (1 - lr * weight_decay)          decay first, not through the gradient
        then Adam's update with g = grad         (m, v, m_hat, v_hat as in ``Adam``; -grad
                                                  with maximize=True, v_max with amsgrad=True)

    The decay shrinks every weight by the same factor whatever its gradient history.
    """

    decoupled = True
    TORCH_FLAGS = {**Adam.TORCH_FLAGS, "decoupled_weight_decay": (True,)}

    def __init__(self, params: ParamsOrGroups, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.01, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
