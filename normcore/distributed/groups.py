"""Process groups: who the workers are and how they exchange vectors, behind one small interface.

A process group is any object with ``rank`` (this worker's number, 0 .. world_size - 1),
``world_size`` (how many workers) and two collectives::

    total = group.all_reduce(vector)     # vector: this worker's float64 1-D array
                                         # total: the SUM over every worker's vector, the same
                                         # array on every worker
    every = group.all_gather(vector)     # every: (world_size, len(vector)), row k worker k's
                                         # vector, the same array on every worker

Each call is one collective (one message round). Every worker must make the same calls, in the
same order, with vectors of the same length: a collective returns only once every worker has
sent its vector. An all_reduce leaves each worker with as many values as it sent; an all_gather
with world_size times as many. Two implementations:

- ``InProcessGroup(K)``: K workers as K threads of this process, for the classroom. Its
  ``run(fn, shards)`` runs ``fn(worker, shard)`` for every worker together; each worker's
  collective waits at a barrier for the K vectors, and all_reduce sums them in rank order, so
  every worker gets the same bits. ``verbose=True`` prints every message (who sends what, its
  size in bytes, and what every worker receives); ``log=[]`` collects them as ``Message`` records.
- ``TorchGroup()``: ``torch.distributed.all_reduce`` and ``all_gather`` on CPU float64 tensors,
  for real processes (the gloo backend on one machine or several), the engine a user would scale
  to. torch is imported only when a TorchGroup is made. Neither collective changes the caller's
  vector.

``gather_by_all_reduce(group, row)`` gives every worker's row from one all_reduce (each worker
writes its row into its own slot of a table of zeros): what SyncBatchNorm's workers compare
before any data moves, and what recalibration merges.
"""

import threading
from dataclasses import dataclass
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from .._array import flag, positive_int, real_number
from ..i18n import translator

_ = translator("cli")

COLLECTIVES = ("all_reduce", "all_gather")


class ProcessGroup(Protocol):
    """What SyncBatchNorm needs from the workers' communication."""

    rank: int
    world_size: int

    def all_reduce(self, vector: np.ndarray, name: str | None = None) -> np.ndarray:
        """The sum over every worker of its float64 1-D ``vector``; ``name`` labels the message."""
        ...

    def all_gather(self, vector: np.ndarray, name: str | None = None) -> np.ndarray:
        """Every worker's float64 1-D ``vector`` stacked in rank order, (world_size, len(vector))."""
        ...


def check_vector(vector: Any, who: str, op: str = "all_reduce") -> np.ndarray:
    """``vector`` as a float64 1-D ndarray for collective ``op``, or a clear TypeError / ValueError."""
    if not isinstance(vector, np.ndarray) or vector.dtype != np.float64:
        raise TypeError(_("{who}.{op} expects a float64 NumPy array, got {got}").format(
            who=who, op=op, got=getattr(vector, "dtype", type(vector).__name__)))
    if vector.ndim != 1:
        raise ValueError(_("{who}.{op} expects a 1-D vector, got shape {shape}").format(
            who=who, op=op, shape=vector.shape))
    return vector


def gather_by_all_reduce(group: Any, row: np.ndarray, name: str | None = None) -> np.ndarray:
    """Every worker's float64 ``row`` stacked in rank order, (world_size, len(row)), the same
    array on every worker, from one all_reduce (so any group with all_reduce gives it).

    Worker k writes its row into row k of a table of zeros and the workers sum their tables:
    each entry of the sum is one worker's value plus zeros, so every row arrives bit for bit.
    The message is world_size * len(row) values: meant for a few numbers per worker, such as
    what the workers compare before data moves, not for the data itself.
    """
    row = check_vector(row, "gather_by_all_reduce")
    table = np.zeros((group.world_size, row.size))         # (K, n)
    table[group.rank] = row
    return group.all_reduce(table.ravel(), name=name).reshape(table.shape)    # (K, n)


@dataclass
class Message:
    """One collective of an InProcessGroup: what each worker sent, and what every worker received
    (the sum for an all_reduce; every vector, stacked in rank order, for an all_gather)."""

    index: int                    # 1 for the group's first collective, 2 for the next, ...
    name: str | None              # the label the workers gave it
    sent: list[np.ndarray]        # sent[k]: worker k's vector
    received: np.ndarray          # what every worker receives
    op: str = "all_reduce"        # or "all_gather"

    @property
    def nbytes(self) -> int:
        """The size of each worker's message in bytes (8 per float64)."""
        return self.sent[0].nbytes

    @property
    def received_nbytes(self) -> int:
        """What each worker receives, in bytes: its message's size for an all_reduce, K times
        that for an all_gather of K workers."""
        return self.received.nbytes

    def __str__(self) -> str:
        label = f" {self.name}" if self.name else ""
        lines = [_("{op} #{index}{label}: each of {k} workers sends {n} float64 = {b} bytes").format(
            op=self.op, index=self.index, label=label, k=len(self.sent), n=self.sent[0].size, b=self.nbytes)]
        with np.printoptions(precision=6, suppress=True, linewidth=200):
            lines += [_("  worker {k} sends     {v}").format(k=k, v=v) for k, v in enumerate(self.sent)]
            if self.op == "all_gather":
                lines.append(_("  every worker gets all {k} vectors, in rank order ({b} bytes)").format(
                    k=len(self.sent), b=self.received_nbytes))
            else:
                lines.append(_("  every worker gets {v}").format(v=self.received))
        return "\n".join(lines)


