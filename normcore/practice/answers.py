"""The reference answers (``solutions/``): their English files, and their text in the language
in use.

``source(key)`` is a reference answer's file as it is (the grader's catalogued mistakes change
one line of it); ``text(key)`` is what ``normcore practice solution`` prints: in Chinese its
docstrings and comments translated by ``prose.translate``, as the skeletons' are, and its code
unchanged. ``messages`` lists their prose for ``python -m normcore.i18n update``.
"""

import importlib.resources

from . import prose

PACKAGE = "normcore.practice.solutions"  # the reference answers' files


def keys():
    """The reference answers' keys: ``layernorm``, and ``torch/layernorm`` for the PyTorch
    track's."""
    folder = importlib.resources.files(PACKAGE)
    return sorted([f"{sub}{path.name[:-3]}" for sub in ("", "torch/")
                   for path in folder.joinpath(sub or ".").iterdir()
                   if path.name.endswith(".py") and path.name != "__init__.py"])


def source(key):
    """The English file of reference answer ``key`` (``torch/layernorm``: the PyTorch track's
    ``solutions/torch/layernorm.py``)."""
    return importlib.resources.files(PACKAGE).joinpath(f"{key}.py").read_text()


def text(key):
    """Reference answer ``key`` as ``normcore practice solution`` prints it: in the language in
    use, docstrings and comments translated, code unchanged."""
    return prose.translate(source(key))


def messages():
    """Every message of every reference answer with its file: what ``python -m normcore.i18n
    update`` extracts for the "practice" catalog."""
    return [(message, f"normcore/practice/solutions/{key}.py")
            for key in keys() for message in prose.messages(source(key))]
