"""Mistakes with a constant: an eps inside a log, a clip value, a hard-coded momentum, a
hard-coded keep probability, a hard-coded alpha. The catalog writes each such variant once,
with a placeholder for its constant; the grader finds the constant that reproduces an answer.

A catalog variant's replacement text may be a ``WithConstant``: a text such as
``"logp = np.log(p + {eps})"`` and a ``Constant`` (its name, its default, the ``Kind`` of values
it takes). As a string it *is* the text at the default (``... + 1e-12``), so the catalog, the
mutants and every test see exactly what they saw before constants could be fitted; ``at(value)``
is the text at another value. A mutant at another value is keyed ``(mistake id, At(variant,
value))`` where a plain one is ``(mistake id, variant)``, and ``Mutants.run`` compiles it like
any other (``variant_at``).

``fit`` is what the diagnosis calls when no catalogued mistake reproduces an answer at the
catalog's constants (alone or in a pair). For each variant with a constant it tries:

1. the round values people write (1, 2 and 5 times a power of ten for an eps or a clip, the
   machine epsilons; steps of 0.01 for a momentum or a probability; ...), each dropped at the
   first probe its mutant does not reproduce (``diagnosis`` orders the failing probes first);
2. if none reproduces, and the variant can change every observation the answer changes (at a
   few values across the range: ``_can_change_enough``), a one-dimensional search: a grid over
   the kind's range (in log space for a scale-free constant), then a golden-section search
   around the grid's best point on how far the mutant's numbers are from the answer's
   (``_mismatch``); the point found, or a rounding of it, must then reproduce the answer.

A constant is named only under the diagnosis's own rule: its mutant reproduces every
observation of every probe (``_File.reproduced_by``), and it is *identifiable*: the values at
either end of a narrow window around it (``Kind.window``: a factor of 1.01 from end to end for
an eps or a clip, a width of 0.001 for a momentum or a probability) do not reproduce the
answer, no round value outside the window does, and no other mistake reproduces it at any
constant. An eps too small to change any number the probes record cannot be told from
another: then either the answer is right on every probe (it passes: no diagnosis runs) or
nothing is named. The value reported is the roundest number (fewest significant digits) in
the window whose mutant reproduces the answer, so a file that writes ``1e-5`` is reported as
``1e-05``: the value is stated to the window's precision.

A mistake named at the catalog's own constant (a single or a pair, as before constants were
fitted) keeps its name, and is said with that constant when the window test pins it down
(``said``). When the mistake's variants with different constants give the same numbers at
the value found (a small eps inside the log, or a clip at it), the report says both names.
A fitted constant is searched only when no mistake reproduces the answer at the catalog's
constants, for single mistakes only (not in pairs).
"""

import math
from dataclasses import dataclass, field

import numpy as np

from ..i18n import N_
from .probes import UNOBSERVED, distance, is_dtype_row

_GOLDEN = (math.sqrt(5) - 1) / 2
_GRID = 24  # points of the search's grid over a kind's range
_STEPS = 30  # golden-section steps
_DIGITS = 8  # the most significant digits a reported value has
SAMPLES = (0.125, 0.5, 0.875, 1.0)  # where in a kind's range a variant is tried before a search


@dataclass(frozen=True)
class Kind:
    """The values a constant can take: the range searched (``low``..``high``, in log space when
    ``log``), the round values tried first, and the width of the window (``window``) that the
    values reproducing an answer must stay within for the constant to be named (``spread``: a
    ratio hi / lo when ``log``, else a width hi - lo)."""

    name: str
    low: float
    high: float
    log: bool
    round_values: tuple
    spread: float

    def to_line(self, value):
        return math.log10(value) if self.log else value

    def from_line(self, t):
        return float(10.0 ** t) if self.log else float(t)

    def window(self, value):
        """(lo, hi): the narrow window around ``value`` (a ratio ``spread`` from end to end, or
        a width ``spread``) that a named constant's reproducing values must stay within."""
        if self.log:
            return value / math.sqrt(self.spread), value * math.sqrt(self.spread)
        return value - self.spread / 2, value + self.spread / 2


def _one_two_five(first, last):
    """1, 2 and 5 times 10**k for k from ``first`` to ``last``."""
    return tuple(float(f"{m}e{k}") for k in range(first, last + 1) for m in (1, 2, 5))