_FINISHED = object()  # what a worker "sends" when its function has returned


class Abandoned(RuntimeError):
    """The error a worker gets at a collective when another worker failed first."""


class Worker:
    """One worker of an InProcessGroup: its ``rank``, ``world_size``, ``all_reduce`` and ``all_gather``."""

    def __init__(self, group: "InProcessGroup", rank: int) -> None:
        self.group, self.rank, self.world_size = group, rank, group.world_size

    def all_reduce(self, vector: np.ndarray, name: str | None = None) -> np.ndarray:
        vector = check_vector(vector, f"InProcessGroup worker {self.rank}", "all_reduce")
        return self.group.exchange(self.rank, vector.copy(), name, "all_reduce")

    def all_gather(self, vector: np.ndarray, name: str | None = None) -> np.ndarray:
        vector = check_vector(vector, f"InProcessGroup worker {self.rank}", "all_gather")
        return self.group.exchange(self.rank, vector.copy(), name, "all_gather")

    def __repr__(self) -> str:
        return f"Worker(rank={self.rank}, world_size={self.world_size})"

    def __deepcopy__(self, memo: dict) -> "Worker":
        """The same worker: a copied layer (copy.deepcopy, gradcheck) talks to the same workers."""
        return self


class InProcessGroup:
    """K workers in one process, each a thread, that sum or gather vectors at a barrier.

        group = InProcessGroup(2, verbose=True)
        bns = [SyncBatchNorm(C, process_group=w) for w in group.workers]
        ys = group.run(lambda w, x: bns[w.rank](x), [x0, x1])    # the two shards, together

    ``run`` re-raises the first worker's error (by rank) after every thread has stopped; the
    other workers' pending collectives are abandoned. ``timeout`` (seconds) bounds how long
    a worker waits for the others at one collective. ``calls`` counts the collectives so far,
    and ``log`` (a list) receives one ``Message`` per collective, its ``op`` "all_reduce" or
    "all_gather".
    """

    def __init__(self, world_size: int, verbose: bool = False, log: list | None = None,
                 timeout: float = 60.0) -> None:
        self.world_size = positive_int(world_size, "world_size", "InProcessGroup")
        self.verbose = flag(verbose, "verbose", "InProcessGroup")
        if log is not None and not isinstance(log, list):
            raise TypeError(f"InProcessGroup: log must be None or a list, got {type(log).__name__}")
        self.log = log
        self.timeout = real_number(timeout, "timeout", "InProcessGroup", low=1e-3)
        self.workers = [Worker(self, k) for k in range(self.world_size)]
        self.calls = 0                                        # collectives so far
        self._sent: list[Any] = [None] * self.world_size
        self._names: list[str | None] = [None] * self.world_size
        self._ops: list[str] = ["all_reduce"] * self.world_size   # each worker's last collective
        self._outcome: tuple[np.ndarray | None, Exception | None] = (None, None)
        self._barrier = threading.Barrier(self.world_size, action=self._collect, timeout=self.timeout)

    def exchange(self, rank: int, sent: Any, name: str | None, op: str = "all_reduce") -> np.ndarray:
        """Worker ``rank`` sends ``sent`` for collective ``op`` and waits for every other
        worker's; returns the sum (all_reduce) or the vectors stacked in rank order (all_gather)."""
        self._sent[rank], self._names[rank], self._ops[rank] = sent, name, op
        try:
            self._barrier.wait()                               # the last to arrive runs _collect
        except threading.BrokenBarrierError:
            raise Abandoned(_("InProcessGroup: worker {rank}'s {op} was abandoned (another worker "
                                 "failed, or did not call {op} within {t} s)").format(
                                     rank=rank, op=op, t=self.timeout)) from None
        total, error = self._outcome
        if error is not None:
            raise error
        return total.copy() if total is not None else np.empty(0)

    def _collect(self) -> None:
        """Run once per round by the last worker to arrive: check the K vectors, then sum them in
        rank order (all_reduce) or stack them in rank order (all_gather)."""
        sent = list(self._sent)
        finished = [k for k, v in enumerate(sent) if v is _FINISHED]
        if len(finished) == self.world_size:                  # everyone is done: no message
            self._outcome = (None, None)
            return
        self.calls += 1
        ops = {k: op for k, op in enumerate(self._ops) if sent[k] is not _FINISHED}
        if finished or len(set(ops.values())) > 1:
            self._outcome = (None, RuntimeError(_(
                "InProcessGroup collective #{n}: the workers called {ops} (worker: collective; "
                "finished: returned from its function); every worker must make the same "
                "all_reduce and all_gather calls, in the same order").format(
                    n=self.calls, ops={**ops, **{k: "finished" for k in finished}})))
            return
        sizes = {k: v.size for k, v in enumerate(sent)}
        if len(set(sizes.values())) > 1:
            self._outcome = (None, ValueError(_(
                "InProcessGroup {op} #{n}: the workers sent vectors of different lengths {sizes} "
                "(worker: length); every worker must send as many values (the same number of "
                "channels, the same layer)").format(op=self._ops[0], n=self.calls, sizes=sizes)))
            return
        op = self._ops[0]
        if op == "all_gather":
            received = np.stack(sent)                         # (K, n): row k is worker k's vector
        else:
            received = np.zeros_like(sent[0])
            for v in sent:                                    # rank order: the same bits on every worker
                received += v
        message = Message(self.calls, self._names[0], sent, received, op)
        if self.log is not None:
            self.log.append(message)
        if self.verbose:
            print(message)
        self._outcome = (received, None)

    def run(self, fn: Callable[..., Any], *per_worker: Sequence[Any]) -> list[Any]:
        """[fn(worker_k, a_k, b_k, ...) for k in range(K)], the K calls running together in K
        threads; each argument after ``fn`` is a sequence of K values, one per worker."""
        for args in per_worker:
            if len(args) != self.world_size:
                raise ValueError(f"InProcessGroup.run: expected one value per worker ({self.world_size}), "
                                 f"got {len(args)}")
        self._barrier.reset()
        results: list[Any] = [None] * self.world_size
        errors: list[BaseException | None] = [None] * self.world_size

        def work(k: int) -> None:
            try:
                results[k] = fn(self.workers[k], *(args[k] for args in per_worker))
                self.exchange(k, _FINISHED, None)             # tell the others this worker is done
            except BaseException as exc:                      # noqa: BLE001  re-raised by run
                errors[k] = exc
                self._barrier.abort()                         # release the workers waiting for this one

        threads = [threading.Thread(target=work, args=(k,), name=f"worker {k}") for k in range(self.world_size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        first = next((e for e in errors if e is not None and not _abandoned(e)), None)
        first = first or next((e for e in errors if e is not None), None)
        if first is not None:
            raise first
        return results

    def __repr__(self) -> str:
        return f"InProcessGroup(world_size={self.world_size})"

    def __deepcopy__(self, memo: dict) -> "InProcessGroup":
        """The same group: a copied layer (copy.deepcopy, gradcheck) talks to the same workers."""
        return self


def _abandoned(exc: BaseException) -> bool:
    """True for the error a worker gets when another worker failed first."""
    return isinstance(exc, Abandoned)


class TorchGroup:
    """``torch.distributed`` as a process group: all_reduce is ``torch.distributed.all_reduce``
    (SUM) of a CPU float64 tensor, all_gather is ``torch.distributed.all_gather`` of one. Start
    the processes first, e.g. with ``torch.multiprocessing.spawn`` or ``torchrun``, and in each
    one::

        torch.distributed.init_process_group("gloo", rank=rank, world_size=world_size)
        bn = SyncBatchNorm(C, process_group=TorchGroup())

    ``group`` is a torch process group (None: the default one, every process).
    """

    def __init__(self, group: Any = None) -> None:
        import torch.distributed as dist   # only here: normcore does not need torch

        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("TorchGroup needs torch.distributed initialised in this process: call "
                               "torch.distributed.init_process_group('gloo', rank=..., world_size=...) first")
        self._dist, self.group = dist, group
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)

    def all_reduce(self, vector: np.ndarray, name: str | None = None) -> np.ndarray:
        import torch

        vector = check_vector(vector, "TorchGroup")
        tensor = torch.from_numpy(vector.copy())               # CPU float64, not the caller's memory
        self._dist.all_reduce(tensor, op=self._dist.ReduceOp.SUM, group=self.group)
        return tensor.numpy()

    def all_gather(self, vector: np.ndarray, name: str | None = None) -> np.ndarray:
        import torch

        vector = check_vector(vector, "TorchGroup", "all_gather")
        tensor = torch.from_numpy(vector.copy())               # CPU float64, not the caller's memory
        rows = [torch.empty_like(tensor) for rank in range(self.world_size)]
        self._dist.all_gather(rows, tensor, group=self.group)
        return torch.stack(rows).numpy()                       # (world_size, n), rank order

    def __repr__(self) -> str:
        return f"TorchGroup(rank={self.rank}, world_size={self.world_size})"

    def __deepcopy__(self, memo: dict) -> "TorchGroup":
        """The same group: a copied layer (copy.deepcopy, gradcheck) talks to the same workers."""
        return self
