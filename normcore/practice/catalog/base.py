"""What a catalogued mistake is made of: the ``Anchor`` a variant rewrites, the ``Mistake``
itself, and the small helpers the family files write their entries with."""

from dataclasses import dataclass, field


class Anchor(str):
    """A piece of a reference answer's code, found on the line of the answer tagged ``[tag]``.

    The lines a mutant rewrites end with a name in brackets (``rstd = ...  # (N, 1) [rstd]``),
    so an anchor survives any edit of the answer that keeps its tagged line: lines added,
    removed, moved or reworded elsewhere. ``mutants.apply_variant`` requires the tag on exactly
    one line and the piece exactly once on it, and tests/test_practice.py checks every anchor
    of the catalog against every answer it applies to.
    """

    def __new__(cls, tag, text):
        anchor = super().__new__(cls, text)
        anchor.tag = tag
        return anchor

    def __repr__(self):
        return f"Anchor({self.tag!r}, {str(self)!r})"


@dataclass(frozen=True)
class Mistake:
    """A catalogued mistake: what it is, what it does to the numbers, and where to look.

    ``variants`` maps an exercise name to a list of variants; a variant is a tuple of
    ``(Anchor in the reference answer, what the mistake writes instead)`` replacements.
    ``taught`` says where normcore teaches the right way (``notebook``, ``solution`` or
    ``explain`` below).
    """

    id: str
    title: str
    symptom: str
    hint: str
    variants: dict = field(default_factory=dict)
    taught: str = ""

    @property
    def exercises(self):
        return tuple(self.variants)

    @property
    def taught_in(self):
        """Where normcore teaches the right way: a notebook section, a reference answer's
        derivation or ``normcore explain``."""
        return self.taught


def same(exercises, *variants):
    """The same variants for several exercises."""
    return {name: list(variants) for name in exercises}


def notebook(name, section):
    """A numbered section of a notebook: ``notebook("batchnorm", "7 (Training vs evaluation)")``."""
    return f"notebooks/{name}.ipynb, section {section}"


def solution(exercise):
    """The derivation in the docstring of an exercise's reference answer."""
    return f"normcore practice solution {exercise} (the derivation in its docstring)"


def explain(kind, step):
    """A step of ``normcore explain <kind>``, which goes through a layer node by node."""
    return f"normcore explain {kind} ({step})"
