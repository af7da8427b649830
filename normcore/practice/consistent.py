"""The consistent twin of a mutant: its forward, and the exact derivative of that forward as
its backward.

A candidate who writes a wrong forward (eps outside the square root, the statistics over the
wrong axes, Dropout scaled in evaluation) usually derives the backward from *their own*
forward. A catalogued variant rewrites the reference answer's forward and keeps its backward
formula, the derivative of the right forward; the twin keeps the variant's forward and replaces
the backward by the vector-Jacobian product of that forward, so that both ways a candidate can
go are tried (``mutants.Mutants.twins``).

The derivative is numerical, so that one mechanism serves every variant without anyone
deriving it by hand: ``forward`` saves the layer as it was before (a deep copy: its
parameters, running statistics and random generator, so that a Dropout's re-runs draw the same
mask), and ``backward(dy)`` differentiates ``sum(forward(x) * dy)`` with respect to x and to
every parameter (an attribute with ``.data`` and ``.grad``), element by element by central
differences, re-running the forward on a fresh copy of the saved layer for each step. The
gradients are added into the parameters' ``.grad`` (the contract's +=) and dx is returned, in
the input's and the parameters' dtypes.

How it reaches the grader's 1e-8 (tests/test_practice_consistent.py checks it against every
reference answer's backward on every probe, and against the catalog's hand-derived variants):

- the forward is re-run in extended precision (``np.longdouble``) where it gives the same
  numbers as in the input's dtype, else in float64 (RMSNorm's default eps is the dtype's
  machine epsilon), else not at all (``NoDerivative``);
- each element's central differences at h, h/2, h/4, h/8 are extrapolated by Richardson's
  tableau twice, in even powers of h (a smooth point) and in every power (a kink symmetric
  about the point: the |h| of sqrt(var) at a constant row), keeping the one whose last two
  estimates agree best;
- h starts at 1e-2 of the array's largest |value|; an element whose estimate is not settled
  to 1e-11 of the largest derivative is done again with steps 100 times smaller (a ReLU input
  within h of 0, a variance comparable to eps), up to five times; 1e-9 is still accepted
  after that, and anything worse raises ``NoDerivative``: the twin then reproduces nothing
  on that probe rather than numbers it is unsure of (QK-norm on one side with q and k near 0);
- an input of more than ``ELEMENTWISE_FROM`` values (Dropout's 200 x 100) whose outputs each
  depend on their own input alone (checked on three random halves of it) is differentiated
  all at once, so that its cost stays that of a few forwards.

The cost: a backward takes about eight forwards per input value and parameter value, so the
diagnosis runs a twin only where its forward gives the answer's forward observations
(``diagnosis._File.twins``).
"""

import copy

import numpy as np

WIDE = np.longdouble  # the forward is re-run in extended precision where the platform has it
STEP = 1e-2  # the first step, relative to the largest |value| of the array differentiated
SHRINK = 1e-2  # each next attempt's step, relative to the one before
ATTEMPTS = 5
TOL = 1e-11  # how far apart the last two extrapolations may be, relative to the largest derivative
LOOSE = 1e-9  # what is still accepted after the last attempt (the grader's tolerance is 1e-8)
LEVELS = 4  # the steps h, h/2, h/4, h/8
ELEMENTWISE_FROM = 1000  # inputs larger than this are tried as elementwise first (Dropout)
_SAVED = "_consistent_twin_saved"


class NoDerivative(ArithmeticError):
    """The numerical derivative did not settle: the forward is not differentiable there in a
    way the extrapolation can handle."""


