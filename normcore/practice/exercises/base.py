"""What every exercise is made of: the ``Exercise`` record, the ``Probe``, and the probe
builders the families share (a norm's forward and backward, gradient accumulation).

A probe builds a layer with ``make(*args, **kwargs)`` (a ``Driver`` around the user's class,
normcore's layer, or a catalogued mutant), feeds it inputs drawn from its own seeded
generator, and records named observations with ``rec(label, value, tol, metric)``. Every
implementation sees exactly the same inputs, so observations can be compared one to one.
Parameters are random (never the initial ones and zeros) and upstream gradients are random
(never ones), in float64 unless the probe is about float32.
"""

import re
from dataclasses import dataclass

import numpy as np

from ...i18n import N_, translator
from ..driver import NotApplicable
from ..probes import F32, F64, Tolerance

_ = translator("practice")



@dataclass(frozen=True)
class Probe:
    label: str
    run: callable  # run(rec, make, rng)


@dataclass(frozen=True)
class Exercise:
    name: str  # "batchnorm"
    class_name: str  # the class the skeleton defines (the function, for a function exercise)
    reference: type  # normcore's layer, the grader's reference
    summary: str
    probes: tuple
    example_args: tuple  # constructor arguments and an input shape for a quick first call
    example_shape: tuple
    difficulty: int = 2  # 1 easy, 2 medium, 3 hard: the order of the path through the exercises
    minutes: int = 30  # the time box an interview would give it
    example_extra: tuple = ()  # forward's arguments after the input (CrossEntropyLoss's targets)
    function: bool = False  # the candidate writes a function (class_name is its name), not a layer


DIFFICULTY = {1: N_("easy"), 2: N_("medium"), 3: N_("hard")}  # translated where shown


def _tol(x):
    """F64; or F32, grown with the input's magnitude M beyond 10: a float32 input of magnitude M
    is rounded by about M * 6e-8, which every correct formula inherits in its own way (x - max
    and x - logsumexp(x) differ by that much for logits around 100). A float64 input's
    tolerance carries the float32 one too (``probes.Tolerance``): an answer that computes in
    float32 inside is held to it."""
    float32 = F32 * max(1.0, float(np.abs(x).max(initial=0.0)) / 10.0)
    return float32 if x.dtype == np.float32 else Tolerance(F64, float32)


def _randomize(layer, rng, shape, params):
    for name in params:
        layer.set_param(name, rng.standard_normal(shape))


def _step(rec, layer, x, rng, params, prefix=""):
    """One forward and one backward with a random upstream gradient: rows forward, dx, dgamma,
    dbeta. A float32 input meets float32 parameters (``Driver.to_dtype``)."""
    layer.to_dtype(params, x.dtype)
    y = layer.forward(x)
    rec(prefix + "forward", y, _tol(x))
    if x.dtype != np.float64:
        rec(prefix + "output dtype", str(np.asarray(y).dtype), 0, "equal")
    dy = rng.standard_normal(x.shape).astype(x.dtype)
    layer.zero_grad(params)
    rec(prefix + "dx", layer.backward(dy), _tol(x))
    for name in params:
        rec(prefix + "d" + name, layer.grad(name), _tol(x))


def norm_probe(label, args, pshape, xshape, params, dtype=np.float64, scale=1.0, shift=0.0,
               edit=None, kwargs=None, evaluation=False):
    """A forward and backward of a norm built as ``make(*args, **kwargs)`` on a random input.

    ``edit(x)`` changes the input in place (e.g. makes a row constant); ``evaluation`` switches the
    layer to eval mode first (for the norms that behave the same in both modes).
    """
    def run(rec, make, rng):
        layer = make(*args, **(kwargs or {}))
        _randomize(layer, rng, pshape, params)
        x = rng.standard_normal(xshape) * scale + shift
        if edit is not None:
            edit(x)
        x = x.astype(dtype)
        if evaluation:
            layer.eval()
        _step(rec, layer, x, rng, params)
    return Probe(label, run)


def _two_backward_calls(rec, layer, rng, xshape, params, yshape=None, draw=None):
    """One forward, two backward calls: records each parameter's gradient, which must be the sum.
    The input is ``draw(rng, xshape)`` (standard normal by default), the upstream gradients of
    shape ``yshape`` (default: the input's)."""
    layer.check_accumulates(params)
    layer.forward(rng.standard_normal(xshape) if draw is None else draw(rng, xshape))
    layer.zero_grad(params)
    layer.backward(rng.standard_normal(yshape or xshape))
    layer.backward(rng.standard_normal(yshape or xshape))
    for name in params:
        rec(f"d{name} after two backward calls", layer.grad(name), F64)


def accumulation_probe(args, pshape, xshape, params, kwargs=None):
    """Two backward calls after one forward: the parameter gradients must be their sum."""
    def run(rec, make, rng):
        layer = make(*args, **(kwargs or {}))
        _randomize(layer, rng, pshape, params)
        _two_backward_calls(rec, layer, rng, xshape, params)
    return Probe(f"gradients accumulate {xshape}", run)


def _lifted(index, by):
    """An edit that raises x[index] by ``by``."""
    def edit(x):
        x[index] += by
    return edit


def _constant(index, value=2.5):
    def edit(x):
        x[index] = value
    return edit


REFUSALS = (ValueError, KeyError, NotImplementedError, AssertionError)  # how a layer says no


def refusable(option, run):
    """The body ``run(rec, make, rng)`` of a probe of an option an answer may refuse (the
    reordered position, added after answers that offer only Pre-Norm and Post-Norm were
    published). The answer refuses it when building its layer with the option raises a
    ValueError, KeyError, NotImplementedError or AssertionError, or when one of these, raised
    later, names the option's value (``KeyError('reordered')``): the probe's observations are
    then not made, NotApplicable ("n/a", neither for nor against a mistake), as the running
    statistics of a training-only BatchNorm are not. Any other error, or one that does not
    name the value, is the answer's to be graded on. ``option``: (keyword, value), e.g.
    ("position", "reordered")."""
    keyword, value = option
    named = re.compile(rf"\b{re.escape(value)}\b")

    def refused():
        return NotApplicable(_("not written: the layer refuses {keyword}={value!r}").format(
            keyword=keyword, value=value))

    def built(make):
        def make_or_refuse(*args, **kwargs):
            try:
                return make(*args, **kwargs)
            except REFUSALS as e:
                raise refused() from e
        return make_or_refuse

    def guarded(rec, make, rng):
        try:
            run(rec, built(make), rng)
        except REFUSALS as e:
            if not named.search(str(e)):
                raise
            raise refused() from e
    return guarded
