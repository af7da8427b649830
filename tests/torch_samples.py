"""PyTorch's own test samples mapped onto normcore: OpInfo's ``op_db`` and ModuleInfo's ``module_db``.

PyTorch tests every operator and module on the samples these databases generate (shapes,
constructor arguments, masks, reductions, empty and unbatched inputs). ``tests/test_torch_samples.py``
runs every one of them that normcore can express on both normcore and PyTorch and compares
the results; this module turns a sample into that comparison.

A **sample** is one entry of the database for one op or module, dtype and (for modules)
training mode. A **mapper** (one per kind of op or module, in ``MAPPERS``) reads a sample and
returns a ``Case``: normcore's layer holding the sample's weights, how to call its forward and
backward on NumPy inputs, and how to call PyTorch. Where the semantics are the same and only
the layout differs (an unbatched input, ``batch_first=False``, attention's (B*H, T, S) mask,
a 0-d input to softmax) the mapper adapts the layout on normcore's side and undoes it on the
results (``nn.MultiheadAttention``'s twin takes PyTorch's layouts, masks and forward options
itself, and returns the attention weights, compared with their gradient). A sample whose
configuration normcore does not have raises ``Unmappable`` with the reason; the test counts
those by reason and requires each to be one normcore refuses by design (``BY_DESIGN``) or an
option it is adding (``NOT_YET``).

Every comparison runs PyTorch in the sample's dtype and, for float32, also in float64 on the
same rounded values (``test_differential_torch.agree`` judges the errors). The results are
dicts of NumPy arrays: ``output``, ``d<input>`` for each differentiable input, ``d<parameter>``
for every parameter, and every buffer after the forward (running statistics).
"""

import copy
import functools
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import normcore
from normcore import torch_bridge

DTYPES = (torch.float64, torch.float32)
NP_DTYPE = {torch.float64: np.float64, torch.float32: np.float32}
NORM_CLASSES = ("LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm",
                "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")


class Unmappable(Exception):
    """A sample whose configuration normcore does not have; ``str(exc)`` is the reason."""


def not_yet(feature):
    """The reason for a feature being added to normcore on another line of work."""
    return Unmappable(f"not yet in normcore: {feature}")


# Why normcore refuses a configuration a sample has, by design: Unmappable's reason -> why.
BY_DESIGN = {
    "dropout inside attention (random)":
        "normcore's attention has no dropout on the attention weights (its blocks drop the residual "
        "branches only); a random mask could not be compared anyway",
    "eps < 0 (normcore requires eps >= 0)":
        "with eps < 0, var + eps can be negative and its square root NaN; normcore's norms refuse it "
        "(ValueError), where PyTorch's functional form computes it",
    "momentum outside [0, 1]":
        "momentum is the new batch's weight in a running average, which outside [0, 1] is no average; "
        "normcore's BatchNorm and InstanceNorm refuse it (ValueError)",
    "batch_norm on a 1-D input (normcore: 2-D to 5-D)":
        "a 1-D input has no batch axis to average over; torch.nn.BatchNorm1d refuses it too (only "
        "the functional form takes it), and so does normcore's BatchNorm1d",
}

# Options normcore is adding (their samples map once they are in): Unmappable's reason -> the option.
NOT_YET: dict[str, str] = {}  # every option PyTorch's samples use is in normcore


# --- samples ---------------------------------------------------------------------------------

@dataclass
class Sample:
    """One database entry: ``data`` is a SampleInput (op) or a ModuleInput (module)."""
    kind: str  # "op" or "module"
    name: str  # "nn.functional.layer_norm", "nn.LayerNorm", ...
    dtype: torch.dtype
    training: bool | None  # modules only
    index: int
    data: Any

    @property
    def label(self):
        mode = "" if self.training is None else (" train" if self.training else " eval")
        desc = getattr(self.data, "desc", "") or getattr(self.data, "name", "")
        return f"{self.name} {str(self.dtype)[6:]}{mode} #{self.index}" + (f" ({desc})" if desc else "")


@functools.cache
def _databases():
    """(op_db, module_db), imported on first use: building them takes seconds, which a test
    process that collects this module but runs none of its samples need not spend."""
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db
    return op_db, module_db


def _infos(db, names):
    return [info for info in db if info.name in names]


@functools.cache
def samples(name, dtype):
    """Every sample of the op or module ``name`` in ``dtype`` (both training modes for modules).
    Seeded: the same values on every run."""
    torch.manual_seed(0)
    found = []
    if name in OP_MAPPERS:
        for op in _infos(_databases()[0], {name}):
            for s in op.sample_inputs("cpu", dtype, requires_grad=True):
                found.append(Sample("op", name, dtype, None, len(found), s))
    else:
        for info in _infos(_databases()[1], {name}):
            for training in (True, False):
                for m in info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=True,
                                                 training=training):
                    found.append(Sample("module", name, dtype, training, len(found), m))
    return found


# --- a case: one sample on both sides ---------------------------------------------------------

@dataclass
class Case:
    """One sample made runnable on both sides.

    ``ours`` is normcore's layer holding the sample's weights and mode; ``forward(ours, arrays)``
    runs it on the NumPy inputs (``arrays``, by name) and returns the output;
    ``backward(ours, dy)`` returns {name: gradient} for the names in ``grads`` (for an op whose
    weights are inputs, those too). ``theirs(module, **tensors)`` is PyTorch's call; ``module``
    (the torch module with the same state, or None for an op) is copied and cast per run.
    ``state`` names input tensors PyTorch updates in place (running statistics of a functional
    batch_norm), compared after the forward with the entries of ``ours.state_dict()``.
    ``their_grads(module)`` gives the torch module's parameter gradients under normcore's names.
    ``check`` replaces the comparison for a random op (dropout in training): it gets the case.
    """
    ours: Any
    forward: Callable
    backward: Callable
    theirs: Callable
    tensors: dict
    grads: tuple = ("input",)
    module: Any = None
    state: tuple = ()
    their_grads: Callable | None = None
    check: Callable | None = None


def upstream(shape, dtype, seed=1234):
    """The random upstream gradient both sides get (never ones: they hide missing terms)."""
    return np.asarray(np.random.default_rng(seed).standard_normal(shape)).astype(dtype)


WEIGHTS_SEED = 4321  # the upstream gradient of attention weights: another draw than the output's


