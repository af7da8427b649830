"""Running a candidate's answer apart from the grader: one child process per file, with limits.

``normcore practice check`` grades files nobody has read: one may loop forever, call
``sys.exit()`` or ``os._exit()``, crash the interpreter, allocate 20 GB or print megabytes.
So the grader never runs a candidate's file in its own process. ``run_file`` forks it (cheap:
NumPy, torch and the exercises are loaded already), and the child loads the file, finds its
class, exercise and the track's ``Exam`` of it (``tracks.exam``), runs the answer
(``runs.py``: what of it is graded, every probe, the skeleton's TODOs) and sends back each
probe's run: numbers, arrays and strings, an exception as a record (``loading.RaisedError``).
The grader keeps what is trusted: the reference, the mutants and the diagnosis run in its own
process, cached across files as before, and it reads from the child only such plain values
(``_Unpickler``).

The child runs under ``Limits``: a time limit per probe, counted from the child's progress
messages (which probe it starts, which method of the answer it enters: ``__init__``,
``forward``, ``backward``); a memory limit (the data it inherits, plus the limit);
its stdout and stderr go, at the file-descriptor level, to a pipe the grader drains (keeping
the first lines, stopping the child beyond the output limit: a flood neither fills a disk
nor blocks the child, and what a file prints never garbles the report or the JSON on
stdout); stdin is /dev/null; Ctrl-C is the grader's to handle (it kills the child).

When the child stops before it is done (it timed out, exited, crashed, ran out of memory or
printed more than the limit) the file still gets its grade (a crash by a signal is run once
more first: see ``run_file``): the probes before are graded as
usual, the probe where it happened is an ERROR whose note says what happened ("timed out
after 5 s in forward, probe train (4, 6)"), and the probes after it are not run (their checks
say so: a hang costs one time limit, not one per probe). A file that stops while it is
imported cannot be graded (``CannotGrade`` says why).

``grader.grade`` runs the answer (``runs.run_answer``) in the grader's own process for a
class given directly: tests and notebooks pass their own classes, trusted code.
"""

import faulthandler
import io
import os
import pickle
import resource
import selectors
import signal
import sys
import time
from dataclasses import dataclass, replace
from multiprocessing import Pipe

import numpy as np

from ..i18n import translator
from ..progress import Stopwatch
from . import runs, tracks
from .exercises import EXERCISES
from .labels import show_label
from .loading import CannotGrade, RaisedError, describe_error, load_answer
from .probes import ProbeRun
from .runs import Answer, Stopped

_ = translator("practice")
MiB, GiB = 1 << 20, 1 << 30
SHOWN = 64 << 10  # bytes of the answer's output the grader keeps (the first lines)


@dataclass(frozen=True)
class Limits:
    """What the child process of one file may use: ``timeout`` seconds per probe (and to
    import the file, and to look for the skeleton's TODOs), ``memory`` bytes of data beyond
    what it inherits, ``output`` bytes of stdout and stderr together."""

    timeout: float = 5.0
    memory: int = 2 * GiB
    output: int = 4 * MiB


# --- the grader's side ---------------------------------------------------------------------------
def run_file(path, name=None, layer=None, forward_only=False, limits=None):
    """Run the answer in file ``path`` in a child process under ``limits`` (``Limits()`` by
    default); (Answer, exercise). ``name``, ``layer``: the class and the exercise, as
    ``grader.grade_file`` takes them. Raises CannotGrade when the file cannot be graded."""
    limits = limits or Limits()
    tracks.preload(path)
    if not hasattr(os, "fork"):  # no fork (Windows): in this process, without limits
        child = _Child(path, limits)
        _work(path, name, layer, forward_only, lambda *message: child.handle(message))
        return child.answer()
    child = _forked(path, name, layer, forward_only, limits)
    if child.event is not None and child.event[0] == "signal":
        # once more: a child forked from a grader whose thread pools (BLAS, OpenMP) have run
        # can crash inside torch through no fault of the answer; an answer that crashes
        # crashes again, and is reported as it was the first time
        child = _forked(path, name, layer, forward_only, limits)
    return child.answer()


