"""The norms' twins: LayerNorm, RMSNorm, BatchNorm, InstanceNorm, GroupNorm and DyT.

torch has each of them but DyT under the same name and arguments, so the converters are one
call each; DyT gets a small torch module, ``dyt_twin()``. ``from_torch`` builds the
normcore norm from torch's with the same arguments.
"""

import functools

from .. import norms
from .core import _torch, builds_from_torch, converts


@converts(norms.LayerNorm)
def _layernorm(m, sub):
    return _torch().nn.LayerNorm(m.normalized_shape, m.eps, m.elementwise_affine,
                                 bias=m.bias is not None)


@converts(norms.RMSNorm)
def _rmsnorm(m, sub):
    return _torch().nn.RMSNorm(m.normalized_shape, m.eps, m.elementwise_affine)


@converts(norms.DyT)
def _dyt(m, sub):
    return dyt_twin()(m.normalized_shape, m.alpha_init, m.weight is not None, m.bias is not None)


@functools.cache
def dyt_twin():
    """The torch module of DyT, built on first use (torch 2.13 has none)."""
    torch = _torch()

    class DyT(torch.nn.Module):
        """y = weight * tanh(alpha * x) + bias, as normcore.DyT (torch 2.13 has no DyT): alpha
        (1,), weight and bias of normalized_shape (None when absent), torch's autograd."""

        def __init__(self, normalized_shape, alpha_init, weight, bias):
            super().__init__()
            self.alpha = torch.nn.Parameter(torch.full((1,), float(alpha_init)))
            self.weight = torch.nn.Parameter(torch.ones(normalized_shape)) if weight else None
            self.bias = torch.nn.Parameter(torch.zeros(normalized_shape)) if bias else None

        def forward(self, x):
            t = torch.tanh(self.alpha * x)
            y = t if self.weight is None else self.weight * t
            return y if self.bias is None else y + self.bias

    return DyT


RUNNING_NORMS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")


def _running_norm(torch_name):
    """BatchNorm and InstanceNorm take the same arguments on both sides."""
    def convert(m, sub):
        return getattr(_torch().nn, torch_name)(m.num_features, m.eps, m.momentum, m.affine,
                                                m.track_running_stats, bias=m.bias is not None)
    return convert


for _name in RUNNING_NORMS:
    converts(getattr(norms, _name))(_running_norm(_name))


@converts(norms.GroupNorm)
def _groupnorm(m, sub):
    return _torch().nn.GroupNorm(m.num_groups, m.num_channels, m.eps, m.affine, bias=m.bias is not None)


@builds_from_torch
def _from_torch(tnn):
    def running_norm(cls):
        return lambda t, sub: cls(t.num_features, t.eps, t.momentum, t.affine, t.track_running_stats,
                                  bias=t.bias is not None)

    return {
        tnn.LayerNorm: lambda t, sub: norms.LayerNorm(t.normalized_shape, t.eps, t.elementwise_affine,
                                                      bias=t.bias is not None),
        tnn.RMSNorm: lambda t, sub: norms.RMSNorm(t.normalized_shape, t.eps, t.elementwise_affine),
        **{getattr(tnn, name): running_norm(getattr(norms, name)) for name in RUNNING_NORMS},
        tnn.GroupNorm: lambda t, sub: norms.GroupNorm(t.num_groups, t.num_channels, t.eps, t.affine,
                                                      bias=t.bias is not None),
    }
