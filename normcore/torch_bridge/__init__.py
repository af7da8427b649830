"""The bridge to PyTorch: the same model in ``torch.nn``, and a side-by-side comparison.

    from normcore.torch_bridge import to_torch, compare
    tmodel = to_torch(model)         # a torch.nn.Module with model's weights, buffers and mode
    report = compare(model, x)       # forward and backward in both; a table; report.passed
    report = compare_optimizer(opt)  # 5 steps of opt and its torch.optim twin; a table

torch is imported inside the functions, never at import time: ``import normcore`` (and even
``import normcore.torch_bridge``) works without it.

How the mapping works: ``CONVERTERS`` maps a normcore class to a function ``(module, sub)``
returning the torch module, where ``sub(child)`` converts a child. Subclasses (the fast tier,
a layer you derived) use their nearest registered base class. Adding a layer or an option is
one entry. Parameter and buffer names are the same on both sides (normcore uses PyTorch's),
so the weights travel as a state dict with ``strict=True``: a mapping that forgot a parameter
fails loudly instead of comparing against a default. Where torch's layer stores the same
numbers under other names (``nn.MultiheadAttention``'s ``in_proj_weight`` holds q, k and v
stacked; ``nn.TransformerEncoderLayer`` calls the feed-forward ``linear1``, ``linear2``), the
torch module carries ``normcore_keys``: normcore key -> (torch key, rows of it), and
``key_map`` resolves every key of a model through it. Where torch has no one-to-one layer
(learned positions, DyT, the Transformer block with RMSNorm or DyT, DeepNorm's alpha, no
norm or Peri-LN's two norms, attention with QK-norm, the tiny language model), small
``torch.nn.Module`` twins are defined in ``_twins()``, built on first use, written in torch ops
with torch's own norms; they also hold the subclasses of torch's own layers that are called as
normcore's are (attention returning its output alone unless asked for its weights,
normcore's ``causal`` flag).

The other way, ``from_torch(torch_module)`` builds the normcore twin of a torch module and
loads its weights (``from_torch_supported()`` lists the torch classes it knows), e.g. to run PyTorch's own
test samples of ``nn.MultiheadAttention`` through normcore.

Dropout: in evaluation both sides are the identity and compare equal. In training the two
draw their masks from different generators, so outputs differ; ``compare`` then reports a
failure, which is the truth, not a bug of the bridge.
"""

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from . import nn, norms
from ._array import largest_finite
from .i18n import N_, translator
from .i18n.width import display_width, pad
from .module import Module, Sequential

_ = translator("cli")

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
    for _name, p in module.named_parameters():
        return p.dtype
    for _name, b in module.named_buffers():
        if np.issubdtype(b.dtype, np.floating):
            return b.dtype
    return np.dtype(np.float64)


def to_torch(module):
    """The equivalent ``torch.nn.Module``: same structure, weights, buffers, dtype and modes.

    Each torch module gets the training flag of the normcore module it stands for. Attention
    becomes torch's own ``nn.MultiheadAttention`` and a Pre-Norm or Post-Norm LayerNorm
    ``TransformerBlock`` torch's own ``nn.TransformerEncoderLayer``, whose arrays have other
    names: ``key_map(module, tmodule)`` says where each of normcore's lives. Raises
    ``TypeError`` (listing what is supported) for a module without a mapping.
    """
    torch = _torch()
    if not isinstance(module, Module):
        raise TypeError(f"to_torch expects a normcore Module, got {type(module).__name__}")
    tmodule = _structure(module)
    dtype = getattr(torch, _dtype_of(module).name)
    tmodule.to(dtype)  # floating parameters and buffers only; num_batches_tracked stays int64
    keys = key_map(module, tmodule)
    state = {k: torch.zeros_like(v) for k, v in tmodule.state_dict().items()}  # rows no key fills stay 0
    for key, value in module.state_dict().items():
        tkey, rows = keys[key]
        state[tkey][rows] = torch.from_numpy(np.array(value))
    unfilled = sorted(set(state) - {tkey for tkey, _rows in keys.values()})
    if unfilled:
        raise TypeError(f"to_torch: nothing in {type(module).__name__} maps to torch's {unfilled}")
    tmodule.load_state_dict(state, strict=True)
    return tmodule


def _structure(module):
    """The torch twin of ``module`` with torch's initial weights (``to_torch`` loads them)."""
    def sub(m):
        t = _converter(m)(m, sub)
        t.training = m.training
        return t
    return sub(module)


def key_map(module, tmodule):
    """normcore state dict key -> (torch state dict key, rows): where each of ``module``'s
    arrays lives in ``tmodule`` (its ``to_torch`` twin), ``rows`` a slice of the first axis
    (``...``: all of it). A torch module converted with ``normcore_keys`` maps the keys
    of its normcore module's subtree; every other key is the same on both sides."""
    mapped = {}  # normcore module name -> its normcore_keys, for the outermost renamed modules
    for name, _module in module.named_modules():
        if any(owner == "" or name.startswith(owner + ".") for owner in mapped):
            continue  # inside a module whose keys are already mapped
        local = getattr(tmodule.get_submodule(name), "normcore_keys", None)
        if local is not None:
            mapped[name] = local
    out = {}
    for key in module.state_dict():
        owner = next((o for o in mapped if o == "" or key.startswith(o + ".")), None)
        if owner is None:
            out[key] = (key, ...)
            continue
        prefix = f"{owner}." if owner else ""
        tkey, rows = mapped[owner][key[len(prefix):]]
        out[key] = (prefix + tkey, rows)
    return out


# --- the mapping, one entry per layer ------------------------------------------------------

@converts(norms.LayerNorm)
def _layernorm(m, sub):
    return _torch().nn.LayerNorm(m.normalized_shape, m.eps, m.elementwise_affine,
                                 bias=m.bias is not None)


