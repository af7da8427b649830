"""Loading a candidate's file for the practice grader: import it, find its class and exercise.

A file that cannot be graded (missing, does not compile, raises while it is imported, no
suitable class, no exercise that fits) raises ``CannotGrade`` with a message that says why.
"""

import importlib.machinery
import importlib.util
import sys
import traceback
from collections import namedtuple
from pathlib import Path

from .._install import torch_hint
from ..i18n import N_, translator
from ..i18n.width import WIDTH, wrap
from .driver import ContractError, NotApplicable
from .exercises import EXERCISES
from .probes import error_kind

_ = translator("practice")
# translated where shown: _(NEEDS_TORCH), followed by torch_hint()
NEEDS_TORCH = N_("needs PyTorch, which is not installed here")


class CannotGrade(Exception):
    """The file cannot be graded (missing, does not import, no suitable class); says why."""


def cannot_grade(reason, width=WIDTH):
    """"cannot grade: REASON" in lines of at most ``width`` display columns (a Chinese
    character takes two): the reason wrapped, each line under it (a line of the file's code, a
    command) wrapped at its own indent."""
    first, *rest = _("cannot grade: {reason}").format(reason=reason).split("\n")
    lines = wrap(first, width, subsequent_indent="  ")
    for line in rest:
        indent = line[:len(line) - len(line.lstrip())]
        lines += wrap(line, width, indent, indent + "  ")
    return "\n".join(lines)


def load_module(path):
    """Import a file of Python source as a fresh module, whatever its name ends in (answer.txt
    too: the loader is named, not guessed from the suffix); a syntax or import error becomes
    CannotGrade."""
    path = Path(path)
    if not path.is_file():
        raise CannotGrade(_("{path}: no such file").format(path=path))
    name = f"_normcore_practice_{abs(hash(str(path.resolve())))}"
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # some code (dataclasses, for one) looks its module up while it runs
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        where = (_("line {line}, column {column}").format(line=e.lineno, column=e.offset)
                 if e.offset else _("line {line}").format(line=e.lineno))
        code = (e.text or "").rstrip("\n")
        sys.modules.pop(name, None)
        raise CannotGrade(
            _("{path} does not compile: {error} at {where}: {message}").format(
                path=path, error=type(e).__name__, where=where, message=e.msg)
            + (f"\n    {code}" if code.strip() else "")
        ) from None
    except Exception as e:  # anything raised while the file's top level runs
        sys.modules.pop(name, None)
        if isinstance(e, ModuleNotFoundError) and (e.name or "").partition(".")[0] == "torch":
            raise CannotGrade(f"{path}\n    {_(NEEDS_TORCH)}\n{torch_hint('    ')}") from None  # a PyTorch-track answer
        raise CannotGrade(_("importing {path} raised {error}").format(
            path=path, error=describe_error(e, path))) from None
    return module


def load_answer(path, name=None, layer=None):
    """(module, the class to grade, its exercise) of the file ``path`` (``load_module``,
    ``find_class``, ``exercise_for``); CannotGrade says why a file cannot be graded."""
    module = load_module(path)
    cls = find_class(module, name, layer)
    return module, cls, exercise_for(cls, layer)


def _functions(module):
    """The functions the file defines that an exercise asks for by name (fold_batchnorm)."""
    names = {e.class_name for e in EXERCISES.values() if e.function}
    return [f for f in vars(module).values() if callable(f) and not isinstance(f, type)
            and getattr(f, "__module__", None) == module.__name__ and getattr(f, "__name__", "") in names]


def is_torch_module(cls):
    """Whether ``cls`` subclasses torch.nn.Module (the PyTorch track), found without importing torch."""
    return any(base.__name__ == "Module" and base.__module__.startswith("torch.nn") for base in cls.__mro__)


def find_class(module, name=None, layer=None):
    """The class to grade: ``name``, or the layer class the file defines (a class with forward
    and backward, or a torch.nn.Module with forward; else one with forward alone: a
    forward-only answer); for an exercise that asks for a function (fold_batchnorm), that
    function.

    A file may define helper classes beside its answer (a ``Parameter``, a ``Linear``, the
    ``LayerNorm`` its block uses, a small model that tries the layer out): the answer is the
    class named as an exercise's skeleton names it (``layer``'s, when given), else one whose
    name says its exercise, else the one no other class uses (see ``_answers``). Only a file
    that still leaves several is refused, with their names.
    """
    if name is not None:
        cls = getattr(module, name, None)
        if not isinstance(cls, type) and cls not in _functions(module):
            classes = [c.__name__ for c in vars(module).values()
                       if isinstance(c, type) and c.__module__ == module.__name__]
            raise CannotGrade(_("the file defines no class named {name}; expected one of the "
                                "classes it defines: {classes}").format(
                                    name=name, classes=", ".join(classes) or _("none")))
        return cls
    classes = [c for c in vars(module).values()
               if isinstance(c, type) and c.__module__ == module.__name__
               and callable(getattr(c, "forward", None))]
    found = [c for c in classes
             if callable(getattr(c, "backward", None)) or is_torch_module(c)] or classes
    if not found:
        found = _functions(module)
    if not found:
        raise CannotGrade(_expected(module, layer))
    if len(found) > 1:
        found = _answers(found, layer)
    if len(found) > 1:
        names = ", ".join(c.__name__ for c in found)
        raise CannotGrade(_("the file defines several layer classes ({names}); choose one with "
                            "--name").format(names=names))
    return found[0]