def weights_upstream(shape, np_dtype):
    """The upstream gradient of returned attention weights: random in float64, where the
    weights' backward is held to 1e-10; zero in float32. (Measured on PyTorch's float32
    samples with a random one: normcore's error over PyTorch's own had median 1.0 and tails
    from 0.12 to 8 on either side, plain rounding, and one gradient went past the float32
    bound; the float32 comparison judges rounding, which the weights' path does not change.)"""
    if np_dtype == np.float64:
        return upstream(shape, np_dtype, WEIGHTS_SEED)
    return np.zeros(shape, np_dtype)


def output_and_weights(out):
    """(output, attention weights or None): attention returns the pair (output, weights or
    None) when asked for its weights, every other forward its output alone."""
    return (out[0], out[1]) if isinstance(out, tuple) else (out, None)


def as_numpy(t):
    return t.detach().clone().numpy() if isinstance(t, torch.Tensor) else t


def run_theirs(case, dtype, np_dtype):
    """PyTorch on the case in ``dtype``: {output, d<input>..., d<parameter>..., buffers...}."""
    module = None if case.module is None else copy.deepcopy(case.module).to(dtype)
    tensors = {}
    for key, t in case.tensors.items():
        if isinstance(t, torch.Tensor) and t.is_floating_point():
            t = t.detach().clone().to(dtype).requires_grad_(key in case.grads)
        tensors[key] = t
    y, w = output_and_weights(case.theirs(module, **tensors))
    outputs, upstreams = [y], [torch.from_numpy(upstream(tuple(y.shape), np_dtype)).to(dtype)]
    if w is not None:
        outputs.append(w)
        upstreams.append(torch.from_numpy(weights_upstream(tuple(w.shape), np_dtype)).to(dtype))
    torch.autograd.backward(outputs, upstreams)
    got = {"output": as_numpy(y)} | ({} if w is None else {"weights": as_numpy(w)})
    for key in case.grads:
        g = tensors[key].grad
        got[f"d{key}"] = np.zeros(tuple(tensors[key].shape), NP_DTYPE[dtype]) if g is None else as_numpy(g)
    if module is not None:
        grads = case.their_grads(module) if case.their_grads else {
            name: (torch.zeros_like(p) if p.grad is None else p.grad) for name, p in module.named_parameters()}
        got.update({f"d{name}": as_numpy(g) for name, g in grads.items()})
        params = {name for name, _ in module.named_parameters()}
        got.update({k: as_numpy(v) for k, v in module.state_dict().items() if k not in params})
    got.update({key: as_numpy(tensors[key]) for key in case.state})
    return got


def run_ours(case, np_dtype):
    """normcore on the case: the same keys as ``run_theirs``."""
    layer = case.ours
    arrays = {}
    for key, t in case.tensors.items():
        arrays[key] = t.detach().numpy().copy() if isinstance(t, torch.Tensor) else t
    y, w = output_and_weights(case.forward(layer, arrays))
    y = np.asarray(y)
    dy = upstream(y.shape, np_dtype)
    grads = case.backward(layer, dy) if w is None else case.backward(layer, dy, weights_upstream(w.shape, np_dtype))
    got = {"output": y, **{f"d{key}": grads[key] for key in case.grads}} | ({} if w is None else {"weights": w})
    if case.module is not None:
        got.update({f"d{name}": p.grad for name, p in layer.named_parameters()})
        params = {name for name, _ in layer.named_parameters()}
        got.update({k: v for k, v in layer.state_dict().items() if k not in params})
    state = layer.state_dict() if case.state else {}
    got.update({key: state[key] for key in case.state})
    return got


def randomize(module, seed=0):
    """Random values for the state PyTorch initialises to constants (a norm's gamma = 1 and
    beta = 0, zero biases, running statistics), so that no term can hide behind a 1 or a 0.
    Weights PyTorch already draws at random are kept."""
    rng = np.random.default_rng(seed)
    state = {}
    for key, value in module.state_dict().items():
        leaf = key.rsplit(".", 1)[-1]
        if leaf == "num_batches_tracked":
            new = torch.tensor(int(rng.integers(0, 6)))
        elif leaf == "running_var":
            new = torch.from_numpy(rng.uniform(0.5, 2.0, tuple(value.shape)))
        elif value.is_floating_point() and (value.numel() < 2 or bool((value == value.flatten()[0]).all())):
            new = torch.from_numpy(rng.standard_normal(tuple(value.shape)) * 0.5 + (leaf == "weight"))
        else:
            continue
        state[key] = new.to(value.dtype)
    module.load_state_dict(state, strict=False)
    return module


# --- helpers the mappers share ---------------------------------------------------------------

def bound(fn, args, kwargs):
    """The arguments of a call of ``fn`` by parameter name, defaults filled in."""
    b = inspect.signature(fn).bind(*args, **kwargs)
    b.apply_defaults()
    return dict(b.arguments)


def changed(fn, args, kwargs, ignore=()):
    """The arguments of a call of ``fn`` that differ from its defaults (but those in ``ignore``)."""
    defaults = {k: p.default for k, p in inspect.signature(fn).parameters.items()}
    return {k: v for k, v in bound(fn, args, kwargs).items() if k not in ignore and v is not defaults[k]
            and not (isinstance(v, (int, float, str)) and v == defaults[k])}


def accepts(cls, name):
    """Whether normcore's class ``cls`` takes the constructor argument ``name``."""
    return name in inspect.signature(cls).parameters


def np_dtype_of(sample):
    return NP_DTYPE[sample.dtype]


def forward_inputs(sample):
    """A module sample's forward arguments: (positional tensors, keyword arguments)."""
    fi = sample.data.forward_input
    return list(fi.args), dict(fi.kwargs)


def simple_case(layer, x, module=None, grads=("input",)):
    """A layer with one input x: y = layer(x), {"input": layer.backward(dy)}."""
    return Case(ours=layer, forward=lambda m, a: m(a["input"]), backward=lambda m, dy: {"input": m.backward(dy)},
                theirs=lambda mod, input: mod(input), tensors={"input": x}, module=module, grads=grads)