@converts(norms.RMSNorm)
def _rmsnorm(m, sub):
    return _torch().nn.RMSNorm(m.normalized_shape, m.eps, m.elementwise_affine)


@converts(norms.DyT)
def _dyt(m, sub):
    return _twins().DyT(m.normalized_shape, m.alpha_init, m.weight is not None, m.bias is not None)


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


@converts(nn.Linear)
def _linear(m, sub):
    return _torch().nn.Linear(m.in_features, m.out_features, bias=m.bias is not None)


converts(nn.ReLU)(lambda m, sub: _torch().nn.ReLU())
converts(nn.Sigmoid)(lambda m, sub: _torch().nn.Sigmoid())
converts(nn.Tanh)(lambda m, sub: _torch().nn.Tanh())


converts(nn.GELU)(lambda m, sub: _torch().nn.GELU(approximate=m.approximate))


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
    return _twins().PositionalEmbedding(m.max_len, m.dim)


def attention_keys(m):
    """normcore key -> (``nn.MultiheadAttention`` key, rows) for attention ``m`` (E channels):
    q, k, v are the row blocks [0:E], [E:2E], [2E:3E] of ``in_proj_weight`` when kdim == vdim
    == E, else ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``; their biases the blocks
    of ``in_proj_bias`` (a normcore layer without a key bias leaves [E:2E] at 0, where it
    changes nothing); o is ``out_proj``; ``bias_k``, ``bias_v`` keep their names."""
    E = m.embed_dim
    packed = m.kdim == m.vdim == E
    keys = {"bias_k": ("bias_k", ...), "bias_v": ("bias_v", ...)}
    for i, name in enumerate("qkv"):
        block = slice(i * E, (i + 1) * E)
        keys[f"{name}.weight"] = ("in_proj_weight", block) if packed else (f"{name}_proj_weight", ...)
        keys[f"{name}.bias"] = ("in_proj_bias", block)
    keys.update({"o.weight": ("out_proj.weight", ...), "o.bias": ("out_proj.bias", ...)})
    return {k: keys[k] for k in m.state_dict()}


@converts(nn.MultiheadAttention, nn.MultiheadSelfAttention, nn.CausalSelfAttention)
def _multihead_attention(m, sub):
    """torch's own ``nn.MultiheadAttention`` (with the layer's ``batch_first``), called as
    normcore's layer: with (query, key, value) and the forward's options for
    ``MultiheadAttention``, with x alone for self-attention. With ``qk_norm``, which torch's
    layer lacks, the twin ``QKNormAttention`` written with torch ops."""
    if m.qk_norm is not None:
        cross = isinstance(m, nn.MultiheadAttention)
        t = (_twins().QKNormAttention if cross else _twins().QKNormSelfAttention)(
            m.embed_dim, m.num_heads, m.causal, m.add_zero_attn,
            {name: sub(child) for name, child in _named_children(m)},
            m.bias_k is not None)
        t.normcore_class = type(m)
        t.batch_first = getattr(m, "batch_first", True)
        t.normcore_args = (dict(embed_dim=m.embed_dim, num_heads=m.num_heads, bias=m.q.bias is not None,
                                add_bias_kv=m.add_bias_kv, add_zero_attn=m.add_zero_attn, kdim=m.kdim, vdim=m.vdim,
                                causal=m.causal, qk_norm=m.qk_norm, batch_first=m.batch_first) if cross else
                           dict(d_model=m.d_model, n_heads=m.n_heads, bias=m.q.bias is not None, qk_norm=m.qk_norm,
                                **({} if isinstance(m, nn.CausalSelfAttention) else {"causal": m.causal})))
        return t
    twin = _twins().MultiheadAttention if isinstance(m, nn.MultiheadAttention) else _twins().SelfAttention
    t = twin(m.embed_dim, m.num_heads, bias=m.q.bias is not None, add_bias_kv=m.add_bias_kv,
             add_zero_attn=m.add_zero_attn, kdim=m.kdim, vdim=m.vdim, batch_first=getattr(m, "batch_first", True))
    t.causal, t.normcore_keys, t.normcore_class = m.causal, attention_keys(m), type(m)
    return t


@converts(nn.FeedForward)
def _feedforward(m, sub):
    return _twins().FeedForward(sub(m.fc1), sub(m.act), sub(m.fc2))


@converts(nn.TransformerBlock)
def _block(m, sub):
    """"pre" and "post" with LayerNorm: ``nn.TransformerEncoderLayer`` (norm_first for "pre");
    the other blocks (RMSNorm, DyT, "deepnorm", "none", "peri", qk_norm): a twin of normcore's block."""
    if (m.position in ("pre", "post") and m.norm_kind == "layernorm" and m.norm1.eps == m.norm2.eps
            and m.attn.qk_norm is None):
        t = _twins().TransformerEncoderLayer(
            m.d_model, m.attn.num_heads, m.d_ff, m.drop1.p, sub(m.ffn.act), m.norm1.eps, batch_first=True,
            norm_first=m.position == "pre", bias=m.bias)
        t.self_attn.dropout = 0.0  # normcore's block drops only the residual branches (dropout1, dropout2)
        t.dropout.p = 0.0  # not the attention weights, nor the feed-forward's hidden units
        t.dropout2.p = m.drop2.p
        t.train(m.training)
        t.dropout1.training, t.dropout2.training = m.drop1.training, m.drop2.training
        keys = {f"attn.{k}": (f"self_attn.{tk}", rows) for k, (tk, rows) in attention_keys(m.attn).items()}
        names = {"norm1": "norm1", "norm2": "norm2", "ffn.fc1": "linear1", "ffn.fc2": "linear2"}
        for key in m.state_dict():
            child, _dot, leaf = key.rpartition(".")
            if child in names:
                keys[key] = (f"{names[child]}.{leaf}", ...)
        t.causal, t.normcore_keys = m.attn.causal, keys
        return t
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
    return _torch().nn.MSELoss(reduction=m.reduction)


