"""The twins of the plain layers: Linear, the activations, SoftCap, Softmax and LogSoftmax,
Dropout, Embedding, the learned positions and Sequential.

torch has each of them (learned positions and the soft-cap aside: ``positional_twin()`` and
``softcap_twin()``, one-line torch modules), so most converters are one call. ``from_torch``
knows Linear, the activations, the soft-cap's twin, Dropout and Sequential.
"""

import functools

from .. import nn
from ..module import Sequential
from .core import _torch, builds_from_torch, converts


@converts(nn.Linear)
def _linear(m, sub):
    return _torch().nn.Linear(m.in_features, m.out_features, bias=m.bias is not None)


converts(nn.ReLU)(lambda m, sub: _torch().nn.ReLU())
converts(nn.Sigmoid)(lambda m, sub: _torch().nn.Sigmoid())
converts(nn.Tanh)(lambda m, sub: _torch().nn.Tanh())


converts(nn.GELU)(lambda m, sub: _torch().nn.GELU(approximate=m.approximate))
converts(nn.SoftCap)(lambda m, sub: softcap_twin()(m.cap))


@functools.cache
def softcap_twin():
    """The torch module of normcore's SoftCap (torch has no such layer), built on first use."""
    torch = _torch()

    class SoftCap(torch.nn.Module):
        """y = cap * tanh(x / cap), as normcore.nn.SoftCap; autograd gives its backward."""

        def __init__(self, cap):
            super().__init__()
            self.cap = cap

        def forward(self, x):
            return self.cap * torch.tanh(x / self.cap)

    return SoftCap


@converts(nn.Softmax, nn.LogSoftmax)
def _softmax(m, sub):
    """``nn.Softmax(dim)`` or ``nn.LogSoftmax(dim)``; with ``dtype=`` a twin calling
    ``torch.nn.functional``'s softmax or log_softmax with that dtype (torch's modules have none)."""
    torch = _torch()
    softmax = isinstance(m, nn.Softmax)
    if m.dtype is None:
        return torch.nn.Softmax(dim=m.axis) if softmax else torch.nn.LogSoftmax(dim=m.axis)
    fn = torch.nn.functional.softmax if softmax else torch.nn.functional.log_softmax
    return _softmax_in_dtype()(fn, m.axis, getattr(torch, m.dtype.name))


@functools.cache
def _softmax_in_dtype():
    """The torch module ``fn(x, dim, dtype=dtype)``, fn torch's softmax or log_softmax: the input
    cast to dtype first."""
    class SoftmaxInDtype(_torch().nn.Module):
        def __init__(self, fn, dim, dtype):
            super().__init__()
            self.fn, self.dim, self.dtype = fn, dim, dtype

        def forward(self, x):
            return self.fn(x, self.dim, dtype=self.dtype)

    return SoftmaxInDtype


@converts(nn.Dropout)
def _dropout(m, sub):
    return _torch().nn.Dropout(m.p)


@converts(nn.Embedding)
def _embedding(m, sub):
    return _torch().nn.Embedding(m.num_embeddings, m.dim, padding_idx=m.padding_idx)


@converts(nn.PositionalEmbedding)
def _positional(m, sub):
    return positional_twin()(m.max_len, m.dim)


@functools.cache
def positional_twin():
    """The torch module of normcore's learned positions, built on first use."""
    torch = _torch()

    class PositionalEmbedding(torch.nn.Module):
        """y = x + weight[:T], as normcore.nn.PositionalEmbedding."""

        def __init__(self, max_len, dim):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.empty(max_len, dim))

        def forward(self, x):
            return x + self.weight[: x.shape[-2]]

    return PositionalEmbedding


@converts(Sequential)
def _sequential(m, sub):
    return _torch().nn.Sequential(*[sub(child) for child in m])


@builds_from_torch
def _from_torch(tnn):
    return {
        tnn.Linear: lambda t, sub: nn.Linear(t.in_features, t.out_features, bias=t.bias is not None),
        tnn.ReLU: lambda t, sub: nn.ReLU(),
        tnn.Sigmoid: lambda t, sub: nn.Sigmoid(),
        tnn.Tanh: lambda t, sub: nn.Tanh(),
        tnn.GELU: lambda t, sub: nn.GELU(approximate=t.approximate),
        softcap_twin(): lambda t, sub: nn.SoftCap(t.cap),
        tnn.Dropout: lambda t, sub: nn.Dropout(t.p),
        tnn.Sequential: lambda t, sub: Sequential(*[sub(child) for child in t]),
    }