def consistent_twin(cls):
    """A subclass of the layer class ``cls`` whose backward is the exact derivative of its
    forward (see the module's docstring)."""

    class Twin(cls):
        def forward(self, x, *args):
            saved = self.__dict__.pop(_SAVED, None)
            try:
                before = copy.deepcopy(self)
            finally:
                if saved is not None:
                    self.__dict__[_SAVED] = saved
            given = np.array(x, copy=True)
            y = cls.forward(self, x, *args)
            self.__dict__[_SAVED] = (before, given, args, np.array(y, dtype=np.float64))
            return y

        def backward(self, dy=1.0):
            before, x, args, y = self.__dict__[_SAVED]
            return vjp(cls.forward, before, x, args, y, dy, self)

    Twin.__name__ = Twin.__qualname__ = cls.__name__
    Twin.__module__ = cls.__module__
    return Twin


def parameters(layer):
    """{attribute name: parameter} of the layer's parameters: attributes with ``.data`` (an
    array of floats) and ``.grad``."""
    return {name: value for name, value in sorted(vars(layer).items())
            if hasattr(value, "data") and hasattr(value, "grad")
            and isinstance(value.data, np.ndarray) and value.data.dtype.kind == "f"}


def vjp(forward, before, x, args, y, dy, live):
    """dx of ``sum(forward(before, x, *args) * dy)`` (``y``: what that forward gave); each
    parameter's gradient is added into the ``.grad`` of the same parameter of ``live`` (the
    layer the backward was called on)."""
    base, wide = _widened(forward, before, x, args, y)
    x_wide, weight = np.asarray(x, dtype=wide), np.asarray(dy, dtype=wide)

    def slope(name, index, h):
        """sum((y(v + h) - y(v - h)) * dy) / 2h for the element ``index`` of x (name None) or of
        a parameter, h as the floats v + h and v - h have it: only the outputs the element
        moves contribute to the difference, so rounding stays small."""
        ys, moved = [], wide(0)
        for step in (h, -h):
            layer, inputs = copy.deepcopy(base), x_wide.copy()
            target = inputs if name is None else parameters(layer)[name].data
            value = target[index]
            target[index] = value + wide(step)
            moved += abs(target[index] - value)
            ys.append(np.asarray(forward(layer, inputs, *args), dtype=wide))
        return np.sum((ys[0] - ys[1]) * weight) / moved

    def run(inputs):
        return np.asarray(forward(copy.deepcopy(base), inputs, *args), dtype=wide)

    dx = _elementwise_dx(run, x_wide, weight) if x_wide.size > ELEMENTWISE_FROM else None
    if dx is None:
        dx = _gradient(x_wide, lambda index, h: slope(None, index, h))
    for name, p in parameters(live).items():
        data = parameters(base)[name].data
        g = _gradient(data, lambda index, h, name=name: slope(name, index, h))
        grad = p.grad if isinstance(p.grad, np.ndarray) else np.zeros_like(p.data)
        p.grad = grad + g.reshape(grad.shape).astype(grad.dtype)
    dtype = dy.dtype if isinstance(dy, np.ndarray) else np.asarray(x).dtype
    return dx.astype(dtype)


def _widened(forward, before, x, args, y):
    """(a copy of the layer ``before`` with its parameters in the widest float that computes
    the same forward, that float): extended precision, else float64. A forward may depend on
    the dtype (RMSNorm's default eps is the input dtype's machine epsilon): a float is used only
    when the forward in it gives ``y`` again, to float64's rounding (to float32's for a float32
    input); else ``NoDerivative``."""
    given = np.asarray(x).dtype
    tol = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 1e-2}.get(given, 1e-12)
    largest = float(np.max(np.abs(y[np.isfinite(y)]), initial=0.0)) or 1e-300
    for wide in dict.fromkeys((WIDE, np.float64)):
        base = copy.deepcopy(before)
        for p in parameters(base).values():
            p.data = p.data.astype(wide)
        again = forward(copy.deepcopy(base), np.asarray(x, dtype=wide), *args)
        again = np.asarray(again, dtype=np.float64)
        if again.shape == y.shape and np.allclose(again, y, rtol=0, atol=tol * largest, equal_nan=True):
            return base, wide
    raise NoDerivative("the forward gives other numbers in float64")


