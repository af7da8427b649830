"""normcore against PyTorch on PyTorch's own samples: OpInfo's op_db and ModuleInfo's module_db.

For every op and module normcore has (``torch_samples.MAPPERS``), every sample PyTorch tests
itself with, in float64 and float32 (the stacks of layers in float64: ``STACKS``), in training
and in evaluation: normcore's layer gets the
sample's constructor arguments and PyTorch's weights, both run forward and backward with the
same random upstream gradient, and the output, the input gradients, every parameter gradient
and every buffer after the forward (running statistics) must agree: to 1e-10 in float64; in
float32 as in ``test_differential_torch`` (against PyTorch in float64 on the same values).
The norms run on every tier. A sample normcore cannot express is counted by reason, and
``test_unmappable_samples`` reports the counts and bounds them.
"""

import warnings
from collections import Counter

import numpy as np

import pytest

from normcore._install import TORCH_CPU

torch = pytest.importorskip("torch", reason=f"PyTorch is the optional test oracle: {TORCH_CPU}")
pytest.importorskip("expecttest", reason="PyTorch's sample databases need expecttest: pip install expecttest")

import normcore  # noqa: E402
import torch_samples as ts  # noqa: E402
from norm_tiers import TIERS  # noqa: E402
from test_differential_torch import agree, error, one_torch_thread  # noqa: E402, F401  (the fixture: one thread)

pytestmark = pytest.mark.slow  # PyTorch's sample databases (OpInfo, ModuleInfo), every sample

# At most this many samples (of all dtypes and modes, each counted once, not per tier) may be
# unmappable: a change that stops normcore from expressing samples it used to must say so here.
MAX_UNMAPPABLE = 64


# One test per op or module, tier (the norms run on every tier, the rest on normcore's one) and
# dtype, each running all of its samples: a failure lists every sample that differs.
# nn.Transformer and nn.TransformerEncoder are stacks of layers whose own samples run in both
# dtypes (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer, nn.MultiheadAttention, the
# norms); the stacks run in float64, where every sample is held to 1e-10. Their float32 runs
# cost a third of this file's time and compared the same float32 arithmetic once more.
STACKS = ("nn.Transformer", "nn.TransformerEncoder")
PARAMS = [pytest.param(name, tier, dtype, id=f"{name}-{tier.__name__}-{str(dtype)[6:]}")
          for name in ts.MAPPERS for tier in (TIERS if name in ts.NORM_NAMES else TIERS[:1]) for dtype in ts.DTYPES
          if not (name in STACKS and dtype != torch.float64)]

# The reference tier's mapping of each sample as the tests above meet it: (name, dtype, index)
# -> the reason it is unmappable, or None. test_unmappable_samples counts from it, mapping only
# the samples no test mapped (run alone, it maps them all).
MAPPING = {}


def map_sample(sample, tier):
    """``ts.map_sample``, its outcome on the reference tier kept in MAPPING."""
    key = (sample.name, sample.dtype, sample.index)
    try:
        case = ts.map_sample(sample, tier)
    except ts.Unmappable as exc:
        if tier is normcore:
            MAPPING[key] = str(exc)
        raise
    if tier is normcore:
        MAPPING[key] = None
    return case


def compare(case, sample):
    """Run the case on both sides and compare every result (``agree``); a random op runs its
    ``check`` instead."""
    np_dtype = ts.np_dtype_of(sample)
    if case.check is not None:
        case.check(case, np_dtype)
        return
    theirs = ts.run_theirs(case, sample.dtype, np_dtype)
    exact = ts.run_theirs(case, torch.float64, np_dtype) if sample.dtype != torch.float64 else None
    ours = ts.run_ours(case, np_dtype)
    assert sorted(ours) == sorted(theirs), f"compared {sorted(ours)}, PyTorch {sorted(theirs)}"
    if exact is not None:
        theirs = plainest(case, sample, theirs, exact, np_dtype)
    for key, value in ours.items():
        agree(value, theirs[key], None if exact is None else exact[key], np_dtype, key)


