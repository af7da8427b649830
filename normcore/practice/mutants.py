"""The catalogued mistakes as runnable layers: each variant applied to the reference answer.

``apply_variant`` rewrites the reference answer's source as a variant of the ``catalog`` says;
``mutant_class`` compiles the result; ``Mutants`` holds an exercise's mutants (and every pair
of them), built once per process and run lazily on the probes. A variant that does not apply
to the answer raises ``VariantDoesNotApply``. A track other than NumPy's (the PyTorch track,
``torch_track``) gives its own answer and mistakes under a key such as ``torch/layernorm``:
the answer ``solutions/torch/layernorm.py``, the variants ``mistake.variants["torch/layernorm"]``.

A variant that changes the forward is also tried with the exact derivative of its own forward as
its backward: its *consistent twin* (``consistent.py``), keyed ``(mistake id, Consistent(k))``,
a variant of the same mistake. A candidate who makes a forward mistake derives the backward
either from the right forward (the variant as catalogued) or from their own (the twin).
"""

import ast
import functools
import re
import types
from dataclasses import dataclass

from . import answers
from .catalog import mistakes_for
from .consistent import consistent_twin
from .constants import variant_at
from .driver import maker
from .probes import is_backward, run_probe


_SHARED = {}  # (exercise, reference answer, catalog entries) -> Mutants, see Mutants.of


# The exercises whose twins are not built: sync_batchnorm's forward runs on a worker thread
# beside the others and meets them in all_reduce, so it cannot be re-run alone; batch_renorm's
# right backward is not the derivative of its forward (r and d are held constant), so the
# derivative of a forward is itself a mistake there (brn-r-d-differentiated).
NO_TWINS = ("sync_batchnorm", "batch_renorm")


@dataclass(frozen=True)
class Consistent:
    """Variant ``k``'s consistent twin, in a mutant's key: ``("eps-outside-sqrt", Consistent(0))``
    is variant 0's forward with the exact derivative of that forward as its backward."""

    k: int

    def __str__(self):
        return f"{self.k}'"


class Mutants:
    """Every catalogued mutant of an exercise (and every combination of them), built once, run
    lazily.

    A mutant is keyed by a tuple of (mistake id, variant number); a combination joins the
    replacements of several mistakes, when they do not touch the same piece of the answer.
    ``singles`` are the catalog's variants, ``twins`` the consistent twins of those that change
    the forward (``Consistent``); a combination of twins is the twin of the combined forward.
    """

    def __init__(self, exercise, key=None, mistakes=None, make=maker, references=None):
        """``key``: the answer and variants to use (default: the exercise's name); ``mistakes``:
        the catalog entries with variants under that key (default: the catalog's); ``make``:
        how to drive a mutant class (default: the NumPy practice contract); ``references``:
        {probe label: make} for the probes whose reference is not normcore's layer (the
        PyTorch track's probes of what only a torch module has: torch's own layer)."""
        self.exercise, self.key, self.make = exercise, key or exercise.name, make
        self.references = references or {}
        self.source = solution_source(self.key)
        self.mistakes = {m.id: m for m in (mistakes_for(self.key) if mistakes is None else mistakes)}
        self.singles = [((m.id, k),) for m in self.mistakes.values()
                        for k in range(len(m.variants[self.key]))]
        self.twins = self._twins()
        self._classes, self._runs, self._reference = {}, {}, {}

    def _twins(self):
        """The consistent twins: one per forward a variant writes (two variants that differ in
        the backward only share it), for an answer with a backward of its own (not a torch
        module, whose backward is autograd's, nor a function) outside ``NO_TWINS``."""
        if self.exercise.name in NO_TWINS or self.key != self.exercise.name:
            return []
        backward = backward_tags(self.source)
        if backward is None:
            return []
        twins, seen = [], set()
        for (mistake_id, k), in self.singles:
            forward = forward_part(self.mistakes[mistake_id].variants[self.key][k], backward)
            if forward and (mistake_id, forward) not in seen:
                seen.add((mistake_id, forward))
                twins.append(((mistake_id, Consistent(k)),))
        return twins

    def plain(self, key):
        """The catalogued mutant whose forward a twin's key has (the twin itself otherwise)."""
        return tuple((i, k.k if isinstance(k, Consistent) else k) for i, k in key)

    @classmethod
    def of(cls, exercise, key=None, mistakes=None, make=maker, references=None):
        """The exercise's mutants, shared by every grade() in this process: their runs (and the
        reference's) depend only on the probe, whose inputs are seeded, so a class of 30 files
        runs each mutant once. A new reference answer or catalog entry starts afresh."""
        name = key or exercise.name
        entries = mistakes_for(name) if mistakes is None else mistakes
        shared = (cls, name, id(exercise), solution_source(name), make,
                  repr([(m.id, m.variants[name]) for m in entries]))
        if shared not in _SHARED:
            _SHARED[shared] = cls(exercise, key, mistakes, make, references)
        return _SHARED[shared]

    def reference(self, probe):
        """The probe's run on normcore's own layer (or on the one ``references`` gives it)."""
        if probe.label not in self._reference:
            make = self.references.get(probe.label) or maker(self.exercise.reference)
            self._reference[probe.label] = run_probe(probe, make)
        return self._reference[probe.label]

    def pairs(self):
        for i, a in enumerate(self.singles):
            for b in self.singles[i + 1:]:
                if a[0][0] != b[0][0]:
                    yield a + b

    def run(self, key, probe):
        """The probe's run on mutant ``key``, or None when a combination's replacements do not
        combine (or it mixes twins and catalogued variants)."""
        if key not in self._classes:
            self._classes[key] = self._class(key)
        if self._classes[key] is None:
            return None
        if (key, probe.label) not in self._runs:
            run = run_probe(probe, self.make(self._classes[key]))
            self._runs[key, probe.label] = _rounded_like_the_input(run) if _is_twin(key) else run
        return self._runs[key, probe.label]


    def _class(self, key):
        """Mutant ``key``'s class, or None when its replacements do not combine."""
        twins = [isinstance(k, Consistent) for _, k in key]
        if any(twins) and not all(twins):
            return None
        backward = backward_tags(self.source) if any(twins) else set()
        variant = tuple(r for mistake_id, k in self.plain(key)
                        for r in variant_at(self.mistakes[mistake_id].variants[self.key], k)
                        if not any(twins) or r[0].tag not in backward)
        tag = "+".join(f"{mistake_id}.{k}" for mistake_id, k in key)
        try:
            cls = mutant_class(self.exercise, self.source, variant, tag)
        except VariantDoesNotApply:
            if len(key) == 1:  # a single mistake always applies (tests/test_practice.py)
                raise
            return None  # two mistakes that rewrite the same piece
        return consistent_twin(cls) if any(twins) else cls