# --- from torch: the normcore twin of a torch module -----------------------------------------

def from_torch(tmodule):
    """The normcore twin of the ``torch.nn.Module`` ``tmodule``: same structure, weights,
    buffers, dtype and training flag, e.g. ``from_torch(torch.nn.MultiheadAttention(E, H,
    add_bias_kv=True))``, so PyTorch's own test samples can be run through normcore.

    Knows the classes ``from_torch_supported()`` names (and their subclasses, such as the modules ``to_torch``
    returns): the norms, Linear, the activations, Dropout, Sequential, ``nn.MultiheadAttention``
    and ``nn.TransformerEncoderLayer`` (a ``TransformerBlock`` with ``causal=False``),
    ``nn.TransformerDecoderLayer`` (a ``TransformerDecoderBlock`` with ``causal=False``, as
    torch's layer is unless its ``tgt_mask`` makes it causal), ``to_torch``'s QK-norm attention
    twin (the attention class and options it was made from); a
    ``TypeError`` lists them for any other. The weights travel through ``key_map``: torch's
    ``in_proj_weight`` is cut into q, k and v; where normcore's attention has no key bias (no
    ``add_bias_kv``, no ``add_zero_attn``), ``in_proj_bias[E:2E]`` is dropped, which changes
    no output (softmax ignores it). ``nn.MultiheadAttention`` keeps its ``batch_first`` (and
    takes unbatched inputs, as torch's); normcore's blocks are batch first whatever torch's
    layer says: give them (B, T, E). What normcore cannot express raises
    ``ValueError`` before any weight is loaded: dropout of the attention weights or of the
    feed-forward's hidden units (set it to 0 first; in evaluation it changes nothing anyway).
    """
    torch = _torch()
    if not isinstance(tmodule, torch.nn.Module):
        raise TypeError(f"from_torch expects a torch.nn.Module, got {type(tmodule).__name__}")
    builders = _from_torch_builders()

    def sub(t):
        for cls in type(t).__mro__:
            if cls in builders:
                return builders[cls](t, sub)
        raise TypeError(f"from_torch: no normcore twin for {type(t).__name__}; supported: "
                        f"{', '.join(from_torch_supported())}")

    module = sub(tmodule)
    floating = [v for v in tmodule.state_dict().values() if v.is_floating_point()]
    if floating:
        dtype = str(floating[0].dtype).removeprefix("torch.")
        if dtype not in ("float16", "float32", "float64"):
            raise TypeError(f"from_torch: normcore's arrays are float16, float32 or float64, got torch.{dtype}; "
                            f"convert the module first, e.g. module.double()")
        module.to(dtype)
    twin = _structure(module)
    theirs, expected = tmodule.state_dict(), twin.state_dict()
    if set(theirs) != set(expected) or any(theirs[k].shape != expected[k].shape for k in theirs):
        raise ValueError(f"from_torch: {type(tmodule).__name__}'s state dict "
                         f"{[(k, tuple(v.shape)) for k, v in theirs.items()]} does not match normcore's "
                         f"twin {[(k, tuple(v.shape)) for k, v in expected.items()]}")
    keys = key_map(module, twin)
    module.load_state_dict({key: _numpy(theirs[tkey])[rows] for key, (tkey, rows) in keys.items()})
    return module.train(tmodule.training)


def from_torch_supported():
    """The names of the torch classes ``from_torch`` converts."""
    return sorted(cls.__name__ for cls in _from_torch_builders())


