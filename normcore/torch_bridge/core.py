"""The conversion core: the registries and the two directions, ``to_torch`` and ``from_torch``.

``CONVERTERS`` maps a normcore class to its converter ``(module, sub) -> torch.nn.Module``
(``sub(child)`` converts a child); a family file registers its layers with ``@converts``.
``FROM_TORCH`` holds, per family, a function ``torch.nn -> {torch class: (torch module, sub)
-> normcore module}``, registered with ``@builds_from_torch``. Both directions move the
weights as state dicts through ``key_map``. torch is imported by ``_torch()``, when called.
"""

import functools
import importlib

import numpy as np

from .._install import torch_hint
from ..i18n import translator
from ..module import Module
from ..nn.weight_norm import TORCH_PARAMETRIZATION_KEYS

_ = translator("cli")

CONVERTERS = {}  # normcore class -> (module, sub) -> torch.nn.Module


def converts(*classes):
    """Register the decorated function as the converter of ``classes``."""
    def register(fn):
        for cls in classes:
            CONVERTERS[cls] = fn
        return fn
    return register


FROM_TORCH = []  # functions torch.nn -> {torch class: (torch module, sub) -> normcore module}


def builds_from_torch(fn):
    """Register ``fn(tnn)``, which returns ``{torch class: builder}`` for the torch classes of
    one family (``builder(torch module, sub)`` returns the normcore module; ``sub`` converts a
    child), as the builders ``from_torch`` uses."""
    FROM_TORCH.append(fn)
    return fn


def _torch():
    """The torch module, imported here, when a function of the bridge is called; without
    torch an ``ImportError`` that says how to install it."""
    try:
        import torch
    except ImportError as err:
        raise ImportError(_("normcore.torch_bridge needs PyTorch.") + "\n" + torch_hint()) from err
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


def _named_children(m):
    """(name, child) of the module's direct children, in the order they were set."""
    return [(name, child) for name, child in m.named_modules() if name and "." not in name]


def _numpy(t):
    """A torch tensor as a NumPy array (detached, on the CPU)."""
    return t.detach().cpu().numpy()


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
    twin (the attention class and options it was made from), a ``nn.Linear`` under
    ``torch.nn.utils.parametrizations.weight_norm`` or the older hook-based
    ``torch.nn.utils.weight_norm`` (a ``WeightNorm``), ``to_torch``'s twins
    of WSLinear, Batch Renorm, Ghost BatchNorm, LayerScale and ReZero; a
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
        for cls in _builder_classes(torch, t):
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
    theirs, expected = _state_dict(tmodule), twin.state_dict()
    if set(theirs) != set(expected) or any(theirs[k].shape != expected[k].shape for k in theirs):
        raise ValueError(f"from_torch: {type(tmodule).__name__}'s state dict "
                         f"{[(k, tuple(v.shape)) for k, v in theirs.items()]} does not match normcore's "
                         f"twin {[(k, tuple(v.shape)) for k, v in expected.items()]}")
    keys = key_map(module, twin)
    module.load_state_dict({key: _numpy(theirs[tkey])[rows] for key, (tkey, rows) in keys.items()})
    return module.train(tmodule.training)


def _builder_classes(torch, t):
    """The classes whose builder may build ``t``, nearest first: the parametrizations of a
    parametrized module (``torch.nn.utils.parametrize``: a Linear under ``weight_norm`` is a
    WeightNorm), the forward pre-hooks of a hooked one (under the older
    ``torch.nn.utils.weight_norm`` too), then its class and base classes."""
    parametrizations = []
    if torch.nn.utils.parametrize.is_parametrized(t):
        parametrizations = [type(p) for plist in t.parametrizations.values() for p in plist]
    hooked = [importlib.import_module("torch.nn.utils.weight_norm").WeightNorm] * under_older_weight_norm(t)
    return parametrizations + hooked + list(type(t).__mro__)


def under_older_weight_norm(t):
    """Whether the torch module ``t`` is under the older hook-based ``torch.nn.utils.weight_norm``
    on its weight: weight_g and weight_v are its own parameters, weight is not (a forward
    pre-hook computes it; torch keeps no public record of the hook itself)."""
    names = {name for name, _ in t.named_parameters(recurse=False)}
    return {"weight_g", "weight_v"} <= names and "weight" not in names


def _state_dict(tmodule):
    """``tmodule.state_dict()``, where a submodule is under the older hook-based
    ``torch.nn.utils.weight_norm`` its ``weight_g`` and ``weight_v`` renamed as the
    parametrization names them (``parametrizations.weight.original0``, ``original1``), the keys
    of the twin ``to_torch`` makes of a WeightNorm: both APIs load the same way."""
    renamed = {}
    for name, sub in tmodule.named_modules():
        if under_older_weight_norm(sub):
            prefix = f"{name}." if name else ""
            renamed.update({prefix + ours: prefix + theirs for theirs, ours in TORCH_PARAMETRIZATION_KEYS.items()})
    return {renamed.get(key, key): value for key, value in tmodule.state_dict().items()}


def from_torch_supported():
    """The names of the torch classes ``from_torch`` converts."""
    return sorted(cls.__name__ for cls in _from_torch_builders())


@functools.cache
def _from_torch_builders():
    """torch class -> ``(torch module, sub) -> normcore module``, the classes ``from_torch``
    knows, gathered from every family's ``@builds_from_torch``; built on first use, as it
    needs torch."""
    tnn = _torch().nn
    builders = {}
    for family in FROM_TORCH:
        builders.update(family(tnn))
    return builders
