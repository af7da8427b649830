"""Consistent twins (normcore/practice/consistent.py): a catalogued forward mistake tried with
the exact derivative of its own forward as its backward.

The twin's backward is numerical, so its accuracy is tested against derivatives written by
hand: normcore's reference answers (the twin of the unchanged answer must give the answer's
own backward on every probe: constant rows, small variances, RMSNorm's default eps on x ~ 1e-7,
q and k near 0, ReLU in the block, Dropout's masks) and the catalog's variants whose backward
was re-derived for their forward (eps outside the square root, the unbiased variance, ...).
"""

import numpy as np
import pytest

from normcore.practice import EXERCISES
from normcore.practice.consistent import NoDerivative, consistent_twin
from normcore.practice.diagnosis import _same
from normcore.practice.mutants import (Consistent, Mutants, _rounded_like_the_input, mutant_class,
                                       solution_source)
from normcore.practice.driver import maker
from normcore.practice.probes import run_probe

# The exercises whose answers get no twins, and why.
EXCLUDED = {
    "fold_batchnorm": "a function with no backward: the whole exercise is its forward",
    "fold_norm_affine": "a function with no backward: the whole exercise is its forward",
    "sync_batchnorm": "its forward runs on a worker thread and meets the other workers in "
                      "all_reduce, so it cannot be re-run alone to differentiate it",
    "batch_renorm": "its backward holds r and d constant, so it is not the derivative of its "
                    "forward: that derivative is the mistake brn-r-d-differentiated (below)",
}
TWINNED = sorted(set(EXERCISES) - set(EXCLUDED))


def test_the_excluded_exercises_have_no_twins_and_the_others_have_some():
    for name in EXERCISES:
        twins = Mutants(EXERCISES[name]).twins
        assert (not twins) == (name in EXCLUDED), name


def test_the_torch_track_has_no_twins():
    """A torch module's backward is autograd's: it is the exact derivative of its forward."""
    from normcore.practice.torch_track import TRACK
    assert all(not TRACK.mutants(EXERCISES[name]).twins for name in ("layernorm", "batchnorm"))


def test_twins_are_keyed_as_variants_of_their_mistake_one_per_forward():
    """eps-outside-sqrt has two LayerNorm variants with one forward: one twin, of variant 0; a
    mistake of the backward alone has none (its twin would be the right answer)."""
    mutants = Mutants(EXERCISES["layernorm"])
    twins = {key[0][0]: key[0][1] for key in mutants.twins}
    assert twins["eps-outside-sqrt"] == Consistent(0)
    assert "backward-no-mean-term" not in twins
    assert mutants.plain((("eps-outside-sqrt", Consistent(0)),)) == (("eps-outside-sqrt", 0),)


@pytest.mark.parametrize("name", TWINNED)
def test_the_twin_of_the_reference_answer_gives_its_backward_on_every_probe(name):
    exercise = EXERCISES[name]
    answer = mutant_class(exercise, solution_source(name), (), "answer")
    twin = consistent_twin(answer)
    for probe in exercise.probes:  # float32 gradients at mutants.LOW_PRECISION_TOL, as diagnosed
        twins = _rounded_like_the_input(run_probe(probe, maker(twin)))
        assert _same(run_probe(probe, maker(answer)), twins), probe.label