MACHINE_EPS = (float(np.finfo(np.float64).eps), float(np.finfo(np.float32).eps),
               float(np.finfo(np.float16).eps), float(np.finfo(np.float64).tiny),
               float(np.finfo(np.float32).tiny))

# an eps added before a log, a clip's lower bound: any positive size, searched by its exponent
SMALL = Kind("small", 1e-300, 1e-1, True,
             _one_two_five(-20, -2) + (1e-30, 1e-50, 1e-100) + MACHINE_EPS, 1.01)
# a momentum, a probability
FRACTION = Kind("fraction", 0.0, 1.0, False,
                tuple(round(0.01 * k, 2) for k in range(1, 101)) + (0.001, 0.005, 0.995, 0.999),
                1e-3)
# a positive scale such as DyT's alpha
POSITIVE = Kind("positive", 1e-3, 1e3, True,
                tuple(round(0.05 * k, 2) for k in range(1, 61))
                + tuple(round(0.5 * k, 1) for k in range(7, 21)) + (20.0, 50.0, 100.0), 1.001)


@dataclass(frozen=True)
class Constant:
    """A constant of a catalogued variant: its ``name`` (the placeholder ``{name}`` in the
    variant's text), its ``default`` (the value the catalog has always had), its ``kind`` and
    ``said``, how a report says it: an English message with ``{value}``, marked with ``N_`` in
    the catalog's files and translated with the catalog's texts."""

    name: str
    default: float
    kind: Kind
    said: str


def literal(value):
    """The Python literal a mutant's source gets for ``value`` (repr: exact, and parseable)."""
    return repr(float(value))


class WithConstant(str):
    """A variant's replacement text with a constant: as a string, the text at the constant's
    default; ``at(value)`` the text at another value."""

    def __new__(cls, template, constant):
        placeholder = "{" + constant.name + "}"
        if placeholder not in template:
            raise ValueError(f"{template!r} has no {placeholder}")
        text = super().__new__(cls, template.replace(placeholder, literal(constant.default)))
        text.template, text.constant = template, constant
        return text

    def __getnewargs__(self):  # copy and pickle make it again from its parts
        return self.template, self.constant

    def at(self, value):
        return self.template.replace("{" + self.constant.name + "}", literal(value))


@dataclass(frozen=True)
class At:
    """A variant's number and the value its constant takes: the second half of a fitted mutant's
    key, ``(mistake id, At(number, value))``."""

    number: int
    value: float
    constant: Constant = field(default=None, compare=False)  # what the report says of it

    def __str__(self):  # the mutant's tag: ce-log-eps.0=1e-05
        return f"{self.number}={literal(self.value)}"


def constant_of(variant):
    """The Constant of a variant (a tuple of replacements), or None when it has none; the
    replacements of one variant share one constant."""
    constants = {new.constant for _, new in variant if isinstance(new, WithConstant)}
    if len(constants) > 1:
        raise ValueError(f"a variant with several constants: {variant!r}")
    return constants.pop() if constants else None


def variant_at(variants, k):
    """The replacements of variant ``k`` of a list of variants: ``k`` a number, or ``At`` (the
    variant with its constant at another value)."""
    if not isinstance(k, At):
        return variants[k]
    return tuple((anchor, new.at(k.value) if isinstance(new, WithConstant) else new)
                 for anchor, new in variants[k.number])


def fittable(mutants):
    """[(mistake id, variant number, Constant)] of the variants of an exercise's mutants that
    carry a constant; one per distinct text (two variants that differ only by their default
    constant are one search)."""
    found, seen = [], set()
    for mistake_id, mistake in mutants.mistakes.items():
        for number, variant in enumerate(mistake.variants[mutants.key]):
            constant = constant_of(variant)
            if constant is None:
                continue
            text = tuple((a.tag, getattr(new, "template", new)) for a, new in variant)
            if (mistake_id, text) not in seen:
                seen.add((mistake_id, text))
                found.append((mistake_id, number, constant))
    return found


@dataclass(frozen=True)
class Fitted:
    """A constant that reproduces an answer: the mistake, its variant, the Constant and the
    value found (``value``), with the window (``low``, ``high``) the probes pin it to."""

    mistake_id: str
    number: int
    constant: Constant
    value: float
    low: float
    high: float

    @property
    def key(self):
        return ((self.mistake_id, At(self.number, self.value, self.constant)),)


