"""Driving a torch.nn.Module through the practice probes, as ``driver.Driver`` drives a NumPy layer.

A PyTorch answer writes ``forward`` only; autograd does the rest. ``TorchDriver`` gives the
probes the same methods as ``Driver``: NumPy inputs go in as torch tensors, outputs come back
as NumPy arrays, and ``backward(dy)`` is autograd's backward of ``(y * dy).sum()`` (the output's
``backward(dy)``), which *accumulates* into every parameter's ``.grad`` as PyTorch does.
``train()`` / ``eval()`` are the module's own.

The module follows the input's dtype: it is built in float64 (so that the probes' float64
parameters keep every digit) and moved to float32 or float16 before a forward on such an
input, as a model is moved with ``.to(dtype)``. The input reaches ``forward`` as a
copy of the tensor whose gradient is dx, so an in-place edit of the input shows only in the
probe made for it (``probes.in_place``). A function answer (fold_batchnorm) is called with
tensors by ``call``. torch is imported here (and in ``group``) only; this module is loaded
only for a PyTorch answer.
"""

import functools

import numpy as np
import torch

from ...i18n import translator
from ...nn.weight_norm import TORCH_PARAMETRIZATION_KEYS
from ..driver import WRONG_SIZE, ContractError, Driver
from .group import AutogradGroup

_ = translator("practice")

ALIASES = {"gamma": ("weight", "gamma"), "beta": ("bias", "beta"),  # PyTorch's names first
           # weight_g, weight_v (torch.nn.utils.weight_norm's), or a module's own weight under
           # torch.nn.utils.parametrizations.weight_norm: parametrizations.weight.original0, 1
           **{name: (name, key) for key, name in TORCH_PARAMETRIZATION_KEYS.items()}}


def to_numpy(t):
    """A NumPy copy of a tensor (None stays None)."""
    return None if t is None else t.detach().cpu().numpy().copy()


def to_tensor(a):
    """A NumPy array (or a number) as a tensor: integer targets become int64, as PyTorch wants."""
    if isinstance(a, np.ndarray):
        return torch.from_numpy(a.astype(np.int64) if a.dtype.kind in "iu" else a.copy())
    return a


