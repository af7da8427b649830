"""The bridge to PyTorch: the same model in ``torch.nn``, and a side-by-side comparison.

    from normcore.torch_bridge import to_torch, compare
    tmodel = to_torch(model)         # a torch.nn.Module with model's weights, buffers and mode
    report = compare(model, x)       # forward and backward in both; a table; report.passed

torch is imported inside the functions, never at import time: ``import normcore`` (and even
``import normcore.torch_bridge``) works without it.

How the mapping works: ``CONVERTERS`` maps a normcore class to a function ``(module, sub)``
returning the torch module, where ``sub(child)`` converts a child. Subclasses (the fast tier,
a layer you derived) use their nearest registered base class. Adding a layer or an option is
one entry. Parameter and buffer names are the same on both sides (normcore uses PyTorch's),
so the weights travel as a state dict with ``strict=True``: a mapping that forgot a parameter
fails loudly instead of comparing against a default. Where torch has no one-to-one layer
(learned positions, attention with normcore's q/k/v/o, the Transformer block with DeepNorm's
alpha, the tiny language model), small ``torch.nn.Module`` twins are defined in
``_twins()``, built on first use.

Dropout: in evaluation both sides are the identity and compare equal. In training the two
draw their masks from different generators, so outputs differ; ``compare`` then reports a
failure, which is the truth, not a bug of the bridge.
"""

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from . import nn, norms
from .module import Module, Sequential

CONVERTERS = {}  # normcore class -> (module, sub) -> torch.nn.Module


def converts(*classes):
    """Register the decorated function as the converter of ``classes``."""
    def register(fn):
        for cls in classes:
            CONVERTERS[cls] = fn
        return fn
    return register


def _torch():
    try:
        import torch
    except ImportError as err:
        raise ImportError("normcore.torch_bridge needs PyTorch: pip install torch "
                          "(or pip install -e '.[torch]')") from err
    return torch


def supported():
    """The names of the normcore classes ``to_torch`` converts."""
    return sorted(cls.__name__ for cls in CONVERTERS)


def _converter(module):
    for cls in type(module).__mro__:
        if cls in CONVERTERS:
            return CONVERTERS[cls]
    raise TypeError(f"to_torch: no PyTorch mapping for {type(module).__name__}; "
                    f"supported: {', '.join(supported())}")


def _dtype_of(module):
    """The dtype of the module's floating state (float64 when it has none)."""
    for _, p in module.named_parameters():
        return p.dtype
    for _, b in module.named_buffers():
        if np.issubdtype(b.dtype, np.floating):
            return b.dtype
    return np.dtype(np.float64)


def to_torch(module):
    """The equivalent ``torch.nn.Module``: same structure, weights, buffers, dtype and modes.

    Each torch module gets the training flag of the normcore module it stands for. Raises
    ``TypeError`` (listing what is supported) for a module without a mapping.
    """
    torch = _torch()
    if not isinstance(module, Module):
        raise TypeError(f"to_torch expects a normcore Module, got {type(module).__name__}")

    def sub(m):
        t = _converter(m)(m, sub)
        t.training = m.training
        return t

    tmodule = sub(module)
    dtype = getattr(torch, _dtype_of(module).name)
    tmodule.to(dtype)  # floating parameters and buffers only; num_batches_tracked stays int64
    state = {k: torch.from_numpy(np.array(v)) for k, v in module.state_dict().items()}
    tmodule.load_state_dict(state, strict=True)
    return tmodule


# --- the mapping, one entry per layer ------------------------------------------------------

@converts(norms.LayerNorm)
def _layernorm(m, sub):
    return _torch().nn.LayerNorm(m.normalized_shape, m.eps, m.elementwise_affine,
                                 bias=m.bias is not None)


@converts(norms.RMSNorm)
def _rmsnorm(m, sub):
    return _torch().nn.RMSNorm(m.normalized_shape, m.eps, m.elementwise_affine)


def _running_norm(torch_name):
    """BatchNorm and InstanceNorm take the same arguments on both sides."""
    def convert(m, sub):
        return getattr(_torch().nn, torch_name)(m.num_features, m.eps, m.momentum, m.affine,
                                                m.track_running_stats)
    return convert


converts(norms.BatchNorm1d)(_running_norm("BatchNorm1d"))
converts(norms.BatchNorm2d)(_running_norm("BatchNorm2d"))
converts(norms.InstanceNorm1d)(_running_norm("InstanceNorm1d"))
converts(norms.InstanceNorm2d)(_running_norm("InstanceNorm2d"))