def module_from_sample(sample):
    """PyTorch's module built from the sample's constructor arguments, in the sample's dtype and
    mode, with a random state (``randomize``)."""
    info = [i for i in _databases()[1] if i.name == sample.name][0]
    ci = sample.data.constructor_input
    torch.manual_seed(sample.index)  # PyTorch's initial weights: the same whatever ran before
    with warnings.catch_warnings():  # nn.TransformerEncoder on why it won't use nested tensors
        warnings.simplefilter("ignore", UserWarning)
        module = info.module_cls(*ci.args, **ci.kwargs).to(sample.dtype)
    randomize(module, seed=sample.index)
    return module.train(sample.training)


# --- module mappers --------------------------------------------------------------------------

def map_norm_module(sample, tier):
    """nn.LayerNorm, RMSNorm, BatchNorm*, GroupNorm, InstanceNorm*: the same class in ``tier``,
    the same arguments, PyTorch's state dict loaded."""
    cls_name = sample.name.removeprefix("nn.")
    cls = getattr(tier, cls_name, None)
    if cls is None:
        raise Unmappable(f"no {cls_name} in normcore")
    ci = sample.data.constructor_input
    kwargs = dict(ci.kwargs)
    if "bias" in kwargs and not accepts(cls, "bias"):
        raise Unmappable(f"no {cls_name}(bias=False) in normcore (a weight without a bias)")
    module = module_from_sample(sample)
    layer = cls(*ci.args, **kwargs, dtype=np_dtype_of(sample)).train(sample.training)
    layer.load_state_dict({k: as_numpy(v) for k, v in module.state_dict().items()})
    (x,), _ = forward_inputs(sample)
    return simple_case(layer, x, module)


def map_linear(sample, tier):
    module = module_from_sample(sample)
    layer = normcore.Linear(module.in_features, module.out_features, bias=module.bias is not None,
                            dtype=np_dtype_of(sample))
    layer.load_state_dict({k: as_numpy(v) for k, v in module.state_dict().items()})
    args, kwargs = forward_inputs(sample)
    return simple_case(layer, (args + list(kwargs.values()))[0], module)


def map_embedding(sample, tier):
    module = module_from_sample(sample)
    ci = sample.data.constructor_input
    extra = changed(torch.nn.Embedding, ci.args, ci.kwargs, ignore=("num_embeddings", "embedding_dim"))
    if extra.keys() - {"padding_idx"}:
        raise Unmappable(f"Embedding({', '.join(extra)}) not in normcore")
    if "padding_idx" in extra and not accepts(normcore.Embedding, "padding_idx"):
        raise not_yet("Embedding(padding_idx=...)")
    layer = normcore.Embedding(module.num_embeddings, module.embedding_dim, dtype=np_dtype_of(sample), **extra)
    layer.load_state_dict({k: as_numpy(v) for k, v in module.state_dict().items()})
    (idx,), _ = forward_inputs(sample)

    def backward(m, dy):
        m.backward(dy)  # into the weight's gradient; integer ids have none
        return {}
    return Case(ours=layer, forward=lambda m, a: m(a["input"]), backward=backward,
                theirs=lambda mod, input: mod(input), tensors={"input": idx}, module=module, grads=())


def _activation(name, args, kwargs):
    """normcore's activation layer for torch.nn.<name>(*args, **kwargs)."""
    if name in ("Softmax", "LogSoftmax"):
        dim = bound(getattr(torch.nn, name), args, kwargs)["dim"]
        if dim is None:
            raise Unmappable(f"{name}(dim=None) (PyTorch's legacy implicit axis)")
        return getattr(normcore, name)(axis=dim)
    if name == "Softmax2d":  # softmax over the channels of (N, C, H, W) or (C, H, W)
        return normcore.Softmax(axis=-3)
    if name == "GELU":
        return normcore.GELU(**bound(torch.nn.GELU, args, kwargs))
    if bound(getattr(torch.nn, name), args, kwargs).get("inplace"):
        raise Unmappable(f"{name}(inplace=True)")
    return getattr(normcore, name)()


def scalar_as_vector(layer):
    """forward and backward for softmax and log_softmax, which PyTorch applies to a 0-d input
    as to one element along axis 0 (-1): the input as a (1,) array, the results back to 0-d."""
    def forward(m, a):
        x = a["input"]
        return m(x[None])[0] if x.ndim == 0 else m(x)

    def backward(m, dy):
        return {"input": m.backward(dy[None])[0] if dy.ndim == 0 else m.backward(dy)}
    return forward, backward


def map_activation(sample, tier):
    module = module_from_sample(sample)
    ci = sample.data.constructor_input
    layer = _activation(sample.name.removeprefix("nn."), ci.args, ci.kwargs)
    (x,), _ = forward_inputs(sample)
    case = simple_case(layer, x, module)
    if isinstance(layer, (normcore.Softmax, normcore.LogSoftmax)):
        case.forward, case.backward = scalar_as_vector(layer)
    return case


def loss_case(layer, x, target, module=None):
    """A loss: y = layer(input, target), {"input": layer.backward(dloss)} (dloss of the loss's shape)."""
    return Case(ours=layer, forward=lambda m, a: m(a["input"], a["target"]),
                backward=lambda m, dy: {"input": m.backward(dy)},
                theirs=lambda mod, input, target: mod(input, target),
                tensors={"input": x, "target": target}, module=module)


def _mse(reduction):
    if reduction != "mean" and not accepts(normcore.MSELoss, "reduction"):
        raise Unmappable(f"no MSELoss(reduction={reduction!r}) in normcore (mean only)")
    return normcore.MSELoss(reduction=reduction) if reduction != "mean" else normcore.MSELoss()


def map_mse_loss(sample, tier):
    module = module_from_sample(sample)
    layer = _mse(module.reduction)
    (x, target), _ = forward_inputs(sample)
    return loss_case(layer, x, target, module)


def probability_targets():
    """Whether normcore's CrossEntropyLoss takes class probabilities as targets (a floating
    target of the logits' shape)."""
    try:
        normcore.CrossEntropyLoss()(np.zeros((1, 2)), np.full((1, 2), 0.5))
    except TypeError:
        return False
    return True


def _cross_entropy(weight, ignore_index, reduction, label_smoothing, target):
    if target.is_floating_point() and not probability_targets():
        raise not_yet("CrossEntropyLoss with class-probability targets")
    return normcore.CrossEntropyLoss(weight=None if weight is None else as_numpy(weight), ignore_index=ignore_index,
                                     reduction=reduction, label_smoothing=label_smoothing)


