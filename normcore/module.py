"""The autograd-free stack: ``Parameter``, ``Module`` and ``Sequential``.

There is no computation graph. Every module caches in ``forward`` what its own ``backward``
needs, and ``backward(dy)`` takes dL/d(output) and returns dL/d(input), accumulating
dL/d(parameter) into each ``Parameter.grad`` with ``+=`` on the way.

Names and order of ``state_dict`` keys follow PyTorch: a module's own parameters, then its
buffers, then each child under ``"<child name>."``; so a PyTorch state dict converted to NumPy
loads as is.
"""

from collections.abc import Iterator, Mapping
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ._array import as_array


class Parameter:
    """A learnable array ``data`` with its gradient ``grad`` (same shape and dtype).

    ``grad`` starts at zero and is only ever accumulated into (``grad += ...``), so a parameter
    used twice in a forward pass receives both shares; ``Module.zero_grad`` resets it.
    """

    def __init__(self, data: ArrayLike, dtype: DTypeLike | None = None) -> None:
        self.data = np.array(data, dtype=dtype if dtype is not None else np.float64)
        if not np.issubdtype(self.data.dtype, np.floating):
            raise TypeError(f"Parameter data must be floating point, got dtype {self.data.dtype}")
        self.grad = np.zeros_like(self.data)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    def __repr__(self) -> str:
        return f"Parameter(shape={self.shape}, dtype={self.dtype})"


class Module:
    """Base class: forward/backward, train/eval, parameters, buffers and state dicts."""

    training = True
    _cache: Any  # what the last forward kept for backward (see _cached)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if isinstance(value, Parameter):
            d.setdefault("_parameters", {})[name] = value
        elif isinstance(value, Module):
            d.setdefault("_modules", {})[name] = value
        elif name in d.get("_buffers", {}):
            d["_buffers"][name] = value
        elif value is None:
            d.get("_parameters", {}).pop(name, None)
            d.get("_modules", {}).pop(name, None)
        object.__setattr__(self, name, value)

    def register_buffer(self, name: str, value: np.ndarray | None) -> None:
        """A state array that is saved in ``state_dict`` but is not learned (e.g. running_mean)."""
        self.__dict__.setdefault("_buffers", {})[name] = value
        object.__setattr__(self, name, value)

    # --- the computation -------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement forward")

    def backward(self, dy: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement backward")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.forward(*inputs, **kwargs)

    def cache_nbytes(self) -> int | None:
        """Bytes of the arrays the last forward kept for backward, in this module and in all its
        descendants (a Sequential, a Transformer block: what a backward of the whole needs).
        Each array is counted once, by identity, however many caches refer to it. None when
        nothing in the tree has run a forward yet."""
        arrays: dict[int, np.ndarray] = {}

        def collect(obj: Any) -> None:
            if isinstance(obj, np.ndarray):
                arrays[id(obj)] = obj
            elif isinstance(obj, (tuple, list)):
                for o in obj:
                    collect(o)
            elif isinstance(obj, dict):
                for o in obj.values():
                    collect(o)

        caches = [mod.__dict__.get("_cache") for _, mod in self.named_modules()]
        caches = [cache for cache in caches if cache is not None]
        if not caches:
            return None
        collect(caches)
        return sum(a.nbytes for a in arrays.values())

    def to(self, dtype: DTypeLike) -> Self:
        """Cast every floating-point parameter (and its gradient) and buffer to ``dtype``, in
        place, as PyTorch's ``module.to(dtype)``; returns the module. ``dtype`` must be a
        floating-point dtype, checked before anything changes. ``to(None)`` changes nothing,
        as in PyTorch (NumPy alone would read None as float64)."""
        if dtype is None:
            return self
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"{type(self).__name__}.to expected a NumPy dtype, got {dtype!r}") from None
        if not np.issubdtype(dtype, np.floating):
            raise ValueError(f"{type(self).__name__}.to expected a floating-point dtype "
                             f"(float16, float32, float64), got {dtype}")
        for p in self.parameters():
            p.data, p.grad = p.data.astype(dtype), p.grad.astype(dtype)
        for _, mod in self.named_modules():
            for name, b in list(mod.__dict__.get("_buffers", {}).items()):
                if b is not None and np.issubdtype(b.dtype, np.floating):
                    mod.register_buffer(name, b.astype(dtype))
        return self

    def _cached(self) -> Any:
        """The cache of the last forward, or a clear error when backward comes first."""
        cache = self.__dict__.get("_cache")
        if cache is None:
            raise RuntimeError(
                f"{type(self).__name__}.backward() was called before forward(): "
                "run forward first, backward uses what it cached"
            )
        return cache

    # --- modes -----------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Self:
        """Set training mode on this module and every child; returns the module. ``mode`` must
        be True or False: anything else (a string "False" is truthy, 0 and 1, ``np.bool_``) raises
        ``ValueError`` and changes nothing, as PyTorch's ``train(mode)``."""
        if not isinstance(mode, bool):
            raise ValueError(f"{type(self).__name__}.train: training mode is expected to be boolean "
                             f"(True or False), got {mode!r} ({type(mode).__name__})")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self) -> Self:
        """Set evaluation mode (``train(False)``); returns the module."""
        return self.train(False)

    # --- traversal ---------------------------------------------------------------------------
    def children(self) -> list["Module"]:
        return list(self.__dict__.get("_modules", {}).values())

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, "Module"]]:
        yield prefix, self
        for name, child in self.__dict__.get("_modules", {}).items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Yield ``(name, Parameter)`` in PyTorch's order; a shared parameter is yielded once."""
        seen = set()
        for mod_name, mod in self.named_modules(prefix):
            for name, p in mod.__dict__.get("_parameters", {}).items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self) -> list[Parameter]:
        return [p for _, p in self.named_parameters()]

    def named_buffers(self) -> Iterator[tuple[str, np.ndarray]]:
        for mod_name, mod in self.named_modules():
            for name, b in mod.__dict__.get("_buffers", {}).items():
                if b is not None:
                    yield (f"{mod_name}.{name}" if mod_name else name), b

    def zero_grad(self) -> None:
        """Reset every parameter's gradient to zero."""
        for p in self.parameters():
            p.grad[...] = 0

    # --- state dicts -------------------------------------------------------------------------
    def _state_entries(self) -> Iterator[tuple[str, "Module", str, bool]]:
        """(key, owner, attribute name, is_parameter) for every saved array, in PyTorch's order."""
        for mod_name, mod in self.named_modules():
            prefix = f"{mod_name}." if mod_name else ""
            for name, p in mod.__dict__.get("_parameters", {}).items():
                if p is not None:
                    yield prefix + name, mod, name, True
            for name, b in mod.__dict__.get("_buffers", {}).items():
                if b is not None:
                    yield prefix + name, mod, name, False

    def state_dict(self) -> dict[str, np.ndarray]:
        """A dict of NumPy arrays (copies) keyed as in PyTorch: weight, bias, running_mean, ..."""
        return {
            key: (getattr(mod, name).data if is_param else getattr(mod, name)).copy()
            for key, mod, name, is_param in self._state_entries()
        }

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> Self:
        """Load arrays saved by ``state_dict`` (or PyTorch tensors / arrays under the same keys).

        Every entry is checked and converted to the dtype of the array it replaces before any
        is written, so a bad state dict loads nothing: a state dict that is no mapping raises
        ``TypeError``, missing or unexpected keys ``KeyError``, a value that is not an array of
        real numbers castable to that dtype (None, a string, a ragged list, complex numbers,
        a float for an integer buffer) ``TypeError``, a shape mismatch ``ValueError``.
        """
        who = f"{type(self).__name__}.load_state_dict"
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"{who} expects a mapping from key to array (a dict like the one "
                            f"state_dict() returns), got {type(state_dict).__name__}")
        entries = {key: (mod, name, is_param) for key, mod, name, is_param in self._state_entries()}
        missing = [k for k in entries if k not in state_dict]
        unexpected = [k for k in state_dict if k not in entries]
        if missing or unexpected:
            raise KeyError(f"{who}: missing keys {missing}, unexpected keys {unexpected}; "
                           f"expected exactly {list(entries)}")
        converted = []
        for key, (mod, name, is_param) in entries.items():
            target = getattr(mod, name).data if is_param else getattr(mod, name)
            converted.append((target, _state_value(state_dict[key], target, who, key)))
        for target, value in converted:  # every entry is valid: now write them all
            target[...] = value
        return self

    # --- printing ----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        children = self.__dict__.get("_modules", {})
        if not children:
            return f"{type(self).__name__}({self.extra_repr()})"
        lines = [f"{type(self).__name__}("]
        for name, child in children.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"


