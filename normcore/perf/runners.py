"""Running the benchmark's cases: every norm of both tiers beside its baselines, interleaved
round by round (``timing.time_interleaved``), normcore's Transformer training step beside
PyTorch's, and the learning run. The results keep every round's time, so ratios are paired by round.
"""

import math
import os
from dataclasses import dataclass, field

import numpy as np

from .. import nn, norms, optim
from ..train import loss_and_backward
from .baselines import FloorRunner, TorchRunner, default_threads, make_torch_norm
from .cases import (LAYERS, LEARNING, ONE_TIER, PHASES, TIERS, TRANSFORMER, ReverseRun, forward_cache_ratio, make_norm,
                    transformer_data)
from .threads import blas_threads
from .timing import LayerRunner, median, paired_ratio, time_interleaved
from .torch_model import TorchTransformerStep


@dataclass
class NormResult:
    layer: str
    shape: tuple
    dtype: str
    times: dict  # (implementation, phase) -> seconds of each round; "floor" is the memory floor
    cache: dict  # tier -> bytes of its forward cache / bytes of the input

    def has(self, impl):
        return (impl, PHASES[0]) in self.times

    def median_ms(self, impl, phase):
        return median(self.times[impl, phase]) * 1e3 if self.has(impl) else math.nan

    def ratio(self, impl, other, phase):
        """impl's time / other's, paired by round; NaN when either was not measured."""
        if not (self.has(impl) and self.has(other)):
            return math.nan
        return paired_ratio(self.times[impl, phase], self.times[other, phase])

    def over_floor(self, impl, phase):
        """impl's time as a multiple of the memory floor's, paired by round."""
        return self.ratio(impl, "floor", phase)


def bench_shape(shape, dtype, repeats, torch=None, fast=None, warmup=2, progress=None):
    """A NormResult per layer in LAYERS: every layer, implementation and the floor in each round.
    A layer in ONE_TIER (DyT) is timed once, as "reference": it has no fast tier."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    tiers = {"reference": norms, "fast": fast}
    runners = {("floor", "floor"): FloorRunner(x, dy)}
    for kind in LAYERS:
        for name, tier in tiers.items():
            if tier is not None and not (name == "fast" and kind in ONE_TIER):
                runners[kind, name] = LayerRunner(make_norm(tier, kind, shape, dtype), x, dy)
        if torch is not None:
            module = make_torch_norm(torch, kind, shape, dtype)
            runners[kind, "torch 1t"] = TorchRunner(torch, module, x, dy, 1)
            runners[kind, "torch Nt"] = TorchRunner(torch, module, x, dy, default_threads(torch))
    with blas_threads(1):
        times = time_interleaved(runners, PHASES, repeats, warmup, progress)
    floor = {("floor", phase): times[("floor", "floor"), phase] for phase in PHASES}
    results = []
    for kind in LAYERS:
        mine = {(name[1], phase): ts for (name, phase), ts in times.items() if name[0] == kind}
        cache = {name: forward_cache_ratio(runners[kind, name].layer, x) for name in TIERS
                 if (kind, name) in runners}
        results.append(NormResult(kind, tuple(shape), np.dtype(dtype).name, {**mine, **floor}, cache))
    return results


class NumpyTransformerStep:
    """One training step of normcore's TinyTransformer: forward, loss, backward, AdamW."""

    def __init__(self, cfg, threads):
        self.threads = threads
        self.model = nn.TinyTransformer(cfg["vocab_size"], cfg["d_model"], cfg["n_layers"], cfg["n_heads"],
                                        cfg["length"], rng=0, dtype=np.float32)
        self.loss = nn.CrossEntropyLoss()
        self.opt = optim.AdamW(self.model.parameters(), lr=1e-3)
        self.tokens, self.targets = transformer_data(cfg)

    def context(self):
        return blas_threads(self.threads)

    def step(self):
        self.opt.zero_grad()
        loss_and_backward(self.model, self.loss, self.model(self.tokens), self.targets)
        self.opt.step()


@dataclass
class StepResult:
    times: dict = field(default_factory=dict)  # implementation -> seconds of the step in each round
    error: str = ""  # why the step could not be measured, if it could not

    def median_ms(self, impl):
        return median(self.times[impl]) * 1e3

    def ratio(self, threads):
        """normcore's step time / torch's, both on one thread ("1t") or on all ("Nt"), paired by round."""
        return paired_ratio(self.times["normcore " + threads], self.times["torch " + threads])


def bench_transformer(repeats, torch=None, cfg=None, progress=None, all_threads=True):
    """The training step of normcore and of torch on one thread ("1t") and, with
    ``all_threads``, on all ("Nt"): on a busy machine a step on all threads can take ten
    times longer than on one, so ``normcore bench --quick`` leaves those out."""
    cfg = TRANSFORMER if cfg is None else cfg
    threads = os.cpu_count() or 1
    try:
        steps = {"normcore 1t": NumpyTransformerStep(cfg, 1)}
        if all_threads:
            steps["normcore Nt"] = NumpyTransformerStep(cfg, threads)
    except Exception as exc:  # the model or the optimizer is missing or broken
        return StepResult(error=f"{type(exc).__name__}: {exc}")
    if torch is not None:
        steps["torch 1t"] = TorchTransformerStep(torch, cfg, 1)
        if all_threads:
            steps["torch Nt"] = TorchTransformerStep(torch, cfg, default_threads(torch))
    times = time_interleaved(steps, ("step",), repeats, warmup=1, progress=progress)
    return StepResult({name: ts for (name, _), ts in times.items()})


class LearningRunner:
    """The learning run as a timing runner: every round builds a fresh model, untimed (in
    ``context()``), and ``step()`` is the training loop, on one BLAS thread (for matrices this
    small, OpenBLAS's threads only add synchronisation)."""

    def __init__(self, cfg, progress=False):
        self.cfg, self.run, self.progress = cfg, None, progress

    def context(self):
        self.run = ReverseRun(self.cfg)
        return blas_threads(1)

    def step(self):
        self.run.train(progress=self.progress)


@dataclass
class LearningResult:
    seconds: list = field(default_factory=list)  # seconds of the training loop in each round
    accuracy: float = math.nan  # held-out token accuracy after the last round's training
    error: str = ""  # why the run could not be measured, if it could not

    def median_seconds(self):
        return median(self.seconds) if self.seconds else math.nan


def bench_learning(repeats=1, cfg=None, progress=False):
    """Time the learning run ``repeats`` times (no warm-up: a run is seconds long); with
    ``progress``, ``fit`` draws its progress display on stderr."""
    cfg = LEARNING if cfg is None else cfg
    runner = LearningRunner(cfg, progress)
    try:
        times = time_interleaved({"learning": runner}, ("step",), repeats, warmup=0)
        accuracy = runner.run.held_out_accuracy()
    except Exception as exc:  # the model, the task or the optimizer is missing or broken
        return LearningResult(error=f"{type(exc).__name__}: {exc}")
    return LearningResult(times["learning", "step"], accuracy)
