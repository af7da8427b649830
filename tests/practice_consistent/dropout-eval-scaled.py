"""Dropout that keeps units in training without rescaling them and scales by 1 - p in
evaluation instead (the original 2014 paper's test-time rule), its backward following its
forward in both modes: the mistake dropout-eval-scaling, with a consistent backward. (The
training side is right: inverted dropout in training, so the eval scaling is the mistake.)"""

import numpy as np


class Dropout:
    def __init__(self, p=0.5, rng=None):
        self.p = p
        self.rng = np.random.default_rng(rng)
        self.training = True

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def forward(self, x):
        if not self.training:
            self.factor = 1.0 - self.p
            return x * self.factor
        if self.p == 0:
            self.factor = 1.0
            return x
        keep = self.rng.random(x.shape) >= self.p
        self.factor = keep / (1.0 - self.p) if self.p < 1 else keep * 0.0
        return (x * self.factor).astype(x.dtype)

    def backward(self, dy):
        return (dy * self.factor).astype(dy.dtype)