class TorchDriver:
    """Uniform access to one torch.nn.Module instance, with the methods of ``Driver``."""

    def __init__(self, layer):
        if not isinstance(layer, torch.nn.Module):
            raise ContractError(_("expected a torch.nn.Module, got {type}").format(
                type=type(layer).__name__))
        self.layer = layer.double()  # parameters created with an explicit float32 too
        self._x = self._y = None

    # --- parameters ------------------------------------------------------------------------
    def _param(self, name):
        """(attribute name, tensor) of a parameter: weight or gamma, bias or beta, alpha, wq, ..."""
        names = ALIASES.get(name, (name,))
        for attr in names:
            value = functools.reduce(lambda obj, part: getattr(obj, part, None), attr.split("."), self.layer)
            if torch.is_tensor(value):
                return attr, value
        raise ContractError(_("the module has no {names}: expected an nn.Parameter of that "
                              "name").format(names=_(" or ").join(names)))

    def set_param(self, name, value):
        """Give a parameter the values ``value`` (same number of elements, any shape)."""
        attr, p = self._param(name)
        if p.numel() != value.size:
            raise ContractError(_(WRONG_SIZE).format(attr=attr, size=value.size,
                                                     shape=value.shape, got=tuple(p.shape)))
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.reshape(tuple(p.shape))))

    def to_dtype(self, names, dtype):
        """Nothing to do: the module follows its input's dtype at every forward."""

    def zero_grad(self, names):
        for name in names:
            self._param(name)[1].grad = None

    def grad(self, name):
        """The parameter's .grad as autograd left it; zeros when no gradient reached it (as
        autograd means a None .grad: the output does not depend on it)."""
        p = self._param(name)[1]
        return to_numpy(torch.zeros_like(p) if p.grad is None else p.grad)

    def param_dtype(self, name):
        return to_numpy(self._param(name)[1][:0]).dtype

    def check_accumulates(self, names):
        """Autograd always accumulates into .grad: every parameter is checked."""

    # --- computation and modes ---------------------------------------------------------------
    def _follow_dtype(self, dtype):
        """Move the module to the input's floating dtype, as a model is moved with .to()."""
        if dtype.kind == "f":
            self.layer.to(torch.from_numpy(np.zeros(0, dtype)).dtype)

    def forward(self, x, *args):
        """The output as a NumPy array; keeps the graph for backward."""
        return self.forward_input_kept(x, *args)[0]

    def forward_input_kept(self, x, *args):
        """forward(x), and whether the module left the tensor it was given unchanged (a loss
        that shifts its logits in place changes its caller's tensor)."""
        self._follow_dtype(x.dtype)
        self._x = torch.tensor(x, requires_grad=x.dtype.kind == "f")
        given = self._x.clone()
        y = self.layer(given, *map(to_tensor, args))
        if not torch.is_tensor(y):
            raise ContractError(_("forward returned a {type}, expected a torch.Tensor").format(
                type=type(y).__name__))
        self._y = y
        kept = torch.allclose(given.detach(), self._x.detach(), rtol=0, atol=0, equal_nan=True)
        return to_numpy(y), bool(kept)

    def backward(self, dy):
        """dL/dx for L = (y * dy).sum() by autograd (dy: an array, or a loss's scalar); the
        parameters' gradients accumulate into their .grad. Zeros where no gradient flows."""
        if self._y is None:
            raise ContractError(_("backward() was called before forward()"))
        self._x.grad = None
        if self._y.requires_grad:  # else the output has no autograd history at all
            self._y.backward(torch.as_tensor(np.asarray(dy), dtype=self._y.dtype).reshape(self._y.shape),
                             retain_graph=True)
        return to_numpy(torch.zeros_like(self._x) if self._x.grad is None else self._x.grad)

    def train(self):
        self.layer.train()

    def eval(self):
        self.layer.eval()

    def running(self, stat):
        """running_mean or running_var, as a float64 copy."""
        value = getattr(self.layer, f"running_{stat}", None)
        if not torch.is_tensor(value):
            raise ContractError(_("expected a buffer running_{stat} (the running statistic "
                                  "BatchNorm keeps), the module has none").format(stat=stat))
        return to_numpy(value).astype(np.float64)

    # --- what only a torch module has ----------------------------------------------------------
    def names(self, kind):
        """'name (shape)' of every parameter or buffer, or the state_dict's keys, one string,
        in alphabetical order: load_state_dict matches keys by name, so the order in which a
        module registers them is its own business (a block's w1 before its gamma). The g and v
        of torch's weight_norm parametrization go by the names of its older API (weight_g,
        weight_v), as normcore's WeightNorm loads either."""
        items = {"parameters": self.layer.named_parameters, "buffers": self.layer.named_buffers}
        if kind == "state_dict keys":
            return ", ".join(sorted(map(_torch_name, self.layer.state_dict()))) or "none"
        return ", ".join(sorted(f"{_torch_name(n)} {tuple(t.shape)}" for n, t in items[kind]())) or "none"

    def buffers_without_history(self):
        """'yes' when no buffer requires grad (running statistics updated under no_grad)."""
        bad = [n for n, b in self.layer.named_buffers() if b.requires_grad or b.grad_fn is not None]
        return "yes" if not bad else "no: " + ", ".join(bad)

    def forward_on_activation(self, x, *args):
        """Forward on tanh(x), as on the output of a previous layer that keeps its output for
        its own backward. Returns (input unchanged, backward through both works) as 'yes'/'no'."""
        self._follow_dtype(x.dtype)
        leaf = torch.tensor(x, requires_grad=True)
        h = torch.tanh(leaf)
        before = h.detach().clone()
        y = self.layer(h, *map(to_tensor, args))
        unchanged = "yes" if torch.equal(h.detach(), before) else "no"
        try:
            y.sum().backward()
        except RuntimeError as e:
            if "inplace" not in str(e):
                raise
            return unchanged, "no: an in-place operation broke it"
        return unchanged, "yes"


def _torch_name(name):
    """A parameter's name, weight_g / weight_v for the g and v of a weight_norm parametrization."""
    return TORCH_PARAMETRIZATION_KEYS.get(name, name)


def call(fn, *args):
    """fn on the arguments as tensors that share the arrays' memory (so that an in-place edit
    of an input shows in the probe's array): a ``Driver`` around what it returned, tensors as
    NumPy arrays, as a NumPy function answer's is."""
    result = fn(*(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args))
    if isinstance(result, (tuple, list)):
        return Driver(tuple(to_numpy(r) if torch.is_tensor(r) else r for r in result))
    return Driver(to_numpy(result) if torch.is_tensor(result) else result)


def maker(cls, forward_only=False):
    """make(*args, **kwargs) -> TorchDriver around a fresh instance, built with float64 as the
    default dtype (so that alpha_init=0.37 keeps every digit); its backward is autograd's, run
    whether or not it is graded (``forward_only`` changes nothing). An ``rng`` seed (Dropout's)
    seeds torch's generator instead: two layers made with rng=7 then draw the same mask. A
    ``process_group`` (a worker of normcore's InProcessGroup) reaches the module as an
    ``AutogradGroup``, whose all_reduce autograd differentiates. For a function answer
    (fold_batchnorm) make calls it (``call``)."""
    if not isinstance(cls, type):
        return lambda *args: call(cls, *args)

    def make(*args, **kwargs):
        seed = kwargs.pop("rng", None)
        if seed is not None:
            torch.manual_seed(seed)
        if kwargs.get("process_group") is not None:
            kwargs["process_group"] = AutogradGroup(kwargs["process_group"])
        default = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            return TorchDriver(cls(*args, **kwargs))
        finally:
            torch.set_default_dtype(default)
    return make
