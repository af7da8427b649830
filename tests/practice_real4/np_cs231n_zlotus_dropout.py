# exercise: dropout
# Source: github.com/zlotus/cs231n, assignment2/cs231n/layers.py (dropout_forward /
# dropout_backward, CS231n 2016 assignment 2), commit 03acea73.
# Ported: the two functions wrapped by the Dropout class; the mask drawn from self.rng instead
# of np.random (the seed in dropout_param becomes the layer's rng); the mode read from
# self.training. Kept: the solution's mask (rand < p) / p, which keeps a unit with probability p
# and scales it by 1 / p, although the docstring of the assignment says p drops it.
import numpy as np


def dropout_forward(x, dropout_param, rng):
  p, mode = dropout_param['p'], dropout_param['mode']

  mask = None
  out = None

  if mode == 'train':
    mask = (rng.random(x.shape)<p) / p
    out = mask * x
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
    dropout_param, mask = cache
    dx = mask * dout
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
    dropout_param = {'p': self.p, 'mode': 'train' if self.training else 'test'}
    out, self.cache = dropout_forward(x, dropout_param, self.rng)
    return out

  def backward(self, dout):
    return dropout_backward(dout, self.cache).astype(dout.dtype, copy=False)
