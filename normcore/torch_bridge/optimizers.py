"""``compare_optimizer``: steps of a normcore optimizer and of its ``torch.optim`` twin on the
same gradients, every parameter and every state entry compared (an ``OptimizerReport``).
"""

from dataclasses import dataclass

import numpy as np

from ..i18n import translator
from .comparison import TOLERANCES, BridgeReport, Row, _row
from .core import _numpy, _torch

_ = translator("cli")


@dataclass
class OptimizerReport(BridgeReport):
    """What ``compare_optimizer`` found: one ``Row`` per parameter and per state entry after
    ``steps`` steps (``training`` is None: an optimizer has no mode)."""
    steps: int = 0

    def head(self):
        return [_("{optimizer} against torch.optim, {dtype}, {steps} steps").format(
                    optimizer=self.module[:40], dtype=self.dtype, steps=self.steps),
                *_("ok where |ours - torch| <= atol s + rtol |torch|, atol={atol}, rtol={rtol}, "
                   "with s\nthe tensor's largest |torch|; max rel = max abs / s").format(
                       atol=f"{self.atol:.0e}", rtol=f"{self.rtol:.0e}").splitlines()]


def compare_optimizer(optimizer, steps=5, names=None, atol=None, rtol=None, out=print, seed=0):
    """Take ``steps`` steps with ``optimizer`` and with its ``torch.optim`` twin on the same
    gradients, then compare every parameter and every entry of the optimizers' state.

    The twin is the torch optimizer of the same class name (a subclass: its nearest base class
    that torch has) over copies of the parameters, with the same groups and hyperparameters
    (normcore's names are torch's). Both sides get the same random gradients (from ``seed``),
    step t's scaled by 2**-t: where exp_avg_sq then falls, AMSGrad's maximum stays above it, so a
    wrong maximum shows. Rows, parameter after parameter (``names``: their names in the order of
    ``optimizer.params``; default "param 0", "param 1", ...): the parameter after the steps,
    then each entry of its state (momentum_buffer; step, exp_avg, exp_avg_sq, max_exp_avg_sq),
    an entry one side lacks failing. ``atol``/``rtol`` default to ``TOLERANCES`` for the first
    parameter's dtype, relative to the tensor's largest |value| in torch. ``out`` receives each
    line of the table (None: silent). Returns an ``OptimizerReport``; the parameters have taken
    the steps. The optimizer must not have stepped yet (a ``ValueError`` otherwise): torch's
    twin starts with an empty state.
    """
    torch = _torch()
    if any(optimizer.state.values()):
        raise ValueError(f"compare_optimizer: this {type(optimizer).__name__} has taken steps already; "
                         "give a fresh optimizer (its torch twin starts with an empty state)")
    params = optimizer.params
    names = list(names) if names is not None else [f"param {i}" for i in range(len(params))]
    tparams = [torch.nn.Parameter(torch.from_numpy(p.data.copy())) for p in params]
    toptimizer = _torch_optimizer(optimizer, tparams)
    rng = np.random.default_rng(seed)
    for t in range(steps):
        for p, tp in zip(params, tparams):
            g = (rng.standard_normal(p.shape) * 2.0**-t).astype(p.dtype)
            p.grad[...] = g
            tp.grad = torch.from_numpy(g.copy())
        optimizer.step()
        toptimizer.step()

    dtype = params[0].dtype
    d_atol, d_rtol = TOLERANCES.get(dtype, TOLERANCES[np.dtype(np.float32)])
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    report = OptimizerReport(type(optimizer).__name__, str(dtype), atol, rtol, None, steps=steps)
    for name, p, tp in zip(names, params, tparams):
        report.rows.append(_row(name, p.data, _numpy(tp), atol, rtol))
        ours, theirs = optimizer.state.get(p, {}), toptimizer.state.get(tp, {})
        for key in [*ours, *(k for k in theirs if k not in ours)]:
            a, b = ours.get(key), theirs.get(key)  # torch's SGD keeps momentum_buffer=None without momentum
            if a is None and b is None:
                continue
            if a is None or b is None:  # an entry one side lacks
                report.rows.append(Row(f"{name} {key}", (), np.inf, np.inf, (), False))
            else:
                report.rows.append(_row(f"{name} {key}", a, _numpy(b), atol, rtol))
    if out is not None:
        for line in report.lines():
            out(line)
    return report


def _torch_optimizer(optimizer, tparams):
    """The ``torch.optim`` twin of ``optimizer`` over ``tparams`` (one torch parameter per
    ``optimizer.params``, in order): its groups and hyperparameters, its defaults."""
    torch = _torch()
    names = [c.__name__ for c in type(optimizer).__mro__ if c.__name__ != "Optimizer"]
    twin = next((getattr(torch.optim, name) for name in names if hasattr(torch.optim, name)), None)
    if twin is None:
        raise TypeError(f"compare_optimizer: torch.optim has no twin of {type(optimizer).__name__} "
                        "(expected SGD, Adam, AdamW or a subclass of one)")
    tparam = {id(p): tp for p, tp in zip(optimizer.params, tparams)}
    groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": [tparam[id(p)] for p in g["params"]]}
              for g in optimizer.param_groups]
    return twin(groups, **optimizer.defaults)