@functools.cache
def _from_torch_builders():
    """torch class -> ``(torch module, sub) -> normcore module`` (``sub`` converts a child),
    the classes ``from_torch`` knows; built on first use, as it needs torch."""
    tnn = _torch().nn
    F = tnn.functional

    def attention(t, sub):
        if t.dropout:
            raise ValueError(f"from_torch: normcore's MultiheadAttention has no dropout on the attention "
                             f"weights; expected dropout=0.0, got {t.dropout}")
        if isinstance(t, _twins().SelfAttention):  # to_torch's twin of a self-attention layer
            return t.normcore_class(t.embed_dim, t.num_heads, **({} if t.normcore_class is nn.CausalSelfAttention
                                                                 else {"causal": t.causal}),
                                    bias=t.in_proj_bias is not None)
        return nn.MultiheadAttention(t.embed_dim, t.num_heads, bias=t.in_proj_bias is not None,
                                     add_bias_kv=t.bias_k is not None, add_zero_attn=t.add_zero_attn,
                                     kdim=t.kdim, vdim=t.vdim, causal=getattr(t, "causal", False),
                                     batch_first=t.batch_first)

    def activation_name(act):
        if act is F.relu or isinstance(act, tnn.ReLU):
            return "relu"
        if act is F.gelu or (isinstance(act, tnn.GELU) and act.approximate == "none"):
            return "gelu"
        if isinstance(act, tnn.GELU) and act.approximate == "tanh":
            return "gelu_tanh"
        raise ValueError(f"from_torch: TransformerEncoderLayer's activation must be relu or gelu "
                         f"(a function or a module), got {act!r}")

    def encoder_layer(t, sub):
        if t.self_attn.dropout or t.dropout.p or t.dropout1.p != t.dropout2.p:
            raise ValueError(
                "from_torch: normcore's TransformerBlock drops only the two residual branches, with one p; "
                f"expected self_attn.dropout = dropout.p = 0 and dropout1.p == dropout2.p, got "
                f"{t.self_attn.dropout}, {t.dropout.p}, {t.dropout1.p}, {t.dropout2.p}")
        if t.norm1.eps != t.norm2.eps:
            raise ValueError(f"from_torch: expected norm1 and norm2 with one eps, got {t.norm1.eps}, {t.norm2.eps}")
        block = nn.TransformerBlock(t.linear1.in_features, t.self_attn.num_heads, t.linear1.out_features,
                                    "layernorm", "pre" if t.norm_first else "post", t.dropout1.p,
                                    activation=activation_name(t.activation), causal=getattr(t, "causal", False),
                                    bias=t.linear1.bias is not None)
        block.norm1.eps = block.norm2.eps = t.norm1.eps
        return block

    def decoder_layer(t, sub):
        """A TransformerDecoderBlock, causal only if ``t`` is ``to_torch``'s causal twin: torch's own
        layer is not causal by itself (its tgt_mask carries causality), so it becomes a block
        with ``causal=False``."""
        attention_dropout = (t.self_attn.dropout, t.multihead_attn.dropout, t.dropout.p)
        if any(attention_dropout) or not t.dropout1.p == t.dropout2.p == t.dropout3.p:
            raise ValueError(
                "from_torch: normcore's TransformerDecoderBlock drops only the three residual branches, with one "
                "p; expected self_attn.dropout = multihead_attn.dropout = dropout.p = 0 and dropout1.p == "
                f"dropout2.p == dropout3.p, got {attention_dropout}, {t.dropout1.p}, {t.dropout2.p}, {t.dropout3.p}")
        if not t.norm1.eps == t.norm2.eps == t.norm3.eps:
            raise ValueError(f"from_torch: expected norm1, norm2 and norm3 with one eps, got {t.norm1.eps}, "
                             f"{t.norm2.eps}, {t.norm3.eps}")
        block = nn.TransformerDecoderBlock(t.linear1.in_features, t.self_attn.num_heads, t.linear1.out_features,
                                           "layernorm", "pre" if t.norm_first else "post", t.dropout1.p,
                                           activation=activation_name(t.activation), bias=t.linear1.bias is not None,
                                           causal=getattr(t, "causal", False))
        block.norm1.eps = block.norm2.eps = block.norm3.eps = t.norm1.eps
        return block

    def running_norm(cls):
        return lambda t, sub: cls(t.num_features, t.eps, t.momentum, t.affine, t.track_running_stats,
                                  bias=t.bias is not None)

    return {
        _twins().QKNormAttention: lambda t, sub: t.normcore_class(**t.normcore_args),  # to_torch's qk_norm twin
        tnn.MultiheadAttention: attention,
        tnn.TransformerEncoderLayer: encoder_layer,
        tnn.TransformerDecoderLayer: decoder_layer,
        tnn.Linear: lambda t, sub: nn.Linear(t.in_features, t.out_features, bias=t.bias is not None),
        tnn.LayerNorm: lambda t, sub: norms.LayerNorm(t.normalized_shape, t.eps, t.elementwise_affine,
                                                      bias=t.bias is not None),
        tnn.RMSNorm: lambda t, sub: norms.RMSNorm(t.normalized_shape, t.eps, t.elementwise_affine),
        **{getattr(tnn, name): running_norm(getattr(norms, name)) for name in RUNNING_NORMS},
        tnn.GroupNorm: lambda t, sub: norms.GroupNorm(t.num_groups, t.num_channels, t.eps, t.affine,
                                                      bias=t.bias is not None),
        tnn.ReLU: lambda t, sub: nn.ReLU(),
        tnn.Sigmoid: lambda t, sub: nn.Sigmoid(),
        tnn.Tanh: lambda t, sub: nn.Tanh(),
        tnn.GELU: lambda t, sub: nn.GELU(approximate=t.approximate),
        tnn.Dropout: lambda t, sub: nn.Dropout(t.p),
        tnn.Sequential: lambda t, sub: Sequential(*[sub(child) for child in t]),
    }


