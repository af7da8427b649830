"""The numbers bank_norms.toml quotes, each computed with normcore (fixed seeds, small sizes)."""

import numpy as np

import normcore as nc


def _bn_trained(momentum=0.1, seed=0, steps=200, batch=32, std=2.0):
    """A BatchNorm1d(1) trained on batches from N(1, std^2) (running statistics gathered)."""
    rng = np.random.default_rng(seed)
    bn = nc.BatchNorm1d(1, momentum=momentum)
    for _ in range(steps):
        bn(rng.normal(1.0, std, size=(batch, 1)))
    return bn


def bn_batch1_max_output():
    """BatchNorm in training on a batch of 2 with one value per channel repeated... the
    largest |x_hat| a batch of two can give: always 1 (x_hat is -1 and +1)."""
    x = np.random.default_rng(0).normal(3.0, 2.0, size=(2, 4))
    return float(np.abs(nc.BatchNorm1d(4, eps=1e-12)(x)).max())
