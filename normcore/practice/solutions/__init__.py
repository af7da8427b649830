"""Reference answers to the practice exercises: standalone NumPy files, one per layer.

Each file is what a good interview answer looks like: numpy only, its own tiny ``Parameter``,
nothing imported from normcore. ``normcore practice solution NAME`` prints one (``text``: in
Chinese with its docstrings and comments translated, its code as it is); the grader builds its
catalogued mistakes by changing one line of these files (``mutants.solution_source``, always
the English file).
"""

import importlib.resources

from .. import prose


def keys():
    """The reference answers' keys: ``layernorm``, and ``torch/layernorm`` for the PyTorch
    track's."""
    folder = importlib.resources.files(__name__)
    return sorted([f"{sub}{path.name[:-3]}" for sub in ("", "torch/")
                   for path in folder.joinpath(sub or ".").iterdir()
                   if path.name.endswith(".py") and path.name != "__init__.py"])


def source(key):
    """The English file of reference answer ``key`` (``torch/layernorm``: the PyTorch track's
    ``solutions/torch/layernorm.py``)."""
    return importlib.resources.files(__name__).joinpath(f"{key}.py").read_text()


def text(key):
    """Reference answer ``key`` as ``normcore practice solution`` prints it: in the language in
    use, docstrings and comments translated, code unchanged."""
    return prose.translate(source(key))


def messages():
    """Every message of every reference answer with its file: what ``python -m normcore.i18n
    update`` extracts for the "practice" catalog."""
    return [(message, f"normcore/practice/solutions/{key}.py")
            for key in keys() for message in prose.messages(source(key))]