@functools.cache
def _twins():
    """torch.nn twins of the normcore modules torch has no one-to-one layer for."""
    torch = _torch()
    F = torch.nn.functional

    class PositionalEmbedding(torch.nn.Module):
        """y = x + weight[:T], as normcore.nn.PositionalEmbedding."""

        def __init__(self, max_len, dim):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.empty(max_len, dim))

        def forward(self, x):
            return x + self.weight[: x.shape[-2]]

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

    def torch_masks(Tq, Tk, key_padding_mask, attn_mask, causal, dtype):
        """normcore's masks for torch's attention: the causal mask merged into attn_mask,
        (B, H, Tq, Tk) reshaped to torch's (B * H, Tq, Tk), and both masks made additive
        when one is boolean and the other floating (torch deprecates mixing the two)."""
        def additive(mask):
            if mask.dtype != torch.bool:
                return mask.to(dtype)
            return torch.zeros(mask.shape, dtype=dtype).masked_fill(mask, -torch.inf)
        if causal:
            future = torch.ones(Tq, Tk, dtype=torch.bool).triu(1)
            if attn_mask is None:
                attn_mask = future
            else:
                attn_mask = attn_mask | future if attn_mask.dtype == torch.bool else attn_mask + additive(future)
        if attn_mask is not None and attn_mask.dim() == 4:
            attn_mask = attn_mask.reshape(-1, Tq, Tk)
        if key_padding_mask is not None and attn_mask is not None and (
                (key_padding_mask.dtype == torch.bool) != (attn_mask.dtype == torch.bool)):
            key_padding_mask, attn_mask = additive(key_padding_mask), additive(attn_mask)
        return key_padding_mask, attn_mask

    def lengths(query, key, batch_first):
        """(Tq, Tk) of attention inputs, batched in either layout or unbatched."""
        axis = 0 if query.dim() == 2 or not batch_first else 1
        return query.shape[axis], key.shape[axis]

    class MultiheadAttention(torch.nn.MultiheadAttention):
        """``torch.nn.MultiheadAttention`` itself, called as normcore's layer:
        ``forward(query, key, value, key_padding_mask=None, attn_mask=None, *, need_weights=None,
        average_attn_weights=True, is_causal=False)``, with normcore's ``causal`` flag merged
        into attn_mask. need_weights left out returns only the output, on the math path
        (``need_weights=True``: a fully masked row gives NaN, as in normcore); given, it is
        torch's and the pair is returned."""

        causal = False

        def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, *, need_weights=None,
                    average_attn_weights=True, is_causal=False):
            kpm, am = torch_masks(*lengths(query, key, self.batch_first), key_padding_mask, attn_mask,
                                  self.causal, query.dtype)
            out = super().forward(query, key, value, key_padding_mask=kpm, attn_mask=am,
                                  need_weights=True if need_weights is None else need_weights,
                                  average_attn_weights=average_attn_weights, is_causal=is_causal)
            return out[0] if need_weights is None else out

    class SelfAttention(MultiheadAttention):
        """``torch.nn.MultiheadAttention`` called as normcore's self-attention:
        ``forward(x, key_padding_mask=None, attn_mask=None)`` attends from x to x."""

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            return super().forward(x, x, x, key_padding_mask, attn_mask)

    class QKNormAttention(torch.nn.Module):
        """normcore's ``MultiheadAttention`` with ``qk_norm`` in plain torch ops (torch's layer has
        no QK-norm): q, k, v, o are ``nn.Linear``, q_norm and k_norm torch's ``nn.RMSNorm`` or
        ``nn.LayerNorm`` over D, applied per head after the split and before 1/sqrt(D); bias_k
        is appended before the split (and normalised), the zero key after the norm. The softmax
        is explicit, so a fully masked row gives NaN, as normcore and torch's math path do.
        Masks in normcore's convention (boolean True = masked out, floating added)."""

        def __init__(self, embed_dim, num_heads, causal, add_zero_attn, children, add_bias_kv):
            super().__init__()
            self.embed_dim, self.num_heads, self.causal = embed_dim, num_heads, causal
            self.add_zero_attn = add_zero_attn
            if add_bias_kv:
                self.bias_k = torch.nn.Parameter(torch.empty(1, 1, embed_dim))
                self.bias_v = torch.nn.Parameter(torch.empty(1, 1, embed_dim))
            else:
                self.bias_k = self.bias_v = None
            for name, child in children.items():
                self.add_module(name, child)

        batch_first = True

        def forward(self, query, key, value, key_padding_mask=None, attn_mask=None, *, need_weights=None,
                    average_attn_weights=True, is_causal=False):
            """normcore's forward and its options: an unbatched query gains a batch axis, a
            sequence-first one is transposed; the weights as normcore and torch return them.
            is_causal changes nothing: normcore accepts it only with the causal mask itself."""
            unbatched = query.dim() == 2
            if unbatched:
                query, key, value = query[None], key[None], value[None]
                key_padding_mask = None if key_padding_mask is None else key_padding_mask[None]
            elif not self.batch_first:
                query, key, value = (t.transpose(0, 1) for t in (query, key, value))
            y, P = self.attend(query, key, value, key_padding_mask, attn_mask)
            y = y[0] if unbatched else y if self.batch_first else y.transpose(0, 1)
            if need_weights is None:
                return y
            if not need_weights:
                return y, None
            w = P.mean(1) if average_attn_weights else P
            return y, (w[0] if unbatched else w)

        def attend(self, query, key, value, key_padding_mask, attn_mask):
            """(output, P) on batch-first inputs."""
            (B, Tq, E), Tk, H = query.shape, key.shape[1], self.num_heads
            D = E // H

            def split(t):
                return t.reshape(B, t.shape[1], H, D).transpose(1, 2)

            q = self.q_norm(split(self.q(query)))
            k, v = self.k(key), self.v(value)
            if self.bias_k is not None:
                k = torch.cat([k, self.bias_k.expand(B, 1, E)], dim=1)
                v = torch.cat([v, self.bias_v.expand(B, 1, E)], dim=1)
            k, v = self.k_norm(split(k)), split(v)
            if self.add_zero_attn:
                zero = torch.zeros(B, H, 1, D, dtype=q.dtype)
                k, v = torch.cat([k, zero], dim=2), torch.cat([v, zero], dim=2)
            S = q @ k.transpose(-1, -2) / math.sqrt(D)
            M = torch.zeros(Tq, Tk, dtype=S.dtype)
            if self.causal:
                M = M.masked_fill(torch.ones(Tq, Tk, dtype=torch.bool).triu(1), -torch.inf)
            for mask, padding in ((key_padding_mask, True), (attn_mask, False)):
                if mask is None:
                    continue
                add = (torch.zeros(mask.shape, dtype=S.dtype).masked_fill(mask, -torch.inf)
                       if mask.dtype == torch.bool else mask.to(S.dtype))
                if add.dim() == 3:  # torch's (B * H, Tq, Tk)
                    add = add.reshape(B, H, Tq, Tk)
                M = M + (add[:, None, None, :] if padding else add)
            S = S + F.pad(M, (0, k.shape[2] - Tk))  # the added keys are never masked
            P = torch.softmax(S, dim=-1)
            return self.o((P @ v).transpose(1, 2).reshape(B, Tq, E)), P

    class QKNormSelfAttention(QKNormAttention):
        """``QKNormAttention`` called as normcore's self-attention: ``forward(x, key_padding_mask=None,
        attn_mask=None)``."""

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            return super().forward(x, x, x, key_padding_mask, attn_mask)

    class TransformerEncoderLayer(torch.nn.TransformerEncoderLayer):
        """``torch.nn.TransformerEncoderLayer`` itself (batch_first), called as normcore's block:
        ``forward(x, key_padding_mask=None, attn_mask=None)``, with ``causal`` merged into the
        mask. Its self-attention runs with ``need_weights=False`` (F.scaled_dot_product_attention):
        equal to normcore except on a fully masked row. With gradients enabled it never takes
        the fused fast path."""

        causal = False

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            kpm, am = torch_masks(x.shape[1], x.shape[1], key_padding_mask, attn_mask, self.causal, x.dtype)
            return super().forward(x, src_mask=am, src_key_padding_mask=kpm)

    class FeedForward(torch.nn.Module):
        def __init__(self, fc1, act, fc2):
            super().__init__()
            self.fc1, self.act, self.fc2 = fc1, act, fc2

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    def residual_sublayers(block, x, fs):
        """normcore's residual placement in torch, for a twin block with children norm{i},
        drop{i} (and norm{i}_out): sub-layer i is fs[i - 1] (pre: x + drop(F(Norm(x)));
        peri: x + Norm_out(drop(F(Norm(x)))); none: x + drop(F(x)); post/deepnorm:
        Norm(alpha x + drop(F(x))))."""
        for i, f in enumerate(fs, start=1):
            norm = getattr(block, f"norm{i}", None)
            drop = getattr(block, f"drop{i}")
            if block.position == "pre":
                x = x + drop(f(norm(x)))
            elif block.position == "peri":
                x = x + getattr(block, f"norm{i}_out")(drop(f(norm(x))))
            elif block.position == "none":
                x = x + drop(f(x))
            else:
                x = norm(block.alpha * x + drop(f(x)))
        return x

    class TransformerBlock(torch.nn.Module):
        """pre: x + drop(F(Norm(x))); post/deepnorm: Norm(alpha x + drop(F(x)));
        none: x + drop(F(x)); peri: x + Norm_out(drop(F(Norm(x)))); for F = attn (norm1, drop1,
        norm1_out), then ffn (norm2, drop2, norm2_out)."""

        def __init__(self, position, alpha, children):
            super().__init__()
            self.position, self.alpha = position, alpha
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            def attn(h):
                return self.attn(h, key_padding_mask, attn_mask)
            return residual_sublayers(self, x, (attn, self.ffn))

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
        PositionalEmbedding=PositionalEmbedding, DyT=DyT, SelfAttention=SelfAttention,
        QKNormAttention=QKNormAttention, QKNormSelfAttention=QKNormSelfAttention,
        MultiheadAttention=MultiheadAttention, TransformerEncoderLayer=TransformerEncoderLayer,
        FeedForward=FeedForward, TransformerBlock=TransformerBlock, Stages=Stages, torch_masks=torch_masks,
        residual_sublayers=residual_sublayers))


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
    shown: str = ""  # the name as the table shows it, in the language in use (default: name)

    def line(self):
        """One table line (a name wider than 30 columns gets a line of its own); <= 80 columns."""
        shape = "x".join(map(str, self.shape)) or "()"
        index = "(" + ",".join(map(str, self.index)) + ")"
        if len(index) > 14:
            index = index[:12] + ".)"
        verdict = _("ok") if self.passed else _("FAIL")
        rest = (f"{shape[-9:]:>9} {self.max_abs:8.1e} {self.max_rel:8.1e} {index:>14} "
                f"{pad(verdict, 4, '>')}")
        name = self.shown or self.name
        if display_width(name) > 30:
            return f"{name[:80]}\n{'':30} {rest}"
        return f"{pad(name, 30)} {rest}"


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

    def head(self):
        """The lines above the table: what was compared, and how a row is judged."""
        title = (N_("{module} against torch.nn, {dtype}, train mode") if self.training
                 else N_("{module} against torch.nn, {dtype}, eval mode"))
        return [_(title).format(module=self.module[:40], dtype=self.dtype),
                *_("ok where |ours - torch| <= atol s + rtol |torch|, atol={atol}, rtol={rtol}, "
                   "with s\nthe tensor's largest |torch| (for a gradient: the largest of all the "
                   "gradients,\nso that one 0 in theory is judged at the scale of its backward "
                   "pass);\nmax rel = max abs / s").format(
                       atol=f"{self.atol:.0e}", rtol=f"{self.rtol:.0e}").splitlines()]

    def lines(self):
        names = [_("tensor"), _("shape"), _("max abs"), _("max rel"), _("worst index")]
        cols = " ".join([pad(names[0], 30)] + [pad(name, w, ">") for name, w in zip(names[1:], (9, 8, 8, 14))]
                        + [" " * 4])
        failed = sum(not r.passed for r in self.rows)
        verdict = (_("all match") if self.passed
                   else _("{failed} of {total} differ").format(failed=failed, total=len(self.rows)))
        rows = "\n".join([r.line() for r in self.rows] + self.notes).splitlines()
        return [*self.head(), cols, "-" * 78, *rows, verdict]

    def __str__(self):
        return "\n".join(self.lines())


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