@converts(norms.GroupNorm)
def _groupnorm(m, sub):
    return _torch().nn.GroupNorm(m.num_groups, m.num_channels, m.eps, m.affine)


@converts(nn.Linear)
def _linear(m, sub):
    return _torch().nn.Linear(m.in_features, m.out_features, bias=m.bias is not None)


converts(nn.ReLU)(lambda m, sub: _torch().nn.ReLU())
converts(nn.Sigmoid)(lambda m, sub: _torch().nn.Sigmoid())
converts(nn.Tanh)(lambda m, sub: _torch().nn.Tanh())


converts(nn.GELU)(lambda m, sub: _torch().nn.GELU(approximate=m.approximate))


converts(nn.Softmax)(lambda m, sub: _torch().nn.Softmax(dim=m.axis))
converts(nn.LogSoftmax)(lambda m, sub: _torch().nn.LogSoftmax(dim=m.axis))


@converts(nn.Dropout)
def _dropout(m, sub):
    return _torch().nn.Dropout(m.p)


@converts(nn.Embedding)
def _embedding(m, sub):
    return _torch().nn.Embedding(m.num_embeddings, m.dim, padding_idx=m.padding_idx)


@converts(nn.PositionalEmbedding)
def _positional(m, sub):
    return _twins().PositionalEmbedding(m.max_len, m.dim)


@converts(nn.MultiheadSelfAttention, nn.CausalSelfAttention)
def _attention(m, sub):
    t = _twins().SelfAttention(m.n_heads, m.causal)
    for name in ("q", "k", "v", "o"):
        setattr(t, name, sub(getattr(m, name)))
    return t


@converts(nn.FeedForward)
def _feedforward(m, sub):
    return _twins().FeedForward(sub(m.fc1), sub(m.act), sub(m.fc2))


@converts(nn.TransformerBlock)
def _block(m, sub):
    children = {name: sub(child) for name, child in _named_children(m)}
    return _twins().TransformerBlock(m.position, m.alpha, children)


@converts(nn.TinyTransformer)
def _tiny(m, sub):
    return _twins().Stages({name: sub(child) for name, child in _named_children(m)})


def _named_children(m):
    """(name, child) of the module's direct children, in the order they were set."""
    return [(name, child) for name, child in m.named_modules() if name and "." not in name]


@converts(Sequential)
def _sequential(m, sub):
    return _torch().nn.Sequential(*[sub(child) for child in m])


@converts(nn.CrossEntropyLoss)
def _cross_entropy(m, sub):
    weight = None if m.weight is None else _torch().empty(m.weight.shape)  # loaded below
    return _torch().nn.CrossEntropyLoss(weight, ignore_index=m.ignore_index,
                                        reduction=m.reduction, label_smoothing=m.label_smoothing)


@converts(nn.MSELoss)
def _mse(m, sub):
    return _torch().nn.MSELoss()


@functools.cache
def _twins():
    """torch.nn twins of the normcore modules torch has no one-to-one layer for."""
    torch = _torch()

    class PositionalEmbedding(torch.nn.Module):
        """y = x + weight[:T], as normcore.nn.PositionalEmbedding."""

        def __init__(self, max_len, dim):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.empty(max_len, dim))

        def forward(self, x):
            return x + self.weight[: x.shape[-2]]

    class SelfAttention(torch.nn.Module):
        """q, k, v, o projections (set by the converter) around scaled dot-product attention
        in torch (the math path: a fully masked row gives NaN, as in normcore; torch's fused
        SDPA kernels give 0 there). Masks in normcore's (and torch.nn.MultiheadAttention's)
        convention: a boolean mask is True where attending is not allowed, a floating one is
        added to the scores."""

        def __init__(self, n_heads, causal):
            super().__init__()
            self.n_heads, self.causal = n_heads, causal

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            B, T, C = x.shape
            D = C // self.n_heads

            def heads(t):
                return t.view(B, T, self.n_heads, D).transpose(1, 2)  # (B, H, T, D)

            def additive(mask):
                if mask.dtype != torch.bool:
                    return mask.to(x.dtype)
                return torch.zeros(mask.shape, dtype=x.dtype).masked_fill(mask, -torch.inf)
            q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
            S = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, H, T, T)
            if key_padding_mask is not None:
                S = S + additive(key_padding_mask)[:, None, None, :]
            if attn_mask is not None:
                S = S + additive(attn_mask)
            if self.causal:
                S = S + additive(torch.ones(T, T, dtype=torch.bool).triu(1))
            a = torch.softmax(S, dim=-1) @ v  # (B, H, T, D)
            return self.o(a.transpose(1, 2).reshape(B, T, C))

    class FeedForward(torch.nn.Module):
        def __init__(self, fc1, act, fc2):
            super().__init__()
            self.fc1, self.act, self.fc2 = fc1, act, fc2

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class TransformerBlock(torch.nn.Module):
        """pre: x + drop(F(Norm(x))); post/deepnorm: Norm(alpha x + drop(F(x)));
        none: x + drop(F(x)); for F = attn (norm1, drop1), then ffn (norm2, drop2)."""

        def __init__(self, position, alpha, children):
            super().__init__()
            self.position, self.alpha = position, alpha
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, x):
            for i, f in ((1, self.attn), (2, self.ffn)):
                norm = getattr(self, f"norm{i}", None)
                drop = getattr(self, f"drop{i}")
                if self.position == "pre":
                    x = x + drop(f(norm(x)))
                elif self.position == "none":
                    x = x + drop(f(x))
                else:
                    x = norm(self.alpha * x + drop(f(x)))
            return x

    class Stages(torch.nn.Module):
        """Children applied in order (TinyTransformer: tok_emb, pos_emb, blocks, norm_f,
        head), under normcore's names, so the state dict keys match."""

        def __init__(self, children):
            super().__init__()
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, x):
            for child in self.children():
                x = child(x)
            return x

    return type("Twins", (), dict(
        PositionalEmbedding=PositionalEmbedding, SelfAttention=SelfAttention,
        FeedForward=FeedForward, TransformerBlock=TransformerBlock, Stages=Stages))


