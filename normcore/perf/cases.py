"""What ``normcore bench`` measures: the shapes, dtypes, layers and phases, the model of the
training step, the norms of either tier built with the same random gamma and beta, and the
learning run (4 Pre-Norm blocks learning to reverse 8 tokens, as the learning test trains them).

Shapes: (4096, 768) and (32, 128, 768). LayerNorm, RMSNorm and DyT act on the last axis
(768); BatchNorm1d and GroupNorm (32 groups) take axis 1 as the channels (768 channels, or 128
channels of length 768). DyT (element-wise tanh, no reduction) has one tier: ``normcore.fast``
has no DyT, the reference class ``nc.DyT`` serves both, so it is timed once.
"""

import importlib

import numpy as np

from .. import nn, optim, tasks
from ..i18n import N_
from ..train import fit

SHAPES = ((4096, 768), (32, 128, 768))
DTYPES = (np.float32, np.float64)
LAYERS = ("LayerNorm", "RMSNorm", "BatchNorm1d", "GroupNorm", "DyT")
ONE_TIER = ("DyT",)  # no fast tier: the reference class serves both, timed once as "reference"
PHASES = (N_("forward"), N_("backward"), N_("fwd+bwd"))  # the tables translate them: _(phase)
TIERS = ("reference", "fast")
GROUPS = 32
EPS = 1e-5
TRANSFORMER = dict(vocab_size=256, d_model=128, n_layers=4, n_heads=4, batch=32, length=64)
LEARNING = dict(n_tokens=8, n_symbols=10, d_model=32, n_layers=4, n_heads=4, steps=250, batch_size=64,
                lr=3e-3, warmup=30)
LEARNING_BUDGET = 60.0  # seconds the learning run should take on one BLAS thread


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
    return shape[-1] if kind in ("LayerNorm", "RMSNorm", "DyT") else shape[1]


def affine_values(c):
    """The gamma and beta every implementation of a case gets: the same random values."""
    rng = np.random.default_rng(0)
    return 1 + 0.1 * rng.standard_normal(c), 0.1 * rng.standard_normal(c)


def make_norm(tier, kind, shape, dtype):
    """Layer ``kind`` of ``tier`` (``normcore.norms`` or ``normcore.fast``) for input ``shape``;
    a kind in ONE_TIER exists in ``normcore.norms`` only."""
    c = channels(kind, shape)
    layer = {"LayerNorm": lambda: tier.LayerNorm(c, dtype=dtype),
             "RMSNorm": lambda: tier.RMSNorm(c, eps=EPS, dtype=dtype),
             "BatchNorm1d": lambda: tier.BatchNorm1d(c, dtype=dtype),
             "GroupNorm": lambda: tier.GroupNorm(GROUPS, c, dtype=dtype),
             "DyT": lambda: tier.DyT(c, dtype=dtype)}[kind]()
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


class ReverseRun:
    """The learning run: a TinyTransformer of ``n_layers`` Pre-Norm blocks learns to reverse
    ``n_tokens`` tokens with AdamW, warmup and cosine decay, clipping at 1. The learning test
    checks what it learns; ``normcore bench`` times ``train()``."""

    def __init__(self, cfg=None):
        self.cfg = cfg = LEARNING if cfg is None else cfg
        self.task = tasks.ReverseTask(n_tokens=cfg["n_tokens"], n_symbols=cfg["n_symbols"])
        self.model = nn.TinyTransformer(self.task.vocab_size, d_model=cfg["d_model"], n_layers=cfg["n_layers"],
                                        n_heads=cfg["n_heads"], max_len=self.task.seq_len, rng=0)
        self.opt = optim.AdamW(self.model.parameters(), lr=cfg["lr"], weight_decay=0.0)
        self.history = None

    def train(self, progress=False):
        """The training loop alone; returns (and keeps) fit's history. ``progress``: fit's
        progress display on stderr."""
        cfg = self.cfg
        schedule = optim.warmup_cosine(cfg["lr"], cfg["warmup"], cfg["steps"])
        self.history = fit(self.model, self.task, self.opt, cfg["steps"], schedule=schedule, clip=1.0,
                           batch_size=cfg["batch_size"], seed=0, progress=progress)
        return self.history

    def held_out_accuracy(self):
        """Token accuracy on 1000 fresh problems, never trained on, in eval mode."""
        self.model.eval()
        tokens, targets = self.task.batch(1000, seed=12345)
        return tasks.token_accuracy(self.model(tokens), targets)