def _row(name, ours, theirs, atol, rtol, scale=None, shown=""):
    """Compare two arrays elementwise: ok where |ours - theirs| <= atol s + rtol |theirs|, s the
    ``scale`` (default: the largest finite |theirs|). Equal values (infinities too) and NaN on
    both sides agree; a NaN on one side only is an infinite difference. ``shown``: the row's
    name in the table, when it is not ``name``."""
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(theirs, dtype=np.float64)
    if a.shape != b.shape:
        return Row(name, a.shape, np.inf, np.inf, (), False, shown)
    diff = np.abs(a - b)
    same_nan = np.isnan(a) & np.isnan(b)
    diff = np.where(same_nan | (a == b), 0.0, diff)  # equal infinities and NaNs agree
    diff = np.where(np.isnan(diff), np.inf, diff)
    if a.size == 0:
        return Row(name, a.shape, 0.0, 0.0, (), True, shown)
    s = largest_finite(b) if scale is None else scale
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # s = 0: torch's all 0
        excess = np.where(diff > 0, diff / (atol * s + rtol * np.abs(np.nan_to_num(b))), 0.0)
        rel = diff.max() / s if diff.max() > 0 else 0.0
    worst = np.unravel_index(int(np.argmax(excess)), a.shape)
    return Row(name, a.shape, float(diff.max()), float(rel), tuple(map(int, worst)),
               bool(excess.max() <= 1.0), shown)


