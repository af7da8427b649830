# exercise: dropout
# Source: github.com/whu-pzhang/cs231n, assignment2/cs231n/layers.py (dropout_forward,
# dropout_backward; the 2017+ assignment, whose docstring says "p is the probability of
# **keep** a neuron output"), commit 085254a1.
# Ported: the functions wrapped by the Dropout class; the assignment's keep probability is
# 1 - p of the contract (p drops); the mask drawn from self.rng instead of np.random. Kept: the
# mask (rand < keep) / keep, the mode carried in the cache, test mode returning x.
import numpy as np


def dropout_forward(x, dropout_param, rng):
    p, mode = dropout_param['p'], dropout_param['mode']

    mask = None
    out = None

    if mode == 'train':
        mask = (rng.random(x.shape) < p) / p
        out = x * mask
    elif mode == 'test':
        out = x

    cache = (dropout_param, mask)
    out = out.astype(x.dtype, copy=False)

    return out, cache


def dropout_backward(dout, cache):
    dropout_param, mask = cache
    mode = dropout_param['mode']

    dx = None
    if mode == 'train':
        dx = dout * mask
    elif mode == 'test':
        dx = dout
    return dx


class Dropout:
    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        dropout_param = {'p': 1 - self.p, 'mode': 'train' if self.training else 'test'}
        out, self.cache = dropout_forward(x, dropout_param, self.rng)
        return out

    def backward(self, dout):
        return dropout_backward(dout, self.cache).astype(dout.dtype, copy=False)
