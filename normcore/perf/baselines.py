"""The baselines each norm is timed against: the memory floor (the passes over the data no
implementation can avoid, as ``np.copyto``) and PyTorch on one thread and on all threads.
PyTorch has no DyT: its baseline is the torch bridge's twin (``to_torch(nc.DyT(...))``), a
small autograd module (tanh, multiply, add), not a kernel of torch's own.
"""

import contextlib

import numpy as np

from .. import norms
from ..torch_bridge import to_torch
from ..i18n import N_
from .cases import EPS, GROUPS, affine_values, channels, make_norm

# marked here, translated where shown: _(NOT_TORCH)
NOT_TORCH = N_("without PyTorch: not installed, or --no-torch")
NO_FAST = N_("fast tier unavailable (normcore.fast is not installed)")


def make_torch_norm(torch, kind, shape, dtype):
    if kind == "DyT":  # torch has no DyT: the bridge's twin of the reference layer, same values
        return to_torch(make_norm(norms, kind, shape, dtype))
    c = channels(kind, shape)
    tdtype = torch.float32 if dtype == np.float32 else torch.float64
    module = {"LayerNorm": lambda: torch.nn.LayerNorm(c, dtype=tdtype),
              "RMSNorm": lambda: torch.nn.RMSNorm(c, eps=EPS, dtype=tdtype),
              "BatchNorm1d": lambda: torch.nn.BatchNorm1d(c, dtype=tdtype),
              "GroupNorm": lambda: torch.nn.GroupNorm(GROUPS, c, dtype=tdtype)}[kind]()
    gamma, beta = affine_values(c)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(gamma))
        if getattr(module, "bias", None) is not None:
            module.bias.copy_(torch.from_numpy(beta))
    return module


class TorchRunner:
    """Runs a torch module with ``threads`` threads; backward() uses the last forward's graph."""

    def __init__(self, torch, module, x, dy, threads):
        self.torch, self.module, self.threads = torch, module, threads
        self.x = torch.from_numpy(x).requires_grad_(True)
        self.dy = torch.from_numpy(dy)

    def context(self):
        self.torch.set_num_threads(self.threads)
        self.x.grad = None
        return contextlib.nullcontext()

    def forward(self):
        self.y = self.module(self.x)

    def backward(self):
        self.y.backward(self.dy)


class FloorRunner:
    """The memory floor: forward reads x and writes y, backward reads dy and writes dx, as
    ``np.copyto`` into arrays allocated once. No norm can make fewer passes over the data."""

    def __init__(self, x, dy):
        self.x, self.dy = x, dy
        self.y, self.dx = np.empty_like(x), np.empty_like(dy)

    def context(self):
        return contextlib.nullcontext()

    def forward(self):
        np.copyto(self.y, self.x)

    def backward(self):
        np.copyto(self.dx, self.dy)


DEFAULT_THREADS = []


def default_threads(torch):
    """torch's default thread count, read once before this module changes it."""
    if not DEFAULT_THREADS:
        DEFAULT_THREADS.append(torch.get_num_threads())
    return DEFAULT_THREADS[0]