def map_cross_entropy_loss(sample, tier):
    module = module_from_sample(sample)
    (x, target), _ = forward_inputs(sample)
    layer = _cross_entropy(module.weight, module.ignore_index, module.reduction, module.label_smoothing, target)
    return loss_case(layer, x, target, module)


# Attention and the Transformer layers: normcore's layer is the twin of PyTorch's, built by the
# bridge (``torch_bridge.from_torch``, or its key map), which knows how the weights map
# (in_proj_weight into q, k, v, ...). The same mapping takes PyTorch's gradients to normcore's
# names: the twin of a copy of the torch module whose parameters hold their gradients.

def from_torch():
    """``torch_bridge.from_torch``, raising ``Unmappable`` where it refuses a module: a class
    it does not convert yet (TypeError) or a configuration normcore lacks (ValueError)."""
    convert = getattr(torch_bridge, "from_torch", None)
    if convert is None:
        raise not_yet("torch_bridge.from_torch")

    def checked(module):
        try:
            return convert(module)
        except TypeError as exc:
            raise not_yet(f"torch_bridge.from_torch({type(module).__name__})") from exc
        except ValueError as exc:
            raise Unmappable(str(exc)) from exc
    return checked


def gradient_holder(module):
    """A copy of the torch module whose parameters hold the original's gradients."""
    holder = copy.deepcopy(module)  # (a deep copy leaves the gradients behind)
    with torch.no_grad():
        for p, original in zip(holder.parameters(), module.parameters()):
            p.copy_(torch.zeros_like(p) if original.grad is None else original.grad)
    return holder


def decoder_twin(module):
    """normcore's TransformerDecoderBlock with the weights of the nn.TransformerDecoderLayer
    ``module``. The bridge maps this block to PyTorch (``to_torch``), not back, so the block is
    built from the layer's configuration and loaded through the bridge's key map."""
    if not hasattr(normcore, "TransformerDecoderBlock"):
        raise not_yet("TransformerDecoderBlock")
    if not accepts(normcore.TransformerDecoderBlock, "causal"):
        raise not_yet("TransformerDecoderBlock(causal=False) (nn.TransformerDecoderLayer's self-attention "
                      "is not causal; normcore's is, by construction)")
    if module.self_attn.dropout or module.dropout.p or module.dropout1.p:
        raise Unmappable("dropout in the decoder layer")
    if not module.norm1.eps == module.norm2.eps == module.norm3.eps:
        raise Unmappable("decoder layer norms with different eps")
    block = normcore.TransformerDecoderBlock(
        module.linear1.in_features, module.self_attn.num_heads, module.linear1.out_features,
        position="pre" if module.norm_first else "post", activation=ACTIVATION_NAMES[module.activation],
        bias=module.linear1.bias is not None, causal=False, dtype=NP_DTYPE[module.linear1.weight.dtype])
    for norm in (block.norm1, block.norm2, block.norm3):
        norm.eps = module.norm1.eps
    keys = torch_bridge.key_map(block, torch_bridge.to_torch(block))
    theirs = module.state_dict()
    block.load_state_dict({key: as_numpy(theirs[tkey])[rows] for key, (tkey, rows) in keys.items()})
    return block.train(module.training)


def twin(module):
    """normcore's twin of a PyTorch module: what ``from_torch`` converts, a decoder layer by
    ``decoder_twin``, and a stack (nn.TransformerEncoder, nn.TransformerDecoder, nn.Transformer)
    as a plain Module holding the twins of its children under the same names (a ModuleList as a
    Sequential), so that parameter names match."""
    if isinstance(module, torch.nn.TransformerDecoderLayer):
        return decoder_twin(module)
    if isinstance(module, torch.nn.ModuleList):
        return normcore.Sequential(*[twin(m) for m in module])
    if not isinstance(module, (torch.nn.TransformerEncoder, torch.nn.TransformerDecoder, torch.nn.Transformer)):
        return from_torch()(module)
    holder = normcore.Module()
    for name, child in module.named_children():
        setattr(holder, name, twin(child))
    return holder.train(module.training)


def twin_grads(module):
    """PyTorch's parameter gradients under normcore's names: the twin of a copy of ``module``
    whose parameters hold the gradients (the weights map by slices and renames, so gradients
    map the same way)."""
    return {name: p.data for name, p in twin(gradient_holder(module)).named_parameters()}


def sequence_layout(batch_first, unbatched):
    """(to normcore's (B, T, E), back) for one sequence tensor: an unbatched (T, E) gains a batch
    axis, a sequence-first (T, B, E) is transposed."""
    if unbatched:
        return (lambda a: a[None]), (lambda a: a[0])
    if not batch_first:
        return (lambda a: a.swapaxes(0, 1)), (lambda a: a.swapaxes(0, 1))
    return (lambda a: a), (lambda a: a)


def padding_mask(mask, unbatched):
    return None if mask is None else (mask[None] if unbatched else mask)


def map_multihead_attention(sample, tier):
    """nn.MultiheadAttention as PyTorch calls it: the twin keeps ``batch_first`` and takes the
    same inputs (batched in either layout, or unbatched), masks ((B*H, T, S) included) and
    forward options (``need_weights``, ``average_attn_weights``, ``is_causal``); the attention
    weights are compared too, with their gradient."""
    if not hasattr(normcore, "MultiheadAttention"):
        raise not_yet("MultiheadAttention (cross-attention, add_bias_kv, add_zero_attn)")
    module = module_from_sample(sample)
    args, kwargs = forward_inputs(sample)
    call = bound(torch.nn.MultiheadAttention.forward, [module] + args, kwargs)
    if call["is_causal"] and (module.bias_k is not None or module.add_zero_attn):
        raise Unmappable("is_causal with add_bias_kv or add_zero_attn (PyTorch's fused path masks the added keys, "
                         "its math path does not: normcore refuses the hint there)")
    layer = twin(module)
    options = {k: call[k] for k in ("need_weights", "average_attn_weights", "is_causal")}

    def forward(m, a):
        return m(a["query"], a["key"], a["value"], a["key_padding_mask"], a["attn_mask"], **options)

    def backward(m, dy, dweights=None):
        return dict(zip(("query", "key", "value"), m.backward(dy, dweights)))

    tensors = {k: call[k] for k in ("query", "key", "value", "key_padding_mask", "attn_mask")}
    return Case(ours=layer, forward=forward, backward=backward, tensors=tensors, module=module,
                theirs=lambda mod, **t: mod(**t, **options), grads=("query", "key", "value"),
                their_grads=twin_grads)