LOW_PRECISION_TOL = 1e-3  # a twin's gradients on a float32 or float16 input: see below


def _is_twin(key):
    return any(isinstance(k, Consistent) for _, k in key)


def _rounded_like_the_input(run):
    """A twin's run with its gradients on a float32 (or float16) input compared at
    ``LOW_PRECISION_TOL``: the twin's derivative is exact, an answer's own float32 backward
    carries its rounding, which an ill-conditioned layer (QK-norm's scores) grows beyond
    float32's tolerance of 1e-5. Such a probe then supports a twin's name without deciding
    it: the float64 probes decide, at 1e-8."""
    low = {label.rpartition("output dtype")[0] for label in run.rows
           if label.endswith("output dtype")}
    for label, row in run.rows.items():
        if is_backward(label) and row.metric == "rel" and any(label.startswith(p) for p in low):
            row.tol = max(row.tol, LOW_PRECISION_TOL)
    return run


@functools.cache
def backward_tags(source):
    """The tags of the answer's lines inside its backward (a function whose name has
    "backward" in it: backward, _ln_backward, rms_norm_backward), or None when the answer
    has no backward."""
    tree = ast.parse(source)
    spans = [(f.lineno - 1, f.end_lineno - 1) for f in ast.walk(tree)
             if isinstance(f, ast.FunctionDef) and "backward" in f.name]
    if not any(f.name == "backward" for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)):
        return None
    return {tag for tag, numbers in tagged_lines(source).items()
            if any(a <= n <= b for n in numbers for a, b in spans)}


def forward_part(variant, backward):
    """The replacements of a variant outside the backward (``backward``: its tags), as a tuple."""
    return tuple((str(anchor), anchor.tag, new) for anchor, new in variant
                 if anchor.tag not in backward)


def solution_source(name):
    """The source of the reference answer ``solutions/<name>.py`` (``torch/layernorm``: the
    PyTorch track's ``solutions/torch/layernorm.py``), in English."""
    return answers.source(name)


class VariantDoesNotApply(Exception):
    """A catalog variant does not fit the reference answer: its tag is on no line or on several,
    or its piece of code is not exactly once on the tagged line (two mistakes that rewrite
    the same piece do not combine)."""


TAG = re.compile(r"#.*\[(?P<tag>[a-z0-9][a-z0-9-]*)\]\s*$")  # a line's name: "...  # (N, C) [rstd]"


def tagged_lines(source):
    """{tag: [line numbers (0-based)]} of the lines of ``source`` that end with a ``[tag]``."""
    lines = {}
    for number, line in enumerate(source.splitlines()):
        match = TAG.search(line)
        if match:
            lines.setdefault(match["tag"], []).append(number)
    return lines


def apply_variant(source, variant):
    """The reference answer's source with each ``(anchor, replacement)`` of a variant applied.

    An anchor (``catalog.Anchor``) is a piece of code and the tag of the line it is on: the
    line of the answer that ends with ``# ... [tag]``. The tag must be on exactly one line and
    the piece exactly once on it, so the rest of the answer can be edited freely; anything
    else raises ``VariantDoesNotApply``.
    """
    for anchor, new in variant:
        tag = getattr(anchor, "tag", None)
        if tag is None:
            raise VariantDoesNotApply(f"the piece {str(anchor)!r} has no anchor (catalog.Anchor)")
        numbers = tagged_lines(source).get(tag, [])
        if len(numbers) != 1:
            raise VariantDoesNotApply(f"the tag [{tag}] ends {len(numbers)} lines of the "
                                      "reference answer instead of one")
        lines = source.splitlines(keepends=True)
        line = lines[numbers[0]]
        if line.count(anchor) != 1:
            raise VariantDoesNotApply(f"the line tagged [{tag}] holds {str(anchor)!r} "
                                      f"{line.count(anchor)} times instead of once: {line.strip()}")
        lines[numbers[0]] = line.replace(anchor, new)
        source = "".join(lines)
    return source


def mutant_class(exercise, source, variant, tag):
    """The exercise's class compiled from ``source`` with ``variant`` applied."""
    module = types.ModuleType(f"normcore.practice._mutant_{exercise.name}_{tag}")
    exec(compile(apply_variant(source, variant), f"<mutant {tag}>", "exec"), module.__dict__)
    return module.__dict__[exercise.class_name]
