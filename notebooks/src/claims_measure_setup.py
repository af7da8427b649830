"""The claims notebook's setup cell: the imports and the helpers that the cells measuring its rows
share (claims_measure_*.py). It runs once, before any row's cell, in the notebook and in
tests/test_claims.py."""

SETUP = r'''
import numpy as np
import normcore as nc
from normcore.i18n import N_, translator
from normcore.i18n.width import pad

np.set_printoptions(precision=4, suppress=True, linewidth=78)
tr = translator("notebooks")   # what the cells print, in the notebook's language


def reproduce_printed(norm, x, printed, k=20000, seed=0):
    """An input that prints as x and whose output prints as ``printed``, or None.

    A printed input is rounded to 4 decimals: the author's input may sit anywhere within
    5e-5 of each printed entry, and that moves the output's 4th decimal. So search that box:
    for each normalised slice (a row of ``x``) try k random inputs within 5e-5 of it and keep
    the first whose output, rounded to 4 decimals, is the printed row. ``norm(a)``
    normalises each row of a (k, n) array on its own.
    """
    rng = np.random.default_rng(seed)
    found = x.reshape(-1, x.shape[-1]).copy()
    for i, target in enumerate(printed.reshape(found.shape)):
        candidates = found[i] + rng.uniform(-5e-5, 5e-5, (k, found.shape[1]))
        ok = np.all(np.abs(np.round(norm(candidates), 4) - target) < 1e-9, axis=1)
        if not ok.any():
            return None
        found[i] = candidates[ok.argmax()]
    return found.reshape(x.shape)


def digits_equal(y, printed):
    """How many entries of y equal the printed ones to 4 decimals."""
    return int((np.abs(np.round(y, 4) - printed) < 1e-9).sum())


# the residual stacks of the Pre/Post-Norm claims, shared with the question bank
from normcore.experiments._stacks import (input_gradient, output_change, residual_stack,
                                          transformer_stack, x0_weight)


_profiles = {}


def gradient_profile(position, n_blocks=8, n_seeds=4):
    """The gradient norm of every block (1 = next to the input) of freshly initialised
    TinyTransformers with the norm at ``position``, one row per initialisation: the measure of
    normcore's pre_post_gradients experiment, on fewer blocks and initialisations. Computed
    once and kept, since two claims read it."""
    from normcore.experiments.pre_post_gradients import gradients_at_init
    key = (position, n_blocks, n_seeds)
    if key not in _profiles:
        _profiles[key] = np.array([gradients_at_init(position, n_blocks, seed)
                                   for seed in range(n_seeds)])
    return _profiles[key]
'''