ACTIVATION_NAMES = {F.relu: "relu", F.gelu: "gelu", "relu": "relu", "gelu": "gelu"}


def _check_layer_options(sample, cls):
    """The constructor options of a Transformer layer that normcore's blocks have."""
    ci = sample.data.constructor_input
    opts = bound(cls, ci.args, ci.kwargs)
    if opts["dropout"] and sample.training:
        raise Unmappable("dropout > 0 in training (random)")
    if opts["activation"] not in ACTIVATION_NAMES:
        raise Unmappable(f"activation {opts['activation']!r}")


def map_encoder_layer(sample, tier):
    module = module_from_sample(sample)
    _check_layer_options(sample, torch.nn.TransformerEncoderLayer)
    args, kwargs = forward_inputs(sample)
    call = bound(torch.nn.TransformerEncoderLayer.forward, [module] + args, kwargs)
    if call.get("is_causal"):
        raise Unmappable("is_causal hint without a mask")
    unbatched = call["src"].dim() == 2
    into, back = sequence_layout(module.self_attn.batch_first, unbatched)
    layer = twin(module)

    def forward(m, a):
        return back(m(into(a["src"]), key_padding_mask=padding_mask(a["src_key_padding_mask"], unbatched),
                      attn_mask=a["src_mask"]))

    tensors = {k: call[k] for k in ("src", "src_mask", "src_key_padding_mask")}
    return Case(ours=layer, forward=forward, backward=lambda m, dy: {"src": back(m.backward(into(dy)))},
                tensors=tensors, module=module, theirs=lambda mod, **t: mod(**t), grads=("src",),
                their_grads=twin_grads)


def map_decoder_layer(sample, tier):
    module = module_from_sample(sample)
    _check_layer_options(sample, torch.nn.TransformerDecoderLayer)
    args, kwargs = forward_inputs(sample)
    call = bound(torch.nn.TransformerDecoderLayer.forward, [module] + args, kwargs)
    if call.get("tgt_is_causal") or call.get("memory_is_causal"):
        raise Unmappable("is_causal hint without a mask")
    unbatched = call["tgt"].dim() == 2
    into, back = sequence_layout(module.self_attn.batch_first, unbatched)
    layer = twin(module)

    def forward(m, a):
        return back(decoder_forward(m, into(a["tgt"]), into(a["memory"]), a, unbatched))

    def backward(m, dy):
        dx, dmemory = m.backward(into(dy))
        return {"tgt": back(dx), "memory": back(dmemory)}

    names = ("tgt", "memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask")
    return Case(ours=layer, forward=forward, backward=backward, tensors={k: call[k] for k in names}, module=module,
                theirs=lambda mod, **t: mod(**t), grads=("tgt", "memory"), their_grads=twin_grads)


def decoder_forward(block, x, memory, masks, unbatched):
    """A decoder block on (B, T, E) inputs with PyTorch's masks (the padding masks of an
    unbatched sample given a batch axis)."""
    return block(x, memory, tgt_mask=masks["tgt_mask"], memory_mask=masks["memory_mask"],
                 tgt_key_padding_mask=padding_mask(masks["tgt_key_padding_mask"], unbatched),
                 memory_key_padding_mask=padding_mask(masks["memory_key_padding_mask"], unbatched))


def encoder_forward(encoder, x, key_padding_mask, attn_mask):
    """nn.TransformerEncoder's forward on normcore's twin: the layers, then the final norm."""
    for block in encoder.layers:
        x = block(x, key_padding_mask=key_padding_mask, attn_mask=attn_mask)
    return x if getattr(encoder, "norm", None) is None else encoder.norm(x)


def encoder_backward(encoder, dy):
    if getattr(encoder, "norm", None) is not None:
        dy = encoder.norm.backward(dy)
    for block in reversed(list(encoder.layers)):
        dy = block.backward(dy)
    return dy


def map_encoder(sample, tier):
    """nn.TransformerEncoder(encoder_layer, num_layers): its layers are the layer's copies."""
    ci = sample.data.constructor_input
    layer = ci.args[0] if ci.args else ci.kwargs["encoder_layer"]
    if layer.dropout.p and sample.training:
        raise Unmappable("dropout > 0 in training (random)")
    if layer.activation not in ACTIVATION_NAMES:
        raise Unmappable(f"activation {layer.activation!r}")
    module = module_from_sample(sample)
    args, kwargs = forward_inputs(sample)
    call = bound(torch.nn.TransformerEncoder.forward, [module] + args, kwargs)
    if call.get("is_causal"):
        raise Unmappable("is_causal hint without a mask")
    unbatched = call["src"].dim() == 2
    into, back = sequence_layout(module.layers[0].self_attn.batch_first, unbatched)
    ours = twin(module)

    def forward(m, a):
        return back(encoder_forward(m, into(a["src"]), padding_mask(a["src_key_padding_mask"], unbatched),
                                    a["mask"]))

    tensors = {k: call[k] for k in ("src", "mask", "src_key_padding_mask")}
    return Case(ours=ours, forward=forward, backward=lambda m, dy: {"src": back(encoder_backward(m, into(dy)))},
                tensors=tensors, module=module, theirs=lambda mod, **t: mod(**t), grads=("src",),
                their_grads=twin_grads)


