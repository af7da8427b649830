"""The registry of step-through kinds: each family module (``normalization.py``,
``losses.py``, ``layers.py``, ``blocks.py``, ``attention.py``, ``modern.py``, ``weights.py``)
registers the kinds it builds, and ``step_through``, ``normcore explain`` and the docs read them from here.

How to add a kind (a SoftCap, a z-loss term, Batch Renorm's stop-gradient...):

1. In the family module it belongs to (or a new one), write its tape from ``tape.Tape``'s
   nodes and the shared fragments of ``core`` (``standardize``, ``affine``...), and a builder
   ``build(kind, title, x, rng, *, dy, h, gamma, beta, **options)`` that returns a
   ``core.StepThrough`` checked with ``core.check`` against the normcore layer's own forward
   and backward. ``x`` is the input (given, or drawn from the seed), ``rng`` the generator to
   draw the rest from; ``options`` are the options the kind accepts (None when not given).
2. Register it there, at the module's top level::

       register("softcap", "SoftCap", (1, 2, 3, 4), build_softcap, options=("cap",),
                description=N_("y = c * tanh(x / c), element by element"))

   ``step_through("softcap", cap=2.0)`` then takes it (any registered option is a keyword of
   ``step_through``; the kinds that do not take it refuse it, naming those that do). From
   the command line a new option needs an argument of ``normcore explain`` as well.
3. A new family module is imported once, by ``steps.py``, so that its kinds are registered.

The command line, the docs' derivation pages and the tests that run every kind pick it up
from the registry. Two tables name kinds for what the registry cannot know: the docs' API
entries link the layer class to its kind (``docs/generate.py``, DERIVATION_OF), and
``tests/test_derivations.py`` gives each kind the shapes it is checked on (SHAPES).
"""

from dataclasses import dataclass

from ..i18n import translator

_ = translator("explain")


@dataclass(frozen=True)
class Kind:
    """One computation ``step_through`` can stage."""

    name: str  # "layernorm": what step_through and normcore explain are given
    title: str  # "LayerNorm", or a message marked N_ ("log-softmax"), translated where shown
    ranks: tuple  # the ranks of input it takes
    build: object  # build(kind, title, x, rng, *, dy, h, gamma, beta, **options) -> StepThrough
    options: tuple = ()  # the options it accepts beyond x, shape, seed, dy, h, gamma and beta
    description: str = ""  # one line: what it computes (marked N_)
    spread: float = 2.0  # the default input: standard normal * spread + mean, from the seed
    mean: float = 1.0
    shapes: str = ""  # its input's shapes in words, for the error on a wrong rank ("(T, D) or ...")

    def __getitem__(self, i):
        """``KINDS[kind][0]`` is the title, ``[1]`` the ranks (as when KINDS held pairs)."""
        return (self.title, self.ranks)[i]


KINDS = {}  # name -> Kind, in the order the families register them


def register(name, title, ranks, build, *, options=(), description="", spread=2.0, mean=1.0, shapes=""):
    """Add the kind ``name`` to ``KINDS`` (see the module's docstring); a name is registered once."""
    if name in KINDS:
        raise ValueError(f"the step-through kind {name!r} is registered twice; expected one "
                         f"registration per kind")
    KINDS[name] = Kind(name, title, tuple(ranks), build, tuple(options), description, spread, mean, shapes)
    return KINDS[name]


def squash(name):
    """A kind's name as it is matched: any case, without - and _ ("Log-Softmax" -> "logsoftmax")."""
    return str(name).lower().replace("-", "").replace("_", "")


def find(name):
    """The registered ``Kind`` named ``name`` in any case, with or without - and _ ("LayerNorm",
    "log-softmax" and "logsoftmax" name layernorm and log_softmax)."""
    for kind in KINDS.values():
        if squash(kind.name) == squash(name):
            return kind
    raise ValueError(_("unknown step-through {kind!r}; choose one of {kinds}").format(
        kind=name, kinds=", ".join(KINDS)))


def accepting(option):
    """The kinds that accept ``option``, in the registry's order."""
    return [kind for kind in KINDS.values() if option in kind.options]


def options():
    """Every option some kind accepts, in the order the kinds register them."""
    return list(dict.fromkeys(option for kind in KINDS.values() for option in kind.options))