def _numpy(t):
    return t.detach().cpu().numpy()


def compare(module, *inputs, dy=None, atol=None, rtol=None, out=print, seed=0, options=None):
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
    there are none); floating inputs must be in that dtype (a ``TypeError`` says so). ``atol``
    is relative to the tensor's largest |value| in torch, for a gradient to the largest of
    all the gradients (input and parameters): a gradient that is 0 in theory (a bias right
    before a BatchNorm) is rounding noise on both sides, judged at the scale of its pass.
    ``out`` receives each line of the table (None: silent). Returns a ``BridgeReport``;
    normcore's parameter gradients are reset first.

    A module whose backward returns a tuple, as ``MultiheadAttention``'s (dquery, dkey,
    dvalue), gets one row per floating input instead: "input 0 grad", "input 1 grad", ...
    ``options``: keyword arguments both forwards get (attention's ``need_weights``,
    ``average_attn_weights``, ``is_causal``). A forward returning (output, weights), as
    attention's with ``need_weights=True``, gets a row for the weights, and a random upstream
    gradient of the weights too (``backward(dy, dweights)``), so that their backward is compared.
    """
    torch = _torch()
    tmodule = to_torch(module)  # before the forward: the same weights and running statistics
    arrays = [None if x is None else np.asarray(x) for x in inputs]  # None: an absent mask
    floats = [x for x in arrays if x is not None and np.issubdtype(x.dtype, np.floating)]
    dtype = _dtype_of(module) if module.parameters() or not floats else floats[0].dtype
    for i, x in enumerate(floats):
        if x.dtype != dtype:
            raise TypeError(f"compare: {type(module).__name__} computes in {np.dtype(dtype)} (its "
                            f"parameters'); floating input {i} is {x.dtype}: give it as "
                            f"x.astype(np.{np.dtype(dtype)})")
    d_atol, d_rtol = TOLERANCES.get(np.dtype(dtype), TOLERANCES[np.dtype(np.float32)])
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    def torch_input(x):  # floats (class probabilities too) as they are; ids, class indices as int64
        if x is None or np.issubdtype(x.dtype, np.floating):
            return None if x is None else torch.tensor(x.copy(), requires_grad=True)
        return torch.from_numpy(x.copy() if x.dtype == bool else x.astype(np.int64))
    tinputs = [torch_input(x) for x in arrays]

    options = {} if options is None else options
    module.zero_grad()
    y, w = _output_and_weights(module(*[None if x is None else x.copy() for x in arrays], **options))
    y = np.asarray(y)  # a loss's scalar too
    rng = np.random.default_rng(seed)
    if dy is None:
        dy = rng.standard_normal(y.shape).astype(y.dtype)
    dy = np.asarray(dy, dtype=y.dtype)
    dw = None if w is None else rng.standard_normal(w.shape).astype(w.dtype)
    dx = module.backward(dy) if w is None else module.backward(dy, dw)

    ty, tw = _output_and_weights(tmodule(*tinputs, **options))
    touts, tgrads_out = [ty], [torch.from_numpy(dy.copy()).to(ty.dtype)]
    if w is not None:
        touts.append(tw)
        tgrads_out.append(torch.from_numpy(dw.copy()).to(tw.dtype))
    torch.autograd.backward(touts, tgrads_out)

    report = BridgeReport(type(module).__name__, str(np.dtype(dtype)), atol, rtol,
                          module.training)
    if any(isinstance(m, nn.Dropout) and m.training and m.p > 0
           for _name, m in module.named_modules()):
        report.notes.append(_("note: Dropout in training mode draws different masks in normcore "
                              "and torch;\n      expect differences (compare in eval mode)"))
    report.rows.append(_row("output", y, _numpy(ty), atol, rtol, shown=_("output")))
    if w is not None:
        report.rows.append(_row("attention weights", w, _numpy(tw), atol, rtol, shown=_("attention weights")))
    gradients = []  # (row name, shown name, ours, torch's): the input gradients, then every parameter's
    tgrads = [t for t in tinputs if t is not None and t.requires_grad]
    if isinstance(dx, tuple):  # one gradient per floating input, in order (attention: query, key, value)
        gradients += [(f"input {i} grad", _("input {i} grad").format(i=i), ours, _numpy(t.grad))
                      for i, (ours, t) in enumerate(zip(dx, tgrads))]
    elif dx is not None and tgrads:
        gradients.append(("input grad", _("input grad"), dx, _numpy(tgrads[0].grad)))
    keys = key_map(module, tmodule)
    tparams = dict(tmodule.named_parameters())
    for name, p in module.named_parameters():
        tkey, rows = keys[name]
        tgrad = tparams[tkey].grad
        gradients.append((f"{name} grad", _("{name} grad").format(name=name), p.grad,
                          np.zeros(p.shape) if tgrad is None else _numpy(tgrad)[rows]))
    scale = max((largest_finite(theirs) for *_rest, theirs in gradients), default=0.0)  # of the pass
    for name, shown, ours, theirs in gradients:
        report.rows.append(_row(name, ours, theirs, atol, rtol, scale, shown))
    tbuffers = dict(tmodule.named_buffers())
    for name, b in module.named_buffers():
        tkey, rows = keys[name]
        report.rows.append(_row(name, b, _numpy(tbuffers[tkey])[rows], atol, rtol))
    if out is not None:
        for line in report.lines():
            out(line)
    return report


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


def _output_and_weights(out):
    """(output, weights) of a forward: attention asked for its weights returns the pair
    (output, weights or None); any other forward its output alone (weights None)."""
    return (out[0], out[1]) if isinstance(out, tuple) else (out, None)


# --- the decoder block and the encoder-decoder model ---------------------------------------

def decoder_keys(m):
    """normcore key -> (``nn.TransformerDecoderLayer`` key, rows) for decoder block ``m``:
    self_attn and cross_attn are the layer's ``self_attn`` and ``multihead_attn`` (through
    ``attention_keys``), the feed-forward's fc1 and fc2 its ``linear1`` and ``linear2``, the
    norms keep their names."""
    keys = {}
    for ours, theirs in (("self_attn", "self_attn"), ("cross_attn", "multihead_attn")):
        for k, (tk, rows) in attention_keys(getattr(m, ours)).items():
            keys[f"{ours}.{k}"] = (f"{theirs}.{tk}", rows)
    names = {"norm1": "norm1", "norm2": "norm2", "norm3": "norm3", "ffn.fc1": "linear1", "ffn.fc2": "linear2"}
    for key in m.state_dict():
        child, _dot, leaf = key.rpartition(".")
        if child in names:
            keys[key] = (f"{names[child]}.{leaf}", ...)
    return keys


@converts(nn.TransformerDecoderBlock)
def _decoder_block(m, sub):
    """"pre" and "post" with LayerNorm: ``nn.TransformerDecoderLayer`` (norm_first for "pre"),
    called with the causal mask as ``tgt_mask``; the other blocks (RMSNorm, DyT, "deepnorm",
    "none", "peri", qk_norm): a twin of normcore's block."""
    if (m.position in ("pre", "post") and m.norm_kind == "layernorm" and m.norm1.eps == m.norm2.eps == m.norm3.eps
            and m.self_attn.qk_norm is None):
        t = _decoder_twins().TransformerDecoderLayer(
            m.d_model, m.self_attn.num_heads, m.d_ff, m.drop1.p, sub(m.ffn.act), m.norm1.eps, batch_first=True,
            norm_first=m.position == "pre", bias=m.bias)
        t.self_attn.dropout = t.multihead_attn.dropout = 0.0  # normcore drops only the residual branches,
        t.dropout.p = 0.0  # not the attention weights, nor the feed-forward's hidden units
        t.dropout2.p, t.dropout3.p = m.drop2.p, m.drop3.p
        t.train(m.training)
        t.causal, t.normcore_keys = m.self_attn.causal, decoder_keys(m)
        return t
    children = {name: sub(child) for name, child in _named_children(m)}
    return _decoder_twins().TransformerDecoderBlock(m.position, m.alpha, children)