# (exercise, mistake, variant re-derived by hand, its twin's variant, probes left out and why)
HAND_DERIVED = [
    ("layernorm", "eps-outside-sqrt", 1, 0, ()),
    ("layernorm", "var-unbiased-in-normalization", 1, 0, ()),
    ("layernorm", "stats-over-too-few-axes", 1, 0, ()),
    ("groupnorm", "var-unbiased-in-normalization", 1, 0, ()),
    ("batchnorm", "var-unbiased-in-normalization", 2, 1, ()),
    ("batchnorm", "bn-stats-per-position", 1, 0, ()),
    ("rmsnorm", "rms-wrong-normaliser", 2, 0, ()),
    ("rmsnorm", "rms-batch-size-normaliser", 1, 0, ()),
    ("rmsnorm", "rms-over-whole-tensor", 1, 0, ()),
    ("cross_entropy", "ce-summed-not-averaged", 0, 0, ()),
    ("cross_entropy", "ce-sign-flipped", 1, 0, ()),
    ("cross_entropy", "ce-mean-over-classes", 0, 0, ()),
    ("mlp_with_batchnorm", "var-unbiased-in-normalization", 1, 0, ()),
    ("dyt", "dyt-gamma-inside-tanh", 0, 0, ()),
    ("transformer_block", "block-norm-on-branch-output", 0, 0, ()),
    ("attention", "attn-no-scale", 0, 0, ()),
    ("qk_norm", "attn-no-scale", 0, 0, ()),
    ("qk_norm", "qk-norm-after-scale", 0, 0, ()),
    ("qk_norm", "qk-norm-shared-gamma", 0, 0, ()),
    # q and k near 0 with one side unnormalised: the twin's derivative does not settle there
    # (see the test below), so that probe cannot be compared
    ("qk_norm", "qk-norm-one-side", 1, 1, ("near 0",)),
]


# Attention's twins differentiate four (C, C) weights numerically: a probe costs seconds. Their
# accuracy on every probe is tested above (the reference answer's twin); against a variant
# derived by hand they are compared on the probes whose regimes differ most: causal, float32,
# a large score or x, q and k near 0.
SAMPLED = {"attention": ("(2, 5, 8), H=2, causal", "float32", "scores ~ 1000"),
           "qk_norm": ("(2, 5, 8), H=2, causal", "float32", "large x", "near 0")}


@pytest.mark.parametrize("name, mistake, k, twin, skip", HAND_DERIVED,
                         ids=[f"{n}-{m}" for n, m, *_ in HAND_DERIVED])
def test_a_twin_gives_the_backward_derived_by_hand_for_its_forward(name, mistake, k, twin, skip):
    mutants = Mutants(EXERCISES[name])
    for probe in EXERCISES[name].probes:
        if any(s in probe.label for s in skip):
            continue
        if name in SAMPLED and not any(s in probe.label for s in SAMPLED[name]):
            continue
        assert _same(mutants.run(((mistake, k),), probe),
                     mutants.run(((mistake, Consistent(twin)),), probe)), probe.label


def test_a_derivative_that_does_not_settle_raises_rather_than_guess():
    """QK-norm on one side only, q and k near 0: the twin's derivative does not settle, and
    the twin raises on that probe instead of giving numbers it is unsure of."""
    mutants = Mutants(EXERCISES["qk_norm"])
    probe = next(p for p in EXERCISES["qk_norm"].probes if "near 0" in p.label)
    run = mutants.run((("qk-norm-one-side", Consistent(0)),), probe)
    assert isinstance(run.error, NoDerivative)


def test_dropouts_twin_redraws_the_same_mask():
    """The saved layer carries its generator: the twin of a Dropout differentiates the forward
    with the mask it drew (its dx is dy * mask / (1 - p), the reference's)."""
    exercise = EXERCISES["dropout"]
    answer = mutant_class(exercise, solution_source("dropout"), (), "answer")
    layer = consistent_twin(answer)(0.3, rng=5)
    x, dy = np.random.default_rng(1).standard_normal((2, 3, 1000))
    y = layer.forward(x)
    assert np.allclose(layer.backward(dy), dy * (y / x), rtol=1e-12, atol=0)


def test_the_derivative_of_batch_renorms_forward_is_the_catalogued_r_and_d_differentiated():
    """Batch Renorm's twins are not built because the exact derivative of its forward is a
    mistake there: the catalog's variant of brn-r-d-differentiated written with clip's masks
    gives what the twin of the reference answer gives, on every probe in training."""
    exercise = EXERCISES["batch_renorm"]
    mutants = Mutants(exercise)
    twin = consistent_twin(mutant_class(exercise, solution_source("batch_renorm"), (), "answer"))
    for probe in exercise.probes:
        if "float32" in probe.label or "eval" in probe.label:
            continue
        assert _same(mutants.run((("brn-r-d-differentiated", 0),), probe),
                     run_probe(probe, maker(twin))), probe.label
