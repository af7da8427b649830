"""What a catalogued mistake is made of: the ``Anchor`` a variant rewrites, the ``Mistake``
itself, and the small helpers the family files write their entries with.

A mistake's title, symptom and hint are English messages marked with ``N_`` where the family
files write them (the "catalog" domain); whatever shows them translates them there with
``translator("catalog")``. Where it is taught (``taught_in``) is put together here, so it comes
out in the language in use.
"""

from dataclasses import dataclass, field

from ...i18n import N_, translator
from ...notebooks import in_language

_ = translator("catalog")


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
    ``(Anchor in the reference answer, what the mistake writes instead)`` replacements; what
    it writes may carry a constant the grader fits to an answer (``constants.WithConstant``: an
    eps, a clip, a momentum), the text being the one at the catalog's value.
    ``taught`` says where normcore teaches the right way (``notebook``, ``solution`` or
    ``explain`` below). ``published`` maps an exercise name to a ``Published`` where the
    "mistake" is a design published code uses on purpose: there it is graded as a published
    variant, not what the exercise asks, and never counted as a mistake.
    """

    id: str
    title: str
    symptom: str
    hint: str
    variants: dict = field(default_factory=dict)
    taught: str = ""
    published: dict = field(default_factory=dict)

    def variant_in(self, exercise):
        """The ``Published`` variant this entry is in ``exercise`` (a name; ``torch/NAME``
        reads NAME's), or None where it is a mistake."""
        return self.published.get(exercise.removeprefix("torch/"))

    @property
    def exercises(self):
        return tuple(self.variants)

    @property
    def taught_in(self):
        """Where normcore teaches the right way: a notebook section, a reference answer's
        derivation or ``normcore explain``, in the language in use."""
        return where_taught(self.taught)


@dataclass(frozen=True)
class Published:
    """A catalogued difference that published code makes on purpose: its ``name`` (a design,
    e.g. "QK-LayerNorm"), its ``source`` (paper or model, codebase, year, file) and what the
    exercise ``asks`` instead; English messages marked with ``N_`` (the "catalog" domain)."""

    name: str
    source: str
    asks: str


def same(exercises, *variants):
    """The same variants for several exercises."""
    return {name: list(variants) for name in exercises}


class Where(str):
    """Where normcore teaches something, in English (the text itself), made of a message with
    ``{name}`` (a notebook, exercise or layer: not translated) and ``{part}`` (a section or a
    step, a message marked with ``N_``), so that ``translated()`` can say it in the language in
    use."""

    def __new__(cls, message, name, part=""):
        where = super().__new__(cls, message.format(name=name, part=part))
        where.message, where.name, where.part = message, name, part
        return where

    def __getnewargs__(self):  # copy and pickle make it again from its parts
        return self.message, self.name, self.part

    def translated(self):
        """In the language in use; a notebook is its edition in that language where it has one."""
        name = in_language(self.name) if self.message == NOTEBOOK_SECTION else self.name
        return _(self.message).format(name=name, part=_(self.part) if self.part else "")


def where_taught(text):
    """A ``Where`` in the language in use; any other text as it is."""
    return text.translated() if isinstance(text, Where) else text


NOTEBOOK_SECTION = N_("notebooks/{name}.ipynb, section {part}")


def notebook(name, section):
    """A numbered section of a notebook: ``notebook("batchnorm", N_("7 (Training vs evaluation)"))``."""
    return Where(NOTEBOOK_SECTION, name, section)


def solution(exercise):
    """The derivation in the docstring of an exercise's reference answer."""
    return Where(N_("normcore practice solution {name} (the derivation in its docstring)"), exercise)


def torch_solution(exercise):
    """The docstring of an exercise's PyTorch reference answer."""
    return Where(N_("normcore practice solution {name} --torch (its docstring)"), exercise)


def explain(kind, step):
    """A step of ``normcore explain <kind>``, which goes through a layer node by node."""
    return Where(N_("normcore explain {name} ({part})"), kind, step)