@converts(nn.TinySeq2Seq)
def _seq2seq(m, sub):
    return _decoder_twins().Seq2Seq({name: sub(child) for name, child in _named_children(m)})


@functools.cache
def _decoder_twins():
    """torch twins of the decoder block and of the encoder-decoder model, built on first use."""
    torch = _torch()
    torch_masks = _twins().torch_masks

    class TransformerDecoderLayer(torch.nn.TransformerDecoderLayer):
        """``torch.nn.TransformerDecoderLayer`` itself (batch_first), called as normcore's
        decoder block: ``forward(x, memory, tgt_key_padding_mask=None,
        memory_key_padding_mask=None, tgt_mask=None, memory_mask=None)``. torch's layer is not
        causal by itself; normcore's self-attention is when ``causal`` (the default), and then the
        causal mask is merged into ``tgt_mask`` (``tgt_is_causal`` left False: the merged mask is
        used as it is)."""

        causal = True

        def forward(self, x, memory, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_mask=None,
                    memory_mask=None):
            T, S = x.shape[1], memory.shape[1]
            tkpm, tmask = torch_masks(T, T, tgt_key_padding_mask, tgt_mask, self.causal, x.dtype)
            mkpm, mmask = torch_masks(T, S, memory_key_padding_mask, memory_mask, False, x.dtype)
            return super().forward(x, memory, tgt_mask=tmask, memory_mask=mmask, tgt_key_padding_mask=tkpm,
                                   memory_key_padding_mask=mkpm)

    class TransformerDecoderBlock(torch.nn.Module):
        """normcore's decoder block in torch, for the positions and norms torch's layer lacks:
        pre: x + drop(F(Norm(x))); post/deepnorm: Norm(alpha x + drop(F(x))); none: x + drop(F(x));
        peri: x + Norm_out(drop(F(Norm(x)))); for F = self_attn (norm1, drop1, norm1_out),
        cross_attn to memory (norm2, drop2, norm2_out), ffn (norm3, drop3, norm3_out)."""

        def __init__(self, position, alpha, children):
            super().__init__()
            self.position, self.alpha = position, alpha
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, x, memory, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_mask=None,
                    memory_mask=None):
            def self_attn(h):
                return self.self_attn(h, tgt_key_padding_mask, tgt_mask)

            def cross_attn(h):
                return self.cross_attn(h, memory, memory, memory_key_padding_mask, memory_mask)

            return _twins().residual_sublayers(self, x, (self_attn, cross_attn, self.ffn))

    class Seq2Seq(torch.nn.Module):
        """TinySeq2Seq in torch, under normcore's names: src_emb, src_pos, encoder (blocks
        taking the source padding mask), enc_norm, tgt_emb, tgt_pos, decoder (blocks taking
        the memory and the same mask), dec_norm, head."""

        def __init__(self, children):
            super().__init__()
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, src, tgt, src_key_padding_mask=None):
            s = self.src_pos(self.src_emb(src))
            for block in self.encoder:
                s = block(s, src_key_padding_mask)
            memory = self.enc_norm(s) if hasattr(self, "enc_norm") else s
            t = self.tgt_pos(self.tgt_emb(tgt))
            for block in self.decoder:
                t = block(t, memory, memory_key_padding_mask=src_key_padding_mask)
            return self.head(self.dec_norm(t) if hasattr(self, "dec_norm") else t)

    return type("DecoderTwins", (), dict(TransformerDecoderLayer=TransformerDecoderLayer,
                                         TransformerDecoderBlock=TransformerDecoderBlock, Seq2Seq=Seq2Seq))
