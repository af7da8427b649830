"""The twins of the layers that normalise the weight or scale a residual branch instead of
normalising the activations: WeightNorm, WSLinear, LayerScale and ReZero.

``WeightNorm`` becomes torch's own ``torch.nn.Linear`` with the parametrization
``torch.nn.utils.parametrizations.weight_norm`` (same ``dim``), which keeps normcore's
``weight_g`` and ``weight_v`` as ``parametrizations.weight.original0`` and ``original1``:
the torch module's ``normcore_keys`` maps them, and ``from_torch`` builds a ``WeightNorm`` from
such a Linear. torch has no Weight Standardization, LayerScale or ReZero layer:
``weight_twins()`` writes them out in torch ops, one small module each, with normcore's
parameter names.
"""

import functools
import importlib

from .. import nn
from ..nn.weight_norm import TORCH_PARAMETRIZATION_KEYS
from .core import _torch, builds_from_torch, converts

# normcore's WeightNorm key -> the key of torch's weight_norm parametrization on a Linear
WEIGHT_NORM_KEYS = {ours: theirs for theirs, ours in TORCH_PARAMETRIZATION_KEYS.items()}


@converts(nn.WeightNorm)
def _weight_norm(m, sub):
    """torch.nn.Linear with torch's weight_norm parametrization; ``dim=None`` stays None."""
    torch = _torch()
    linear = torch.nn.Linear(m.in_features, m.out_features, bias=m.bias is not None)
    t = torch.nn.utils.parametrizations.weight_norm(linear, dim=m.dim)
    t.normcore_keys = {key: (WEIGHT_NORM_KEYS.get(key, key), ...) for key in m.state_dict()}
    return t


@converts(nn.WSLinear)
def _ws_linear(m, sub):
    return weight_twins().WSLinear(m.in_features, m.out_features, m.bias is not None, m.eps)


@converts(nn.LayerScale)
def _layer_scale(m, sub):
    return weight_twins().LayerScale(m.dim, m.init)


@converts(nn.ReZero)
def _rezero(m, sub):
    return weight_twins().ReZero(m.init)


@functools.cache
def weight_twins():
    """torch modules of WSLinear, LayerScale and ReZero, built on first use (torch 2.13 has
    none of them)."""
    torch = _torch()

    class WSLinear(torch.nn.Linear):
        """torch.nn.Linear whose weight W is standardised per output row before use, as
        normcore.WSLinear: W_hat = (W - mean) / sqrt(var + eps), the biased variance over
        the row's ``in`` values; torch's autograd differentiates through mean and var."""

        def __init__(self, in_features, out_features, bias, eps):
            super().__init__(in_features, out_features, bias=bias)
            self.eps = eps

        def forward(self, x):
            var, mean = torch.var_mean(self.weight, dim=1, keepdim=True, correction=0)
            W_hat = (self.weight - mean) / torch.sqrt(var + self.eps)
            return torch.nn.functional.linear(x, W_hat, self.bias)

    class LayerScale(torch.nn.Module):
        """y = gamma * x, gamma (C,) over x's last axis, initialised to ``init``, as
        normcore.LayerScale."""

        def __init__(self, dim, init):
            super().__init__()
            self.init = init
            self.gamma = torch.nn.Parameter(torch.full((dim,), float(init)))

        def forward(self, x):
            return self.gamma * x

    class ReZero(torch.nn.Module):
        """y = alpha * x, alpha one scalar of shape (1,) initialised to ``init``, as
        normcore.ReZero."""

        def __init__(self, init):
            super().__init__()
            self.init = init
            self.alpha = torch.nn.Parameter(torch.full((1,), float(init)))

        def forward(self, x):
            return self.alpha * x

    return type("WeightTwins", (), dict(WSLinear=WSLinear, LayerScale=LayerScale, ReZero=ReZero))


@builds_from_torch
def _from_torch(tnn):
    # torch's weight_norm parametrization (its class is private: taken from a Linear it
    # parametrizes); core.from_torch looks a parametrized module up by its parametrizations
    weight_norm_class = type(tnn.utils.parametrizations.weight_norm(tnn.Linear(1, 1)).parametrizations.weight[0])

    def weight_norm(t, sub):
        """A Linear whose only parametrization is weight_norm on its weight."""
        parametrized = {name: [type(p) for p in plist] for name, plist in t.parametrizations.items()}
        if not isinstance(t, tnn.Linear) or parametrized != {"weight": [weight_norm_class]}:
            names = {name: [cls.__name__ for cls in classes] for name, classes in parametrized.items()}
            raise TypeError(f"from_torch: normcore's WeightNorm is a Linear with weight_norm as its only "
                            f"parametrization, got a {type(t).__name__} with {names}")
        linear = nn.Linear(t.in_features, t.out_features, bias=t.bias is not None)
        return nn.WeightNorm(linear, dim=t.parametrizations.weight[0].dim)  # torch's -1 is None here too

    # the older hook-based torch.nn.utils.weight_norm (core.under_older_weight_norm finds it)
    hook_class = importlib.import_module("torch.nn.utils.weight_norm").WeightNorm

    def hooked_weight_norm(t, sub):
        """A Linear with weight_g and weight_v; dim read from g's shape ((out, 1): 0, (1, in): 1,
        a single number: None; where g is (1, 1) the choices compute the same weight)."""
        if not isinstance(t, tnn.Linear) or tnn.utils.parametrize.is_parametrized(t):
            raise TypeError(f"from_torch: normcore's WeightNorm is a Linear under weight_norm alone, got a "
                            f"{type(t).__name__}")
        g, v = t.weight_g, t.weight_v
        dim = None if g.dim() == 0 else 0 if tuple(g.shape) == (v.shape[0], 1) else 1
        linear = nn.Linear(t.in_features, t.out_features, bias=t.bias is not None)
        return nn.WeightNorm(linear, dim=dim)

    twins = weight_twins()
    return {
        weight_norm_class: weight_norm,
        hook_class: hooked_weight_norm,
        twins.WSLinear: lambda t, sub: nn.WSLinear(t.in_features, t.out_features, t.bias is not None, t.eps),
        twins.LayerScale: lambda t, sub: nn.LayerScale(t.gamma.shape[0], t.init),
        twins.ReZero: lambda t, sub: nn.ReZero(t.init),
    }