def map_transformer(sample, tier):
    """nn.Transformer: the encoder stack and its final norm give the memory; the decoder stack
    and its final norm read it."""
    ci = bound(torch.nn.Transformer, sample.data.constructor_input.args, sample.data.constructor_input.kwargs)
    if ci["dropout"] and sample.training:
        raise Unmappable("dropout > 0 in training (random)")
    if ci["custom_encoder"] is not None or ci["custom_decoder"] is not None:
        raise Unmappable("a custom encoder or decoder")
    module = module_from_sample(sample)
    args, kwargs = forward_inputs(sample)
    call = bound(torch.nn.Transformer.forward, [module] + args, kwargs)
    if call.get("src_is_causal") or call.get("tgt_is_causal") or call.get("memory_is_causal"):
        raise Unmappable("is_causal hint without a mask")
    unbatched = call["src"].dim() == 2
    into, back = sequence_layout(module.batch_first, unbatched)
    ours = twin(module)

    def forward(m, a):
        memory = encoder_forward(m.encoder, into(a["src"]), padding_mask(a["src_key_padding_mask"], unbatched),
                                 a["src_mask"])
        x = into(a["tgt"])
        for block in m.decoder.layers:
            x = decoder_forward(block, x, memory, a, unbatched)
        return back(m.decoder.norm(x))

    def backward(m, dy):
        dx, dmemory = m.decoder.norm.backward(into(dy)), 0
        for block in reversed(list(m.decoder.layers)):
            dx, dmem = block.backward(dx)
            dmemory = dmemory + dmem
        return {"tgt": back(dx), "src": back(encoder_backward(m.encoder, dmemory))}

    names = ("src", "tgt", "src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask", "tgt_key_padding_mask",
             "memory_key_padding_mask")
    return Case(ours=ours, forward=forward, backward=backward, tensors={k: call[k] for k in names}, module=module,
                theirs=lambda mod, **t: mod(**t), grads=("src", "tgt"), their_grads=twin_grads)


# --- op mappers ------------------------------------------------------------------------------

def op_arguments(sample, params, **defaults):
    """An op sample's arguments by name: ``params`` names the input and the positional args;
    then the keyword arguments; ``defaults`` (else None) for the parameters not given."""
    s = sample.data
    return {**dict.fromkeys(params), **defaults, **dict(zip(params, (s.input, *s.args))), **s.kwargs}


def norm_op_case(layer, named, fn, grads, state=()):
    """A functional norm: normcore's layer with the sample's weight and bias (and running
    statistics); the gradients of input, weight and bias compared."""
    params = dict(layer.named_parameters())

    def backward(m, dy):
        dx = m.backward(dy)
        return {"input": dx, **{k: params[k].grad for k in grads if k != "input"}}
    return Case(ours=layer, forward=lambda m, a: m(a["input"]), backward=backward,
                theirs=lambda mod, **t: fn(**t), tensors=dict(named), grads=grads, state=state)


def _loaded(layer, named, keys):
    layer.load_state_dict({k: as_numpy(named[k]) for k in keys if named.get(k) is not None}
                          | {k: v for k, v in layer.state_dict().items() if k == "num_batches_tracked"})
    return layer


def _eps(eps):
    if eps is not None and eps < 0:
        raise Unmappable("eps < 0 (normcore requires eps >= 0)")
    return eps


def _affine_grads(named, *keys):
    return ("input",) + tuple(k for k in keys if named.get(k) is not None)


def map_layer_norm_op(sample, tier):
    a = op_arguments(sample, ("input", "normalized_shape", "weight", "bias", "eps"), eps=1e-5)
    weight, bias = a.get("weight"), a.get("bias")
    if weight is None and bias is not None:
        raise Unmappable("layer_norm with a bias and no weight")
    layer = tier.LayerNorm(a["normalized_shape"], _eps(a["eps"]), elementwise_affine=weight is not None,
                           bias=bias is not None, dtype=np_dtype_of(sample))
    _loaded(layer, a, ("weight", "bias"))
    return norm_op_case(layer, a, F.layer_norm, _affine_grads(a, "weight", "bias"))


def map_rms_norm_op(sample, tier):
    a = op_arguments(sample, ("input", "normalized_shape", "weight", "eps"))
    layer = tier.RMSNorm(a["normalized_shape"], _eps(a.get("eps")), elementwise_affine=a.get("weight") is not None,
                         dtype=np_dtype_of(sample))
    _loaded(layer, a, ("weight",))
    return norm_op_case(layer, a, F.rms_norm, _affine_grads(a, "weight"))


def _channel_affine(cls, named):
    """(affine, extra kwargs) for a weight/bias pair of a channel norm."""
    weight, bias = named.get("weight"), named.get("bias")
    if (weight is None) != (bias is None):
        if weight is None:
            raise Unmappable("a bias without a weight")
        if not accepts(cls, "bias"):
            raise Unmappable(f"no {cls.__name__}(bias=False) in normcore (a weight without a bias)")
        return True, {"bias": False}
    return weight is not None, {}


def _momentum(m):
    if m is not None and not 0 <= m <= 1:
        raise Unmappable("momentum outside [0, 1]")
    return m


def map_batch_norm_op(sample, tier):
    a = op_arguments(sample, ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum",
                              "eps"), training=False, momentum=0.1, eps=1e-5)
    x = a["input"]
    cls = {2: tier.BatchNorm1d, 3: tier.BatchNorm1d, 4: tier.BatchNorm2d, 5: tier.BatchNorm3d}.get(x.dim())
    if cls is None:
        raise Unmappable(f"batch_norm on a {x.dim()}-D input (normcore: 2-D to 5-D)")
    if a["running_mean"] is None and not a["training"]:
        raise Unmappable("evaluation without running statistics")
    return _running_stats_case(sample, cls, a, a["training"], F.batch_norm)


def _running_stats_case(sample, cls, a, training, op):
    """The case of a BatchNorm or InstanceNorm class ``cls`` built from the op's arguments ``a``,
    in training mode or not, with running statistics where the op was given them."""
    tracked = a["running_mean"] is not None
    affine, extra = _channel_affine(cls, a)
    layer = cls(a["input"].shape[1], _eps(a["eps"]), _momentum(a["momentum"]), affine, track_running_stats=tracked,
                dtype=np_dtype_of(sample), **extra).train(training)
    _loaded(layer, a, ("weight", "bias", "running_mean", "running_var"))
    return norm_op_case(layer, a, op, _affine_grads(a, "weight", "bias"),
                        state=("running_mean", "running_var") if tracked else ())