def _forked(path, name, layer, forward_only, limits):
    """Run the answer in a forked child until it is done or stopped; its ``_Child``."""
    child = _Child(path, limits)
    reader, writer = Pipe(duplex=False)
    output, into = os.pipe()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:  # what is buffered is written once, not once more by the child
            stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        reader.close()
        os.close(output)
        _child(path, name, layer, forward_only, limits, writer, into)
    writer.close()
    os.close(into)
    try:
        child.follow(pid, reader, output)
    finally:
        child.end()
        reader.close()
        os.close(output)
    return child


class _Child:
    """The grader's view of the child process: what it said, where it is, what stopped it."""

    def __init__(self, path, limits):
        self.path, self.limits = path, limits
        self.pid = None
        self.stage, self.probe, self.method = "import", None, None  # where the child is
        self.watch = Stopwatch()  # since the child entered its stage (a probe, the TODOs)
        self.loaded = self.cannot = self.event = None
        self.runs, self.todo, self.done = {}, [], False
        self.printed, self.output = 0, bytearray()

    # -- messages ---------------------------------------------------------------------------
    def handle(self, message):
        """One message from the child (see ``_Messenger``, ``_work``)."""
        kind, *args = message
        if kind in ("probe", "todo-stage"):  # a new stage, with a time limit of its own
            self.stage, self.probe = ("probe", args[0]) if kind == "probe" else ("todo", None)
            self.method, self.watch = None, Stopwatch()
        elif kind == "method":
            self.method = args[0]
        elif kind == "loaded":
            self.loaded = args
        elif kind == "ran":
            self.runs[args[0]] = args[1]
        elif kind == "todo":
            self.todo, self.done = args[0], True
        elif kind == "cannot":
            self.cannot, self.done = args[0], True
        else:  # "exit", "memory", "raised": what stopped it
            self.event = (kind, *args)

    def follow(self, pid, reader, output):
        """Read the child's messages and output until it is done or stopped: a probe over
        the time limit or an output over its limit stops it."""
        self.pid = pid
        with selectors.DefaultSelector() as selector:
            selector.register(reader, selectors.EVENT_READ)
            selector.register(output, selectors.EVENT_READ)
            while not self.done and self.event is None:
                left = self.limits.timeout - self.watch.elapsed()
                if left <= 0:
                    self.event = ("timeout",)
                    break
                for key, _mask in selector.select(left):
                    if key.fileobj is reader:
                        self._receive(reader)
                    elif not self._read(output):
                        selector.unregister(output)
                    if self.done or self.event is not None:
                        break
            self._drain(output)

    def _receive(self, reader):
        try:
            self.handle(_Unpickler.loads(reader.recv_bytes()))
        except EOFError:  # the child ended without a word: its exit status says how
            self.event = self._status()
        except (pickle.UnpicklingError, AttributeError, ImportError, TypeError, ValueError):
            self.event = ("unreadable",)

    def _read(self, output, limited=True):
        """Keep the first SHOWN bytes the child prints (``limited``: past the output limit,
        stop it); False at the end of its output."""
        data = os.read(output, 1 << 16)
        self.printed += len(data)
        self.output += data[:max(0, SHOWN - len(self.output))]
        if limited and self.printed > self.limits.output:
            self.event = ("flood",)
        return bool(data)

    def _drain(self, output):
        """What the child printed last, without waiting for more."""
        with selectors.DefaultSelector() as selector:
            selector.register(output, selectors.EVENT_READ)
            while len(self.output) < SHOWN and selector.select(0) and self._read(output, False):
                pass

    def _status(self):
        """What ended the child, from its exit status (waiting up to the time limit)."""
        watch = Stopwatch()
        while watch.elapsed() < self.limits.timeout:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = None
                if os.WIFSIGNALED(status):
                    return ("signal", os.WTERMSIG(status))
                return ("status", os.waitstatus_to_exitcode(status))
            time.sleep(0.005)
        return ("timeout",)

    def end(self):
        """Kill the child if it is still there and reap it: no process is left behind, not
        after a timeout, not after Ctrl-C in the grader."""
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        self.pid = None

    # -- the answer -------------------------------------------------------------------------
    def answer(self):
        """The Answer the child's messages make; CannotGrade when the file cannot be graded."""
        if self.cannot is not None:
            raise CannotGrade(self.cannot)
        what = self._what()
        if self.loaded is None:
            raise CannotGrade(_("{path}: {what} {where}").format(
                path=self.path, what=what or _("stopped"), where=self._where()))
        class_name, exercise_name, track_name, reason, no_running = self.loaded
        answer = Answer(class_name, reason, no_running, dict(self.runs), list(self.todo),
                        output=self.output.decode(errors="replace"), track=track_name)
        if what is not None:  # the probes after the one it stopped in are not run (``Answer.run``)
            answer.stopped = _("{what} {where}").format(what=what, where=self._where())
            if self.stage == "probe":
                answer.stopped_in = self.probe
                answer.runs[self.probe] = ProbeRun({}, Stopped(answer.stopped))
        return answer, EXERCISES[exercise_name]

    def _what(self):
        """What stopped the child ("timed out after 5 s"), None when nothing did."""
        if self.event is None:
            return None
        kind, *args = self.event
        if kind == "timeout":
            return _("timed out after {seconds} s").format(seconds=f"{self.limits.timeout:g}")
        if kind == "flood":
            return _("printed more than {size} of output").format(size=_size(self.limits.output))
        if kind == "memory":
            return _("ran out of memory (limit {size})").format(size=_size(self.limits.memory))
        if kind == "exit":
            return _("the process exited ({call})").format(call=f"sys.exit({args[0]})")
        if kind == "status":
            return _("the process exited with status {status}").format(status=args[0])
        if kind == "signal":
            number = args[0]
            return _("crashed ({signal}: {description})").format(
                signal=signal.Signals(number).name, description=signal.strsignal(number))
        if kind == "raised":
            return _("raised {error}").format(error=args[0])
        return _("sent the grader something it cannot read")

    def _where(self):
        if self.stage == "import":
            return _("while importing the file")
        if self.stage == "todo":
            return _("while looking for the skeleton's TODOs")
        probe = show_label(self.probe)
        if self.method is None:
            return _("in probe {probe}").format(probe=probe)
        return _("in {method}, probe {probe}").format(method=self.method, probe=probe)


