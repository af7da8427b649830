"""What ``normcore bench`` measures: the shapes, dtypes, layers and phases, the model of the
training step, and the norms of either tier built with the same random gamma and beta.

Shapes: (4096, 768) and (32, 128, 768). LayerNorm and RMSNorm normalise the last axis (768);
BatchNorm1d and GroupNorm (32 groups) take axis 1 as the channels (768 channels, or 128
channels of length 768).
"""

import importlib

import numpy as np

SHAPES = ((4096, 768), (32, 128, 768))
DTYPES = (np.float32, np.float64)
LAYERS = ("LayerNorm", "RMSNorm", "BatchNorm1d", "GroupNorm")
PHASES = ("forward", "backward", "fwd+bwd")
TIERS = ("reference", "fast")
GROUPS = 32
EPS = 1e-5
TRANSFORMER = dict(vocab_size=256, d_model=128, n_layers=4, n_heads=4, batch=32, length=64)


def torch_module():
    """The torch module, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def fast_tier():
    """``normcore.fast``, or None when this installation has no fast tier (imported lazily)."""
    try:
        return importlib.import_module("normcore.fast")
    except ImportError:
        return None


def channels(kind, shape):
    return shape[-1] if kind in ("LayerNorm", "RMSNorm") else shape[1]


def affine_values(c):
    """The gamma and beta every implementation of a case gets: the same random values."""
    rng = np.random.default_rng(0)
    return 1 + 0.1 * rng.standard_normal(c), 0.1 * rng.standard_normal(c)


def make_norm(tier, kind, shape, dtype):
    """Layer ``kind`` of ``tier`` (``normcore.norms`` or ``normcore.fast``) for input ``shape``."""
    c = channels(kind, shape)
    layer = {"LayerNorm": lambda: tier.LayerNorm(c, dtype=dtype),
             "RMSNorm": lambda: tier.RMSNorm(c, eps=EPS, dtype=dtype),
             "BatchNorm1d": lambda: tier.BatchNorm1d(c, dtype=dtype),
             "GroupNorm": lambda: tier.GroupNorm(GROUPS, c, dtype=dtype)}[kind]()
    gamma, beta = affine_values(c)
    layer.weight.data[...] = gamma
    if layer.bias is not None:
        layer.bias.data[...] = beta
    return layer


def forward_cache_ratio(layer, x):
    """Bytes a layer keeps from ``forward(x)`` for its backward, over x's bytes; NaN when the
    layer keeps no such cache."""
    layer.forward(x)
    kept = layer.cache_nbytes()
    return float("nan") if kept is None else kept / x.nbytes


def transformer_data(cfg):
    rng = np.random.default_rng(2)
    shape = (cfg["batch"], cfg["length"])
    return rng.integers(0, cfg["vocab_size"], shape), rng.integers(0, cfg["vocab_size"], shape)