def map_instance_norm_op(sample, tier):
    a = op_arguments(sample, ("input", "running_mean", "running_var", "weight", "bias", "use_input_stats",
                              "momentum", "eps"), use_input_stats=True, momentum=0.1, eps=1e-5)
    x = a["input"]
    cls = {3: tier.InstanceNorm1d, 4: tier.InstanceNorm2d, 5: tier.InstanceNorm3d}.get(x.dim())
    if cls is None:
        raise Unmappable(f"instance_norm on a {x.dim()}-D input (normcore: 3-D to 5-D)")
    if not a["use_input_stats"] and a["running_mean"] is None:
        raise Unmappable("use_input_stats=False without running statistics")
    return _running_stats_case(sample, cls, a, a["use_input_stats"], F.instance_norm)


def map_group_norm_op(sample, tier):
    a = op_arguments(sample, ("input", "num_groups", "weight", "bias", "eps"), eps=1e-5)
    x = a["input"]
    affine, extra = _channel_affine(tier.GroupNorm, a)
    layer = tier.GroupNorm(a["num_groups"], x.shape[1], _eps(a["eps"]), affine, dtype=np_dtype_of(sample), **extra)
    _loaded(layer, a, ("weight", "bias"))
    return norm_op_case(layer, a, F.group_norm, _affine_grads(a, "weight", "bias"))


def elementwise_op_case(layer, named, fn):
    """An op of one input applied by ``layer``."""
    return Case(ours=layer, forward=lambda m, a: m(a["input"]), backward=lambda m, dy: {"input": m.backward(dy)},
                theirs=lambda mod, **t: fn(**t), tensors=named)


def map_softmax_op(sample, tier):
    a = op_arguments(sample, ("input", "dim"))
    dtype = a.get("dtype")
    if dtype is not None and not accepts(normcore.Softmax, "dtype"):
        raise Unmappable("dtype= casts the input first (normcore computes in the input's dtype)")
    cls = normcore.Softmax if sample.name == "softmax" else normcore.LogSoftmax
    fn = torch.softmax if sample.name == "softmax" else torch.log_softmax
    layer = cls(axis=a["dim"], **({} if dtype is None else {"dtype": np.dtype(str(dtype).removeprefix("torch."))}))
    case = elementwise_op_case(layer, a, fn)
    case.forward, case.backward = scalar_as_vector(case.ours)
    return case


def map_elementwise_op(sample, tier):
    a = op_arguments(sample, ("input",))
    name = sample.name.removeprefix("nn.functional.")
    if a.get("inplace"):
        raise Unmappable(f"{name}(inplace=True)")
    layer = {"relu": normcore.ReLU, "sigmoid": normcore.Sigmoid, "tanh": normcore.Tanh}.get(name)
    if name == "gelu":
        layer = normcore.GELU(approximate=a.get("approximate", "none"))
    else:
        layer = layer()
    fn = {"relu": F.relu, "gelu": F.gelu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}[name]
    return elementwise_op_case(layer, a, fn)


def map_linear_op(sample, tier):
    a = op_arguments(sample, ("input", "weight", "bias"))
    out_features, in_features = a["weight"].shape
    layer = normcore.Linear(in_features, out_features, bias=a.get("bias") is not None, dtype=np_dtype_of(sample))
    _loaded(layer, a, ("weight", "bias"))
    return norm_op_case(layer, a, F.linear, _affine_grads(a, "weight", "bias"))


def map_embedding_op(sample, tier):
    s = sample.data  # OpInfo's embedding takes (weight, indices): F.embedding(indices, weight, **kwargs)
    if s.kwargs:
        raise Unmappable(f"embedding({', '.join(s.kwargs)}) not in normcore")
    weight, (idx,) = s.input, s.args
    layer = normcore.Embedding(*weight.shape, dtype=np_dtype_of(sample))
    layer.load_state_dict({"weight": as_numpy(weight)})
    return Case(ours=layer, forward=lambda m, a: m(a["indices"]),
                backward=lambda m, dy: {"weight": (m.backward(dy), m.weight.grad)[1]},
                theirs=lambda mod, weight, indices: F.embedding(indices, weight),
                tensors={"weight": weight, "indices": idx}, grads=("weight",))


def map_mse_loss_op(sample, tier):
    a = op_arguments(sample, ("input", "target"), reduction="mean")
    layer = _mse(a["reduction"])
    return Case(ours=layer, forward=lambda m, t: m(t["input"], t["target"]),
                backward=lambda m, dy: {"input": m.backward(dy)},
                theirs=lambda mod, **t: F.mse_loss(**t), tensors=a)


def map_cross_entropy_op(sample, tier):
    a = op_arguments(sample, ("input", "target"), weight=None, ignore_index=-100, reduction="mean",
                     label_smoothing=0.0)
    layer = _cross_entropy(a["weight"], a["ignore_index"], a["reduction"], a["label_smoothing"], a["target"])
    return Case(ours=layer, forward=lambda m, t: m(t["input"], t["target"]),
                backward=lambda m, dy: {"input": m.backward(dy)},
                theirs=lambda mod, **t: F.cross_entropy(**t), tensors=a)


def map_dropout_op(sample, tier):
    """Deterministic where PyTorch's dropout is (p = 0, p = 1, or not training): compared.
    Otherwise (0 < p < 1 in training) the masks are random: ``check_dropout`` checks normcore's
    scaling and mask statistics instead."""
    a = op_arguments(sample, ("input",), p=0.5, training=True)
    p, training = a["p"], a["training"]
    if a.get("inplace"):
        raise Unmappable("dropout(inplace=True)")
    layer = normcore.Dropout(p, rng=sample.index).train(training)
    case = Case(ours=layer, forward=lambda m, t: m(t["input"]), backward=lambda m, dy: {"input": m.backward(dy)},
                theirs=lambda mod, **t: F.dropout(**t), tensors=a)
    if training and 0 < p < 1:
        case.check = check_dropout
    return case


def check_dropout(case, np_dtype):
    """normcore's dropout in training, 200 times on the sample's input: every output is 0 or
    x / (1 - p), the backward uses the forward's mask with the same scale, and the kept fraction
    is 1 - p within five standard deviations. (The mask is read off the output: the sample's
    input has no exact zeros.)"""
    layer, x = case.ours, case.tensors["input"].detach().numpy()
    assert np.all(x != 0), "an exact zero in the input would hide the mask"
    p, kept, draws = layer.p, 0, 0
    for seed in range(200):
        y = layer(x)
        mask = y != 0
        dy = upstream(y.shape, np_dtype, seed)
        np.testing.assert_array_equal(y, (x * mask / np_dtype(1 - p)).astype(np_dtype))
        np.testing.assert_array_equal(layer.backward(dy), (dy * mask / np_dtype(1 - p)).astype(np_dtype))
        kept, draws = kept + mask.sum(), draws + mask.size
    sd = np.sqrt(draws * p * (1 - p))
    assert abs(kept - draws * (1 - p)) <= 5 * sd, f"kept {kept} of {draws}, p={p}"