# --- compare --------------------------------------------------------------------------------

# (atol, rtol) per dtype. Unit roundoff u is 1.1e-16 (float64), 6.0e-8 (float32) and 4.9e-4
# (float16). Two correct implementations that sum in a different order differ by about u
# times the length of the reductions times the condition of the computation; a forward plus
# a backward through a few layers loses a few more digits. So: float64 1e-9 (about 1e7 u,
# room for long reductions and ill-conditioned norms, yet a wrong derivative term is off by
# far more), float32 1e-4 (about 1e3 u), float16 1e-2 (about 20 u: float16 keeps ~3 digits).
TOLERANCES = {np.dtype(np.float64): (1e-9, 1e-9), np.dtype(np.float32): (1e-4, 1e-4),
              np.dtype(np.float16): (1e-2, 1e-2)}


@dataclass
class Row:
    """One compared tensor: normcore's ``ours`` against torch's ``theirs``."""
    name: str
    shape: tuple
    max_abs: float
    max_rel: float
    index: tuple  # where |ours - theirs| exceeds the tolerance the most
    passed: bool

    def line(self):
        """One table line (a name longer than 30 gets a line of its own); <= 80 columns."""
        shape = "x".join(map(str, self.shape)) or "()"
        index = "(" + ",".join(map(str, self.index)) + ")"
        if len(index) > 14:
            index = index[:12] + ".)"
        rest = (f"{shape[-9:]:>9} {self.max_abs:8.1e} {self.max_rel:8.1e} {index:>14} "
                f"{'ok' if self.passed else 'FAIL':>4}")
        if len(self.name) > 30:
            return f"{self.name[:80]}\n{'':30} {rest}"
        return f"{self.name:<30} {rest}"


@dataclass
class BridgeReport:
    """What ``compare`` found: one ``Row`` per output, gradient and buffer."""
    module: str
    dtype: str
    atol: float
    rtol: float
    training: bool
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # printed above the verdict

    @property
    def passed(self):
        return all(r.passed for r in self.rows)

    def lines(self):
        mode = "train" if self.training else "eval"
        head = [f"{self.module[:40]} against torch.nn, {self.dtype}, {mode} mode",
                f"ok where |ours - torch| <= atol + rtol |torch|, atol={self.atol:.0e}, "
                f"rtol={self.rtol:.0e}"]
        cols = (f"{'tensor':<30} {'shape':>9} {'max abs':>8} {'max rel':>8} "
                f"{'worst index':>14} {'':>4}")
        verdict = "all match" if self.passed else (
            f"{sum(not r.passed for r in self.rows)} of {len(self.rows)} differ")
        rows = "\n".join([r.line() for r in self.rows] + self.notes).splitlines()
        return [*head, cols, "-" * 78, *rows, verdict]

    def __str__(self):
        return "\n".join(self.lines())


