"""The catalogued mistakes as runnable layers: each variant applied to the reference answer.

``apply_variant`` rewrites the reference answer's source as a variant of the ``catalog`` says;
``mutant_class`` compiles the result; ``Mutants`` holds an exercise's mutants (and every pair
of them), built once per process and run lazily on the probes. A variant that does not apply
to the answer raises ``VariantDoesNotApply``. A track other than NumPy's (the PyTorch track,
``torch_track``) gives its own answer and mistakes under a key such as ``torch/layernorm``:
the answer ``solutions/torch/layernorm.py``, the variants ``mistake.variants["torch/layernorm"]``.
"""

import importlib.resources
import re
import types

from .catalog import mistakes_for
from .constants import variant_at
from .probes import maker, run_probe


_SHARED = {}  # (exercise, reference answer, catalog entries) -> Mutants, see Mutants.of


class Mutants:
    """Every catalogued mutant of an exercise (and every pair of them), built once, run lazily.

    A mutant is keyed by a tuple of (mistake id, variant number); a pair combines the
    replacements of two mistakes, when they do not touch the same piece of the answer.
    """

    def __init__(self, exercise, key=None, mistakes=None, make=maker):
        """``key``: the answer and variants to use (default: the exercise's name); ``mistakes``:
        the catalog entries with variants under that key (default: the catalog's); ``make``:
        how to drive a mutant class (default: the NumPy practice contract)."""
        self.exercise, self.key, self.make = exercise, key or exercise.name, make
        self.source = solution_source(self.key)
        self.mistakes = {m.id: m for m in (mistakes_for(self.key) if mistakes is None else mistakes)}
        self.singles = [((m.id, k),) for m in self.mistakes.values()
                        for k in range(len(m.variants[self.key]))]
        self._classes, self._runs, self._reference = {}, {}, {}

    @classmethod
    def of(cls, exercise, key=None, mistakes=None, make=maker):
        """The exercise's mutants, shared by every grade() in this process: their runs (and the
        reference's) depend only on the probe, whose inputs are seeded, so a class of 30 files
        runs each mutant once. A new reference answer or catalog entry starts afresh."""
        name = key or exercise.name
        entries = mistakes_for(name) if mistakes is None else mistakes
        shared = (cls, name, id(exercise), solution_source(name), make,
                  repr([(m.id, m.variants[name]) for m in entries]))
        if shared not in _SHARED:
            _SHARED[shared] = cls(exercise, key, mistakes, make)
        return _SHARED[shared]

    def reference(self, probe):
        """The probe's run on normcore's own layer."""
        if probe.label not in self._reference:
            self._reference[probe.label] = run_probe(probe, maker(self.exercise.reference))
        return self._reference[probe.label]

    def pairs(self):
        for i, a in enumerate(self.singles):
            for b in self.singles[i + 1:]:
                if a[0][0] != b[0][0]:
                    yield a + b

    def run(self, key, probe):
        """The probe's run on mutant ``key``, or None when a pair's replacements do not combine."""
        if key not in self._classes:
            variant = tuple(r for mistake_id, k in key  # k: a number, or a constant's At
                            for r in variant_at(self.mistakes[mistake_id].variants[self.key], k))
            tag = "+".join(f"{mistake_id}.{k}" for mistake_id, k in key)
            try:
                self._classes[key] = mutant_class(self.exercise, self.source, variant, tag)
            except VariantDoesNotApply:
                if len(key) == 1:  # a single mistake always applies (tests/test_practice.py)
                    raise
                self._classes[key] = None  # two mistakes that rewrite the same piece
        if self._classes[key] is None:
            return None
        if (key, probe.label) not in self._runs:
            self._runs[key, probe.label] = run_probe(probe, self.make(self._classes[key]))
        return self._runs[key, probe.label]


def solution_source(name):
    """The source of the reference answer ``solutions/<name>.py`` (``torch/layernorm``: the
    PyTorch track's ``solutions/torch/layernorm.py``)."""
    return importlib.resources.files("normcore.practice.solutions").joinpath(f"{name}.py").read_text()


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