def _elementwise_dx(run, x, weight):
    """dx of a forward whose every output depends on its own input only (Dropout), from
    central differences of the whole input at once; None when moving some inputs moves other
    outputs (tried on three random halves of the input), or the output has another shape."""
    y = run(x)
    if y.shape != x.shape:
        return None
    rng, h = np.random.default_rng(0), STEP * (float(np.max(np.abs(x), initial=0.0)) or 1.0)
    for _ in range(3):
        half = rng.random(x.shape) < 0.5
        moved = x.copy()
        moved[half] += h
        if not np.array_equal(run(moved)[~half], y[~half], equal_nan=True):
            return None

    def slopes(step):
        plus, minus = x + step, x - step
        return (run(plus) - run(minus)) * weight / (plus - minus)
    return _settled(x.shape, h, lambda step, todo: _extrapolated(slopes, step))


def _gradient(values, slope):
    """The derivative with respect to every element of ``values`` (float64), by extrapolated
    central differences (``slope(index, h)``: the central difference at step h): each element
    from the largest step whose extrapolation settles, else ``NoDerivative``."""
    h = STEP * (float(np.max(np.abs(values), initial=0.0)) or 1.0)

    def attempt(step, todo):
        grad, error = np.full(values.shape, np.nan), np.full(values.shape, np.inf)
        for index in zip(*np.nonzero(todo)):
            grad[index], error[index] = _extrapolated(lambda s, index=index: slope(index, s), step)
        return grad, error
    return _settled(values.shape, h, attempt)


def _settled(shape, h, attempt):
    """The derivative from ``attempt(step, todo) -> (estimates, error estimates)`` at the steps
    h, h * SHRINK, ...: each element's estimate from the attempt whose error is smallest, done
    again with a smaller step while its error exceeds TOL of the largest derivative; after
    ATTEMPTS, LOOSE of it is still accepted, anything more raises ``NoDerivative``."""
    grad, error = np.full(shape, np.nan), np.full(shape, np.inf)
    todo = np.ones(shape, dtype=bool)
    for k in range(ATTEMPTS):
        estimate, err = attempt(h * SHRINK ** k, todo)
        better = todo & ~(err >= error)  # smaller, or the first, or nan (a nan output: kept)
        grad[better], error[better] = estimate[better], err[better]
        largest = float(np.max(np.abs(grad[np.isfinite(grad)]), initial=0.0))
        todo = np.isfinite(grad) & (error > TOL * largest)
        if not todo.any():
            return grad
    if not (error[todo] > LOOSE * largest).any():
        return grad
    raise NoDerivative("the numerical derivative did not settle")


def _extrapolated(slope, h):
    """(derivative, error estimate) from central differences ``slope(step)`` at h, h/2, ...,
    h/2^(LEVELS-1), by Richardson's tableau twice: in even powers of h (a smooth point) and in
    every power (a kink symmetric about the point, such as |h|); of the two, the one whose last
    two estimates agree best (element by element for arrays)."""
    slopes = [np.asarray(slope(h / 2 ** k), dtype=np.longdouble) for k in range(LEVELS)]
    best, best_error = None, None
    for powers in (range(2, 2 * LEVELS, 2), range(1, LEVELS)):
        row = slopes
        for power in powers:
            previous, factor = row, 2.0 ** power
            row = [(factor * b - a) / (factor - 1) for a, b in zip(row, row[1:])]
            if len(row) == 1:
                break
        estimate = np.asarray(row[0], dtype=np.float64)
        error = np.asarray(np.abs(row[0] - previous[-1]), dtype=np.float64)
        error = np.where(np.isfinite(estimate), error, np.nan)
        if best is None:
            best, best_error = estimate, error
        else:
            smaller = error < best_error
            best, best_error = np.where(smaller, estimate, best), np.where(smaller, error, best_error)
    return best, best_error