def _row(name, ours, theirs, atol, rtol):
    """Compare two arrays elementwise: equal values (infinities too) and NaN on both sides
    agree; a NaN on one side only is an infinite difference."""
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(theirs, dtype=np.float64)
    if a.shape != b.shape:
        return Row(name, a.shape, np.inf, np.inf, (), False)
    diff = np.abs(a - b)
    same_nan = np.isnan(a) & np.isnan(b)
    diff = np.where(same_nan | (a == b), 0.0, diff)  # equal infinities and NaNs agree
    diff = np.where(np.isnan(diff), np.inf, diff)
    if a.size == 0:
        return Row(name, a.shape, 0.0, 0.0, (), True)
    excess = diff / (atol + rtol * np.abs(np.nan_to_num(b)))
    worst = np.unravel_index(int(np.argmax(excess)), a.shape)
    mag = np.abs(np.nan_to_num(b))
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        rel = np.where(mag > 0, diff / mag, np.where(diff > 0, np.inf, 0.0))  # inf: b = 0 != a
    return Row(name, a.shape, float(diff.max()), float(rel.max()), tuple(map(int, worst)),
               bool(excess.max() <= 1.0))


def _numpy(t):
    return t.detach().cpu().numpy()


def compare(module, *inputs, dy=None, atol=None, rtol=None, out=print, seed=0):
    """Run ``module`` and ``to_torch(module)`` forward and backward on the same inputs.

    Floating inputs get gradients; integer inputs (token ids, class indices) and boolean
    masks pass through. A loss takes ``(logits, targets)``, the targets class indices or
    floating class probabilities, and its upstream gradient is a scalar. ``dy`` defaults to a
    random array of the output's shape (a random scalar for a loss) from ``seed``: never
    ones, which hide bugs. Rows: the output, the gradient of the
    first floating input (what normcore's backward returns; None for token ids), every
    parameter's gradient (normcore's names) and every buffer after the forward (BatchNorm's
    running statistics). Modes are copied across: training and evaluation both work.
    ``atol``/``rtol`` default to ``TOLERANCES`` for the parameters' dtype (the inputs' when
    there are none); give floating inputs in that dtype. ``out`` receives each line of the
    table (None: silent). Returns a ``BridgeReport``; normcore's parameter gradients are
    reset first.
    """
    torch = _torch()
    tmodule = to_torch(module)  # before the forward: the same weights and running statistics
    arrays = [None if x is None else np.asarray(x) for x in inputs]  # None: an absent mask
    floats = [x for x in arrays if x is not None and np.issubdtype(x.dtype, np.floating)]
    dtype = _dtype_of(module) if module.parameters() or not floats else floats[0].dtype
    d_atol, d_rtol = TOLERANCES.get(np.dtype(dtype), TOLERANCES[np.dtype(np.float32)])
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    def torch_input(x):  # floats (class probabilities too) as they are; ids, class indices as int64
        if x is None or np.issubdtype(x.dtype, np.floating):
            return None if x is None else torch.tensor(x.copy(), requires_grad=True)
        return torch.from_numpy(x.copy() if x.dtype == bool else x.astype(np.int64))
    tinputs = [torch_input(x) for x in arrays]

    module.zero_grad()
    y = np.asarray(module(*[None if x is None else x.copy() for x in arrays]))
    if dy is None:
        rng = np.random.default_rng(seed)
        dy = rng.standard_normal(y.shape).astype(y.dtype)
    dy = np.asarray(dy, dtype=y.dtype)
    dx = module.backward(dy)

    ty = tmodule(*tinputs)
    ty.backward(torch.from_numpy(dy.copy()).to(ty.dtype))

    report = BridgeReport(type(module).__name__, str(np.dtype(dtype)), atol, rtol,
                          module.training)
    if any(isinstance(m, nn.Dropout) and m.training and m.p > 0
           for _, m in module.named_modules()):
        report.notes.append("note: Dropout in training mode draws different masks in normcore "
                            "and torch;\n      expect differences (compare in eval mode)")
    report.rows.append(_row("output", y, _numpy(ty), atol, rtol))
    grads = [t for t in tinputs if t is not None and t.requires_grad]
    if dx is not None and grads:
        report.rows.append(_row("input grad", dx, _numpy(grads[0].grad), atol, rtol))
    tparams = dict(tmodule.named_parameters())
    for name, p in module.named_parameters():
        tgrad = tparams[name].grad
        theirs = np.zeros(p.shape) if tgrad is None else _numpy(tgrad)
        report.rows.append(_row(f"{name} grad", p.grad, theirs, atol, rtol))
    tbuffers = dict(tmodule.named_buffers())
    for name, b in module.named_buffers():
        report.rows.append(_row(name, b, _numpy(tbuffers[name]), atol, rtol))
    if out is not None:
        for line in report.lines():
            out(line)
    return report