def fit(file, mutants):
    """The keys of the mutants, at a fitted constant, that reproduce the answer of ``file``
    (a ``diagnosis._File``), or [] when none does or when the probes cannot tell which
    mistake or which value it is: every key returned is of one mistake at one value (two
    variants of the mistake may reproduce it alike)."""
    found = []
    for mistake_id, number, constant in fittable(mutants):
        result = _fit_one(file, mistake_id, number, constant)
        if result is _UNIDENTIFIABLE:
            return []
        if result is not None:
            found.append(result)
    if len({(f.mistake_id, f.value) for f in found}) != 1:
        return []
    return [f.key for f in found]


def said(file, mutants, keys):
    """{mistake id: (Constant, value)}: the constant each named mistake was found with, over
    every key that reproduces the answer (``keys``: two variants may reproduce it alike).

    A part of a key says its constant when it has one and the probes pin it down: the value
    fitted, or for a variant at the catalog's constant that constant, when the ends of its
    window do not reproduce the answer. A mistake is said with a constant only when every key
    says the same value; when the keys give it under different names (log(p + eps) and a clip
    at eps give the same numbers for a small eps) it is said with both names. Otherwise the
    mistake is named without a constant, as it was before constants were fitted.
    """
    told = {}
    for key in keys:
        for i, (mistake_id, _) in enumerate(key):
            told.setdefault(mistake_id, set()).add(_told(file, mutants, key, i))
    if all(len(key) == 1 for key in keys):  # the mistake's other constants at the value told
        for mistake_id, found in told.items():
            for told_as in [pair for pair in found if pair is not None]:
                found |= _alike(file, mutants, mistake_id, *told_as)
    return {mistake_id: _one(found) for mistake_id, found in told.items() if _one(found)}


def _alike(file, mutants, mistake_id, constant, value):
    """{(Constant, value)} of the mistake's variants with another constant that reproduce the
    answer at the same value (a clip at 1e-12 gives what log(p + 1e-12) gives)."""
    return {(other, value) for m, number, other in fittable(mutants)
            if m == mistake_id and other.name != constant.name
            and file.reproduced_by(((m, At(number, value, other)),))}


def _told(file, mutants, key, i):
    """(Constant, value) of part ``i`` of a key, or None (no constant, or not pinned down)."""
    mistake_id, k = key[i]
    twin = type(k) if hasattr(k, "k") else None  # a consistent twin of variant k.k (mutants.Consistent)
    number = k.k if twin else k
    if isinstance(number, At):
        return number.constant, number.value
    constant = constant_of(mutants.mistakes[mistake_id].variants[mutants.key][number])
    if constant is None:
        return None

    def reproduces(value):
        at = At(number, value, constant)
        return file.reproduced_by(key[:i] + ((mistake_id, twin(at) if twin else at),) + key[i + 1:])
    low, high = constant.kind.window(constant.default)
    if _reproduces_beside(reproduces, constant.kind, low, high):
        return None
    return constant, _roundest(reproduces, low, high, constant.default)


def _one(found):
    """The one (Constant, value) of a set, or a Constant named after all of them when they
    differ in name only (``CANNOT_TELL``); None when a value differs or is not
    told."""
    if None in found or len({value for _, value in found}) != 1:
        return None
    if len(found) == 1:
        return next(iter(found))
    constants = sorted({constant.name: constant for constant, _ in found}.items())
    value = next(iter(found))[1]
    either = Constant("/".join(name for name, _ in constants), value, constants[0][1].kind,
                      CANNOT_TELL)
    return either, value


# how a report says a constant the probes give under two names (an eps inside the log, or a
# clip's bound: the same numbers when it is small); ``{name}`` is "clip/eps". A catalog text:
# this file's messages are in the catalog's domain (``i18n/catalogs.py``, ``SOURCES``).
CANNOT_TELL = N_("with {name} = {value} (the probes cannot tell which)")

_UNIDENTIFIABLE = object()  # values reproduce the answer, but not within one narrow window