def _state_value(value: Any, target: np.ndarray, who: str, key: str) -> np.ndarray:
    """``value`` (an array, a list or a torch.Tensor) as an array of ``target``'s shape and dtype,
    or a ``TypeError`` / ``ValueError`` naming ``key`` and what was expected."""
    if hasattr(value, "detach"):  # a torch.Tensor
        value = value.detach().cpu().numpy()
    value = as_array(value, who, f"entry '{key}'")
    kind = "integers" if np.issubdtype(target.dtype, np.integer) else "real numbers"
    if value.dtype.kind not in "iuf" or not np.can_cast(value.dtype, target.dtype, "same_kind"):
        raise TypeError(f"{who}: '{key}' expected {kind} (a dtype that converts to {target.dtype}), "
                        f"got dtype {value.dtype}")
    if value.shape != target.shape:
        raise ValueError(f"{who}: '{key}' expected shape {target.shape}, got {value.shape}")
    return value.astype(target.dtype)


class Sequential(Module):
    """Modules applied in order; ``backward`` runs the children in reverse.

    forward:  y = f_n(... f_2(f_1(x)))
    backward: dx = f_1'(... f_n'(dy)), each child's backward using its own cache
    """

    def __init__(self, *modules: Module) -> None:
        for i, m in enumerate(modules):
            if not isinstance(m, Module):
                raise TypeError(f"Sequential takes Modules, got {type(m).__name__} at position {i}")
            setattr(self, str(i), m)

    def __len__(self) -> int:
        return len(self.children())

    def __getitem__(self, i: int) -> Module:
        return self.children()[i]

    def __iter__(self) -> Iterator[Module]:
        return iter(self.children())

    def forward(self, x: Any) -> Any:
        for m in self.children():
            x = m(x)
        return x

    def backward(self, dy: Any) -> Any:
        for m in reversed(self.children()):
            dy = m.backward(dy)
        return dy