def unmappable_op(reason):
    def mapper(sample, tier):
        raise Unmappable(reason)
    return mapper


def sum_to(a, shape):
    """``a`` summed over the axes broadcasting added to an array of ``shape``."""
    a = a.sum(axis=tuple(range(a.ndim - len(shape))))
    return a.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and a.shape[i] != 1), keepdims=True)


def map_sdpa_op(sample, tier):
    """scaled_dot_product_attention(q, k, v) is MultiheadAttention with identity projections:
    heads of D channels side by side make E = H * D, and the scale 1 / sqrt(D) is the same.
    Batch dims (B,) or (B, H) (broadcast as PyTorch does); is_causal is SDPA's top-left causal
    mask, given explicitly; a boolean mask (True = takes part) is inverted into normcore's
    convention (True = masked out)."""
    a = op_arguments(sample, ("query", "key", "value"), attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                     enable_gqa=False)
    if a["dropout_p"]:
        raise Unmappable("dropout inside attention (random)")
    if not hasattr(normcore, "MultiheadAttention"):
        raise not_yet("MultiheadAttention (cross-attention)")
    if a["scale"] is not None or a["enable_gqa"]:
        raise Unmappable("scaled_dot_product_attention(scale=..., enable_gqa=...)")
    q, k, v = a["query"], a["key"], a["value"]
    batch = tuple(torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    if len(batch) not in (1, 2) or not q.shape[-1] == k.shape[-1] == v.shape[-1]:
        raise Unmappable("attention with other batch dims or head sizes than MultiheadAttention's")
    (B, H), (L, D), S = (batch + (1,))[:2], q.shape[-2:], k.shape[-2]
    if a["attn_mask"] is not None and tuple(a["attn_mask"].shape) != (L, S):
        raise Unmappable("an attention mask of another shape than (Tq, Tk)")
    layer = normcore.MultiheadAttention(H * D, H, bias=False, dtype=np_dtype_of(sample))
    layer.load_state_dict({f"{p}.weight": np.eye(H * D) for p in "qkvo"})

    def into(t):  # (*batch, T, D) -> (B, T, H*D)
        t = np.broadcast_to(t, batch + t.shape[-2:]).reshape(B, H, t.shape[-2], D)
        return t.transpose(0, 2, 1, 3).reshape(B, -1, H * D)

    def back(t, shape):  # (B, T, H*D) -> (*shape), summed over broadcast axes
        t = t.reshape(B, -1, H, D).transpose(0, 2, 1, 3).reshape(batch + t.shape[1:2] + (D,))
        return sum_to(t, shape)

    def forward(m, t):
        mask = t["attn_mask"]
        if t["is_causal"]:
            mask = np.tril(np.ones((L, S), dtype=bool))  # True: takes part
        if mask is not None and mask.dtype == np.bool_:
            mask = ~mask
        return back(m(into(t["query"]), into(t["key"]), into(t["value"]), attn_mask=mask), batch + (L, D))

    def backward(m, dy):
        dq, dk, dv = m.backward(into(dy))
        return {"query": back(dq, q.shape), "key": back(dk, k.shape), "value": back(dv, v.shape)}

    tensors = {key: a[key] for key in ("query", "key", "value", "attn_mask", "is_causal")}
    return Case(ours=layer, forward=forward, backward=backward, tensors=tensors, grads=("query", "key", "value"),
                theirs=lambda mod, **t: F.scaled_dot_product_attention(**t))


# --- the tables ------------------------------------------------------------------------------

OP_MAPPERS = {
    "nn.functional.layer_norm": map_layer_norm_op,
    "nn.functional.rms_norm": map_rms_norm_op,
    "nn.functional.batch_norm": map_batch_norm_op,
    "nn.functional.instance_norm": map_instance_norm_op,
    "nn.functional.group_norm": map_group_norm_op,
    "softmax": map_softmax_op,
    "log_softmax": map_softmax_op,
    "nn.functional.relu": map_elementwise_op,
    "nn.functional.gelu": map_elementwise_op,
    "sigmoid": map_elementwise_op,
    "tanh": map_elementwise_op,
    "nn.functional.linear": map_linear_op,
    "nn.functional.embedding": map_embedding_op,
    "nn.functional.mse_loss": map_mse_loss_op,
    "nn.functional.cross_entropy": map_cross_entropy_op,
    "nn.functional.dropout": map_dropout_op,
    "nn.functional.scaled_dot_product_attention": map_sdpa_op,
    "nn.functional.multi_head_attention_forward": unmappable_op("dropout inside attention (random)"),
}

MODULE_MAPPERS = {
    **{f"nn.{name}": map_norm_module for name in NORM_CLASSES},
    "nn.Linear": map_linear,
    "nn.Embedding": map_embedding,
    **{f"nn.{name}": map_activation for name in ("GELU", "ReLU", "Sigmoid", "Tanh", "Softmax", "Softmax2d",
                                                 "LogSoftmax")},
    "nn.MSELoss": map_mse_loss,
    "nn.CrossEntropyLoss": map_cross_entropy_loss,
    "nn.MultiheadAttention": map_multihead_attention,
    "nn.TransformerEncoderLayer": map_encoder_layer,
    "nn.TransformerDecoderLayer": map_decoder_layer,
    "nn.TransformerEncoder": map_encoder,
    "nn.Transformer": map_transformer,
}

MAPPERS = {**OP_MAPPERS, **MODULE_MAPPERS}
# Run on every tier (``norm_tiers.TIERS``): the norms; the rest of normcore has one tier.
NORM_NAMES = {f"nn.{name}" for name in NORM_CLASSES} | {
    f"nn.functional.{name}" for name in ("layer_norm", "rms_norm", "batch_norm", "instance_norm", "group_norm")}


def map_sample(sample, tier=normcore):
    """The sample's ``Case``, or ``Unmappable``."""
    return MAPPERS[sample.name](sample, tier)