def _fit_one(file, mistake_id, number, constant):
    """The Fitted of one variant; None when no value reproduces the answer, _UNIDENTIFIABLE
    when values do but the probes cannot tell which."""
    kind = constant.kind

    def reproduces(value):
        return file.reproduced_by(((mistake_id, At(number, value, constant)),))

    hits = [v for v in kind.round_values if v != constant.default and reproduces(v)]
    if not hits:
        if not _can_change_enough(file, mistake_id, number, constant):
            return None
        best = _search(file, mistake_id, number, kind)
        if best is None:
            return None
        hits = [v for v in _rounded(best) + [best] if reproduces(v)][:1]
        if not hits:
            return None
    low, high = kind.window(hits[0])
    if _reproduces_beside(reproduces, kind, low, high) or not all(low <= v <= high for v in hits):
        return _UNIDENTIFIABLE
    value = _roundest(reproduces, low, high, hits[0])
    return Fitted(mistake_id, number, constant, value, low, high)


def _search(file, mistake_id, number, kind):
    """The value of the kind's range whose mutant comes closest to the answer: the best point
    of a grid (in log space for a scale-free kind), refined by a golden-section search between
    its neighbours; None when every point is infinitely far (the mutant never gives the
    answer's structure of rows and errors)."""
    def far(t):
        key = ((mistake_id, At(number, kind.from_line(t))),)
        return max((_mismatch(file.users[p.label], file.mutants.run(key, p)) for p in file.probes),
                   default=0.0)

    low, high = kind.to_line(kind.low), kind.to_line(kind.high)
    grid = np.linspace(low, high, _GRID)
    if not kind.log:  # a fraction's ends (0: nothing kept; 1: nothing dropped) are real values
        grid = grid[1:-1] if kind.low == 0.0 else grid
    scores = [far(t) for t in grid]
    i = int(np.argmin(scores))
    if not np.isfinite(scores[i]):
        return None
    a, b = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = far(c), far(d)
    for _ in range(_STEPS):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = far(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = far(d)
    return kind.from_line(c if fc <= fd else d)


def _reproduces_beside(reproduces, kind, low, high):
    """Whether a value at an end of the window [low, high] (inside the kind's range) reproduces
    the answer too: then the probes cannot pin the constant down to that window."""
    return any(kind.low < v <= kind.high and reproduces(v) for v in (low, high))


def _can_change_enough(file, mistake_id, number, constant):
    """Whether the variant, at a few values across the kind's range (its default and SAMPLES),
    changes between them every observation the answer changes: a variant that leaves one of
    them as the reference has it at all of these values is not searched (as a pair's halves
    are pruned; this can only miss a name, never give a wrong one)."""
    kind = constant.kind
    low, high = kind.to_line(kind.low), kind.to_line(kind.high)
    values = {constant.default} | {kind.from_line(low + f * (high - low)) for f in SAMPLES}
    changed = set()
    for value in values:
        changed |= file.changes(((mistake_id, At(number, value, constant)),))
    return file.changed <= changed


def _rounded(value):
    """``value`` rounded to 1, 2, ... _DIGITS significant digits."""
    return [float(f"{value:.{digits - 1}e}") for digits in range(1, _DIGITS + 1)]


def _roundest(reproduces, low, high, value):
    """The value with the fewest significant digits in [low, high] whose mutant reproduces the
    answer (``value`` rounded to 1, 2, ... digits); ``value`` itself when none is."""
    return next((v for v in _rounded(value) if low <= v <= high and reproduces(v)), value)


def _mismatch(user, run):
    """How far a mutant's run of one probe is from the answer's, in tolerances (0 within every
    observation's tolerance, inf where the two differ in which rows they made or in an error):
    the search's measure; the rule that names a constant stays ``diagnosis._File.reproduced_by``."""
    if run is None:
        return float("inf")
    if not isinstance(user.error, UNOBSERVED) and (
            type(user.error) is not type(run.error) or set(user.rows) != set(run.rows)):
        return float("inf")
    worst = 0.0
    for label, observation in user.rows.items():
        if is_dtype_row(label):
            continue
        if label not in run.rows:
            return float("inf")
        mutant = run.rows[label]
        gap = distance(observation.value, mutant.value, mutant.metric, mutant.scale)
        worst = max(worst, gap / mutant.tol if mutant.tol > 0 else (0.0 if gap == 0 else float("inf")))
    return worst