def _size(n):
    """'2 GiB', '512 MiB'."""
    return f"{n / GiB:g} GiB" if n >= GiB else f"{n / MiB:g} MiB"


class _Unpickler(pickle.Unpickler):
    """Reads what the child sends, and nothing else: numbers, strings, NumPy arrays and the
    grader's own records. An answer's object with a ``__reduce__`` of its own cannot make the
    grader run code."""

    ALLOWED = {("builtins", n) for n in ("complex", "set", "frozenset", "slice", "range")} | {
        ("numpy", "dtype"), ("numpy", "ndarray"),
        *((f"numpy{core}.multiarray", n) for core in ("._core", ".core") for n in ("_reconstruct", "scalar")),
        *((f"numpy{core}.numeric", "_frombuffer") for core in ("._core", ".core")),
        ("normcore.practice.probes", "ProbeRun"), ("normcore.practice.probes", "Observation"),
        *(("normcore.practice.loading", n) for n in (
            "Frame", "RaisedError", "_NotImplementedRecord", "_NotApplicableRecord", "_ContractRecord")),
    }

    def find_class(self, module, name):
        if (module, name) not in self.ALLOWED and not (module == "numpy.dtypes" and name.endswith("DType")):
            raise pickle.UnpicklingError(f"{module}.{name} is not read from an answer's process")
        return super().find_class(module, name)

    @classmethod
    def loads(cls, data):
        return cls(io.BytesIO(data)).load()


