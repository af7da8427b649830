"""Driving a layer written to the practice contract: the user's, normcore's, or a mutant.

The contract (stated in every skeleton): ``forward(x) -> y``; ``backward(dy) -> dx``, which
accumulates into ``gamma.grad`` / ``beta.grad``; ``gamma`` / ``beta`` objects with ``.data``
and ``.grad``; ``train()`` / ``eval()``; BatchNorm's ``running_mean`` / ``running_var``.
Where it is cheap the driver is forgiving: ``weight`` / ``bias`` are accepted for ``gamma`` /
``beta`` (other exercises name their parameters as they like: ``wq``, ``w1``), plain arrays
are accepted for the parameters with their gradients in ``dgamma`` / ``dbeta``, and a
missing ``train()`` / ``eval()`` is replaced by setting ``training``.
"""

import numpy as np

from ..i18n import N_, translator

_ = translator("practice")

# a parameter given the wrong number of values (the NumPy and the PyTorch track)
WRONG_SIZE = N_("expected {attr} with {size} values, shape {shape}, got shape {got}")
ALIASES = {"gamma": ("gamma", "weight"), "beta": ("beta", "bias")}


class ContractError(Exception):
    """The layer does not follow the practice contract; the message says what was expected."""


class NotApplicable(Exception):
    """The check does not apply to this layer (e.g. accumulation with plain-array parameters)."""


def _is_parameter(value):
    return hasattr(value, "data") and hasattr(value, "grad")


class Driver:
    """Uniform access to one layer instance. ``forward_only``: the layer's backward is never
    called (a forward-only answer): backward returns zeros and gradients None, so that the
    forward observations a probe makes after a backward are still recorded."""

    def __init__(self, layer, forward_only=False):
        self.layer, self.forward_only = layer, forward_only

    # --- parameters ------------------------------------------------------------------------
    def _param(self, name):
        """(attribute name, object) of gamma or beta: a Parameter-like object or an array."""
        names = ALIASES.get(name, (name,))
        for attr in names:
            value = getattr(self.layer, attr, None)
            if _is_parameter(value) or isinstance(value, np.ndarray):
                return attr, value
        raise ContractError(_("the layer has no {name}: expected an attribute {names} with .data "
                              "and .grad, or a NumPy array").format(
                                  name=name, names=_(" or ").join(names)))

    def set_param(self, name, value, dtype=None):
        """Give gamma or beta the values ``value`` (same number of elements, any shape), in
        ``dtype`` (default: the parameter's own)."""
        attr, p = self._param(name)
        current = np.asarray(p.data if _is_parameter(p) else p)
        if current.size != value.size:
            raise ContractError(_(WRONG_SIZE).format(attr=attr, size=value.size, shape=value.shape,
                                                  got=current.shape))
        new = np.array(value.reshape(current.shape), dtype=dtype or current.dtype)
        if _is_parameter(p):
            p.data = new
            if isinstance(p.grad, np.ndarray):  # its gradient follows it, as in module.to()
                p.grad = p.grad.astype(new.dtype)
        else:
            setattr(self.layer, attr, new)

    def to_dtype(self, names, dtype):
        """Cast the parameters ``names`` to ``dtype``, keeping their values, as
        ``module.to(torch.float32)`` does before a float32 forward: a layer computes in its
        input's dtype, with parameters of that dtype."""
        for name in names:
            attr, p = self._param(name)
            self.set_param(name, np.asarray(p.data if _is_parameter(p) else p), dtype)
            key = None if _is_parameter(p) else self._grad_attribute(attr, name)
            if key is not None and isinstance(getattr(self.layer, key), np.ndarray):  # dgamma
                setattr(self.layer, key, getattr(self.layer, key).astype(dtype))

    def zero_grad(self, names):
        for name in names:
            _, p = self._param(name)
            if _is_parameter(p):
                p.grad = np.zeros_like(np.asarray(p.data))

    def grad(self, name):
        """dL/dgamma or dL/dbeta as the layer stored it."""
        if self.forward_only:
            return None
        attr, p = self._param(name)
        if _is_parameter(p):
            return p.grad
        key = self._grad_attribute(attr, name)
        if key is None:
            raise ContractError(_("{attr} is a plain array: expected its gradient in an "
                                  "attribute d{attr} (or {attr}_grad), the layer has "
                                  "neither").format(attr=attr))
        return getattr(self.layer, key)

    def _grad_attribute(self, attr, name):
        """The attribute holding a plain-array parameter's gradient (dgamma), or None."""
        return next((key for key in (f"d{attr}", f"d{name}", f"{attr}_grad")
                     if hasattr(self.layer, key)), None)

    def param_dtype(self, name):
        """The dtype of gamma's or beta's values."""
        _, p = self._param(name)
        return np.asarray(p.data if _is_parameter(p) else p).dtype

    def check_accumulates(self, names):
        """Raise NotApplicable unless every parameter keeps its gradient in ``.grad``."""
        if not all(_is_parameter(self._param(n)[1]) for n in names):
            raise NotApplicable(_("parameters are plain arrays: gradient accumulation is not "
                                  "checked"))

    # --- computation and modes ---------------------------------------------------------------
    def forward(self, x, *args):  # args: CrossEntropyLoss's targets
        return self.layer.forward(x.copy(), *args)  # a copy: a layer that edits its input in
                                                    # place must not change the probe's next input

    def forward_input_kept(self, x, *args):
        """forward(x) as ``forward`` runs it, and whether the layer left the array it was given
        unchanged: a loss that shifts its logits in place changes its caller's array."""
        given = x.copy()
        return self.layer.forward(given, *args), bool(np.array_equal(given, x, equal_nan=True))

    def backward(self, dy):  # dy: an array, or a loss's scalar upstream gradient
        if self.forward_only:
            return np.zeros_like(dy) if isinstance(dy, np.ndarray) else None
        return self.layer.backward(dy.copy() if isinstance(dy, np.ndarray) else dy)

    def _mode(self, method, training):
        if callable(getattr(self.layer, method, None)):
            getattr(self.layer, method)()
        else:
            self.layer.training = training

    def train(self):
        self._mode("train", True)

    def eval(self):
        self._mode("eval", False)

    def running(self, stat):
        """running_mean or running_var, as a float64 copy."""
        if not hasattr(self.layer, f"running_{stat}"):
            raise ContractError(_("expected an attribute running_{stat} (the running statistic "
                                  "BatchNorm keeps), the layer has none").format(stat=stat))
        return np.array(getattr(self.layer, f"running_{stat}"), dtype=np.float64)


def maker(cls, forward_only=False):
    """make(*args, **kwargs) -> Driver around a fresh instance; an ``rng`` it does not take is dropped."""
    def make(*args, **kwargs):
        try:
            return Driver(cls(*args, **kwargs), forward_only)
        except TypeError as e:
            if "rng" not in kwargs or "rng" not in str(e):
                raise
            kwargs.pop("rng")
            return Driver(cls(*args, **kwargs), forward_only)
    return make