def plainest(case, sample, theirs, exact, np_dtype):
    """PyTorch's float32 results to measure its own error by: for each result, the larger error
    of its default attention kernel and of its plain one (the explicit softmax, as normcore
    computes attention). Inside nn.Transformer*Layer PyTorch calls a fused kernel whose float32
    rounding differs from the explicit softmax that nn.MultiheadAttention(need_weights=True) and
    normcore use; PyTorch's own error on the same arithmetic is the fair yardstick."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.MATH):
        plain = ts.run_theirs(case, sample.dtype, np_dtype)
    worse = {}
    for key, value in theirs.items():
        other = plain[key]
        if np.issubdtype(np.asarray(value).dtype, np.floating):
            worse[key] = other if error(other, exact[key]) > error(value, exact[key]) else value
        else:
            worse[key] = value
    return worse


@pytest.mark.parametrize("name, tier, dtype", PARAMS)
def test_sample_matches_pytorch(name, tier, dtype):
    """Every mappable sample of ``name`` in ``dtype`` agrees with PyTorch."""
    failures, mapped = [], 0
    for sample in ts.samples(name, dtype):
        try:
            case = map_sample(sample, tier)
        except ts.Unmappable:
            continue
        mapped += 1
        try:
            compare(case, sample)
        except Exception as exc:  # every failing sample is reported, not only the first
            failures.append(f"{sample.label}: {type(exc).__name__}: {exc}")
    assert not failures, f"{len(failures)} of {mapped} mapped samples differ:\n" + "\n".join(failures)


def coverage():
    """{name: (samples, mapped)} and Counter({(name, reason): count}) over every op and module,
    dtype and mode (the reference tier's mapping; the fast tier has the same classes)."""
    counts, reasons = {}, Counter()
    for name in ts.MAPPERS:
        total = mapped = 0
        for dtype in ts.DTYPES:
            for sample in ts.samples(name, dtype):
                total += 1
                key = (sample.name, sample.dtype, sample.index)
                if key not in MAPPING:
                    try:
                        map_sample(sample, normcore)
                    except ts.Unmappable:
                        pass
                if MAPPING[key] is None:
                    mapped += 1
                else:
                    reasons[name, MAPPING[key]] += 1
        counts[name] = (total, mapped)
    return counts, reasons


def explained(reasons):
    """The report's lines on the unmappable samples, one per (op or module, reason), each with
    why normcore refuses that configuration by design (``ts.BY_DESIGN``), or the option it is
    adding (``ts.NOT_YET``), or "not explained"."""
    lines = []
    for (name, reason), n in sorted(reasons.items()):
        lines.append(f"  {n:>4}  {name}: {reason}")
        if reason in ts.BY_DESIGN:
            lines.append(f"        by design: {ts.BY_DESIGN[reason]}")
        elif reason in ts.NOT_YET:
            lines.append(f"        not yet in normcore: {ts.NOT_YET[reason]}")
        else:
            lines.append("        NOT EXPLAINED: neither refused by design nor an option being added")
    return lines


def test_unmappable_samples():
    """Counts every sample mapped or not; the unmappable ones are only those normcore refuses by
    design (each with the reason in the report) or needs an option it is adding; an option in
    ``ts.NOT_YET`` that no sample lacks any more must leave that list."""
    counts, reasons = coverage()
    total = sum(t for t, _ in counts.values())
    unmappable = sum(reasons.values())
    lines = [f"PyTorch's samples: {total}, mapped {total - unmappable}, unmappable {unmappable}"]
    lines += [f"  {name:<44} {t:>4} samples, {m:>4} mapped" for name, (t, m) in counts.items()]
    lines += ["unmappable, by reason:"] + explained(reasons)
    report = "\n".join(lines)
    print(report)
    # Shown in pytest's warnings summary, with or without -s and xdist. (A plain UserWarning:
    # xdist's controller must import a warning's class, and it cannot import a test module.)
    warnings.warn(report, UserWarning, stacklevel=1)
    assert total > 0
    assert unmappable <= MAX_UNMAPPABLE, report
    seen = {reason for _name, reason in reasons}
    unexplained = sorted(seen - ts.BY_DESIGN.keys() - ts.NOT_YET.keys())
    assert not unexplained, f"unmappable for no reason given by design: {unexplained}\n{report}"
    arrived = sorted(ts.NOT_YET.keys() - seen)
    assert not arrived, f"these options are in normcore now; remove them from torch_samples.NOT_YET: {arrived}"


def test_an_unexplained_reason_is_reported():
    """The check can fail: a reason in neither list is marked in the report."""
    lines = explained(Counter({("nn.LayerNorm", "some option normcore lacks"): 2}))
    assert lines == ["     2  nn.LayerNorm: some option normcore lacks",
                     "        NOT EXPLAINED: neither refused by design nor an option being added"]


def first_mapped(name):
    for sample in ts.samples(name, torch.float64):
        try:
            return sample, ts.map_sample(sample)
        except ts.Unmappable:
            continue
    pytest.skip(f"no sample of {name} is mappable")


@pytest.mark.parametrize("name", ["nn.LayerNorm", "nn.functional.layer_norm", "nn.MultiheadAttention",
                                  "nn.TransformerEncoderLayer", "nn.functional.scaled_dot_product_attention"])
def test_a_wrong_weight_is_caught(name):
    """The comparison can fail: one of normcore's weights moved by 1e-8 is found."""
    sample, case = first_mapped(name)
    _, p = next(iter(case.ours.named_parameters()))
    p.data.flat[0] += 1e-8
    with pytest.raises(AssertionError):
        compare(case, sample)