# --- the child's side -----------------------------------------------------------------------------
def _child(path, name, layer, forward_only, limits, writer, into):
    """The child process: apart from the grader's stdio and signals, within its limits, it
    runs the answer and says what happened; it never returns (and never runs the grader's
    exit handlers: os._exit)."""
    def send(*message):
        writer.send_bytes(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
    try:
        _isolate(into, limits)
        _work(path, name, layer, forward_only, send)
    except BaseException as e:  # noqa: BLE001 - the grader's own fault: said, not hidden
        try:
            send("raised", describe_error(e))
        except BaseException:  # noqa: BLE001, S110 - the grader then reads the exit status
            pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001, S110 - a stream the answer broke
                pass
        os._exit(0)


def _isolate(into, limits):
    """The child's stdio, signals and limits (see the module's docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the grader's: it kills the child
    if faulthandler.is_enabled():  # a crash is the grader's to report
        faulthandler.disable()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(into, 1)
    os.dup2(into, 2)
    os.close(null)
    os.close(into)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - the child's for its life
    sys.stdout, sys.stderr = (open(fd, "w", buffering=1, encoding="utf-8", errors="replace",  # noqa: SIM115
                                   closefd=False) for fd in (1, 2))
    _limit_memory(limits.memory)
    torch = sys.modules.get("torch")
    if torch is not None:  # one thread, as PyTorch's DataLoader workers after a fork
        torch.set_num_threads(1)


def _limit_memory(extra):
    """Limit the process's data (its heap and private writable mappings, RLIMIT_DATA) to what it
    has now plus ``extra`` bytes. Not its address space (RLIMIT_AS): the address space also
    counts what threads only reserve (each thread's malloc arena), and torch's threads then
    crash (SIGSEGV) instead of raising, far below the limit."""
    try:
        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:"))
    except (OSError, StopIteration, ValueError):
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def _work(path, name, layer, forward_only, send):
    """Load the file, find its class, run the answer and ``send`` each step to the grader."""
    try:
        module, cls, exercise = load_answer(path, name, layer)
        exam = tracks.exam(cls, exercise)
        answer = runs.run_answer(cls, exercise, path, exam, module, forward_only,
                                 tell=_Messenger(send, path))
        send("todo", answer.todo)
    except CannotGrade as e:
        send("cannot", str(e))
    except (_OutOfMemory, MemoryError):
        send("memory")
    except SystemExit as e:
        send("exit", "" if e.code is None else repr(e.code))
    except BaseException as e:  # noqa: BLE001 - KeyboardInterrupt raised by the answer, ...
        send("raised", describe_error(e, path))


class _OutOfMemory(Exception):
    """A probe ran out of memory: the child stops there."""


class _Messenger:
    """Tells the grader what the child does (``_Child.handle`` reads it): each message
    ``runs.run_answer`` tells, the runs made portable."""

    def __init__(self, send, path):
        self.send, self.path, self.method = send, path, None

    def __call__(self, kind, *args):
        if kind == "probe":
            self.method = None
        elif kind == "method":
            if args[0] == self.method:  # one message per change: the grader needs no more
                return
            self.method = args[0]
        elif kind == "ran":
            if _out_of_memory(args[1].error):
                raise _OutOfMemory
            args = (args[0], _portable(args[1], self.path))
        self.send(kind, *args)


def _out_of_memory(error):
    """Whether a probe's error is the memory limit (NumPy's MemoryError, torch's allocator)."""
    return isinstance(error, MemoryError) or (
        isinstance(error, RuntimeError) and "can't allocate memory" in str(error))


def _portable(run, path):
    """A probe's run as the grader reads it: the exception as a record, every observation a
    plain value (``_plain``)."""
    error = None if run.error is None else RaisedError.record(run.error, path)
    return ProbeRun({label: replace(o, value=_plain(o.value)) for label, o in run.rows.items()},
                    error)


def _plain(value):
    """``value`` as numbers, strings and arrays of numbers (tuples and lists of them kept);
    anything else (an object of the answer's own class, an array of objects) as a string that
    names its type, which compares with nothing."""
    if value is None or isinstance(value, (bool, int, float, complex, str, np.generic)):
        return value if not isinstance(value, np.generic) or value.dtype.kind != "O" else repr(value)
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        return np.asarray(value)
    if isinstance(value, (tuple, list)):
        return (tuple if isinstance(value, tuple) else list)(_plain(v) for v in value)
    return f"<{type(value).__name__}>"