def _expected(module, layer=None):
    """What a file that defines no answer was expected to define: the class (or the function)
    of its exercise, ``layer``'s or the one the file's name says (my_layernorm.py: LayerNorm)."""
    stem = Path(getattr(module, "__file__", None) or "").stem.lower().replace("_", "")
    exercise = EXERCISES.get(layer) or _named(stem)
    if exercise is None:
        return _("the file defines no class with forward and backward methods (or a "
                 "torch.nn.Module subclass with a forward method)")
    if exercise.function:
        return _("expected a function {name} (the {exercise} exercise); the file defines "
                 "none").format(name=exercise.class_name, exercise=exercise.name)
    return _("expected a class {cls} with forward and backward methods, or a torch.nn.Module "
             "subclass {cls} with a forward method (the {exercise} exercise); the file defines "
             "none").format(cls=exercise.class_name, exercise=exercise.name)


def _answers(classes, layer=None):
    """Narrow several layer classes down to the answer, one rule after the other while more
    than one is left (a rule that would leave none is skipped): the class named as the
    skeleton names it (``layer``'s, or any exercise's); without ``layer``, a class whose name
    says its exercise (not a ``Model`` that tries the layer out); a class no other one uses
    (the ``LayerNorm`` a block uses is a helper)."""
    wanted = {EXERCISES[layer].class_name} if layer in EXERCISES else {
        e.class_name for e in EXERCISES.values()}
    used = set().union(*(_names_used(c) for c in classes))
    rules = [lambda c: c.__name__ in wanted, lambda c: c.__name__ not in used]
    if layer is None:
        rules.insert(1, _says_exercise)
    for rule in rules:
        if len(classes) > 1:
            classes = [c for c in classes if rule(c)] or classes
    return classes


def _says_exercise(cls):
    try:
        exercise_for(cls)
    except CannotGrade:
        return False
    return True


def _names_used(cls):
    """The global names the methods of a class refer to (its own name left out)."""
    methods = [getattr(f, "__func__", f) for f in vars(cls).values()]  # static, class methods
    names, codes = set(), [f.__code__ for f in methods if hasattr(f, "__code__")]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if hasattr(c, "co_names")]
    return names - {cls.__name__}


def exercise_for(cls, layer=None):
    """The exercise a class is graded as: ``layer``, or the one its name says."""
    if layer is not None:
        if layer not in EXERCISES:
            raise CannotGrade(_("unknown exercise {layer!r}; choose one of {names}").format(
                layer=layer, names=", ".join(EXERCISES)))
        return EXERCISES[layer]
    functions = [e for e in EXERCISES.values() if e.function and e.class_name == cls.__name__]
    if functions:
        return functions[0]
    exercise = _named(cls.__name__.lower())
    if exercise is not None:
        return exercise
    raise CannotGrade(_("cannot tell which exercise {cls} is; say it with --layer ({names})").format(
        cls=cls.__name__, names=", ".join(EXERCISES)))


def _named(key):
    """The exercise a lower-case name says (None when none does): the longest exercise name
    or class name in it (LogSoftmax is not Softmax); "rms" is RMSNorm, "dynamictanh" DyT."""
    named = [(len(word), exercise) for exercise in EXERCISES.values()
             for word in (exercise.name.replace("_", ""), exercise.class_name.lower())
             if word in key]
    if named:
        return max(named, key=lambda n: n[0])[1]
    if "rms" in key:
        return EXERCISES["rmsnorm"]
    if "dynamictanh" in key:
        return EXERCISES["dyt"]
    return None


Frame = namedtuple("Frame", "filename lineno name")  # where in the answer's file an error was raised


class RaisedError(Exception):
    """An exception the answer raised in the process that ran it, as the grader receives it
    (``sandbox``): a record that crosses a process boundary where the exception, its class
    (perhaps the answer's own) and its traceback cannot. It keeps the class's name and kind
    (``probes.error_kind``), the message, and the innermost frame in the answer's file; it is
    a NotImplementedError, a NotApplicable or a ContractError when the original was
    (``record``), so the grader and the diagnosis read it as they read the original."""

    def __init__(self, type_name, kind, message, frame=None):
        super().__init__(message)
        self.type_name, self.original_kind, self.frame = type_name, kind, frame

    def __reduce__(self):
        return type(self), (self.type_name, self.original_kind, str(self), self.frame)

    @staticmethod
    def record(exc, path=None):
        """The record of exception ``exc`` raised by the answer in file ``path``."""
        cls = next((record for base, record in RECORDS if isinstance(exc, base)), RaisedError)
        frame = user_frame(exc, path)
        return cls(type(exc).__name__, error_kind(exc), str(exc),
                   Frame(frame.filename, frame.lineno, frame.name) if frame else None)


class _NotImplementedRecord(RaisedError, NotImplementedError):
    pass


class _NotApplicableRecord(RaisedError, NotApplicable):
    pass


class _ContractRecord(RaisedError, ContractError):
    pass


RECORDS = ((NotImplementedError, _NotImplementedRecord), (NotApplicable, _NotApplicableRecord),
           (ContractError, _ContractRecord))


def describe_error(exc, path=None):
    """'ValueError: message (file.py line 12, in forward)': the innermost frame in ``path``."""
    text = f"{getattr(exc, 'type_name', type(exc).__name__)}: {exc}"
    where = user_frame(exc, path)
    if where is not None:
        text += _(" ({file} line {line}, in {function})").format(
            file=Path(where.filename).name, line=where.lineno, function=where.name)
    return text


def user_frame(exc, path):
    """The innermost frame of ``exc``'s traceback in file ``path`` (None when none is): its
    filename, lineno and name. A RaisedError carries the one found where it was raised."""
    if path is None:
        return None
    if isinstance(exc, RaisedError):
        return exc.frame
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).resolve() == Path(path).resolve()]
    return frames[-1] if frames else None
