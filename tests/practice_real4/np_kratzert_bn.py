# exercise: batchnorm
# Source: Frederik Kratzert, "Understanding the backward pass through Batch Normalization
# Layer" (kratzert.github.io/2016/02/12/understanding-the-gradient-flow-through-the-batch-
# normalization-layer.html): batchnorm_forward(x, gamma, beta, eps) and the staged
# batchnorm_backward(dout, cache), steps 9 to 0, 2-space indent.
# Ported: the two functions wrapped by the BatchNorm1d class; (N, C, L) is moved to (N*L, C)
# first. The post derives the training-time layer only: there is no running mean or variance
# and no test mode, and the port adds none, so forward always normalises with the batch.
import numpy as np


class Parameter:
  def __init__(self, data):
    self.data = data
    self.grad = np.zeros_like(data)


def batchnorm_forward(x, gamma, beta, eps):

  N, D = x.shape

  #step1: calculate mean
  mu = 1./N * np.sum(x, axis = 0)

  #step2: subtract mean vector of every trainings example
  xmu = x - mu

  #step3: following the lower branch - calculation denominator
  sq = xmu ** 2

  #step4: calculate variance
  var = 1./N * np.sum(sq, axis = 0)

  #step5: add eps for numerical stability, then sqrt
  sqrtvar = np.sqrt(var + eps)

  #step6: invert sqrtwar
  ivar = 1./sqrtvar

  #step7: execute normalization
  xhat = xmu * ivar

  #step8: Nor the two transformation steps
  gammax = gamma * xhat

  #step9
  out = gammax + beta

  #store intermediate
  cache = (xhat,gamma,xmu,ivar,sqrtvar,var,eps)

  return out, cache


def batchnorm_backward(dout, cache):

  #unfold the variables stored in cache
  xhat,gamma,xmu,ivar,sqrtvar,var,eps = cache

  #get the dimensions of the input/output
  N,D = dout.shape

  #step9
  dbeta = np.sum(dout, axis=0)
  dgammax = dout #not necessary, but more understandable

  #step8
  dgamma = np.sum(dgammax*xhat, axis=0)
  dxhat = dgammax * gamma

  #step7
  divar = np.sum(dxhat*xmu, axis=0)
  dxmu1 = dxhat * ivar

  #step6
  dsqrtvar = -1. /(sqrtvar**2) * divar

  #step5
  dvar = 0.5 * 1. /np.sqrt(var+eps) * dsqrtvar

  #step4
  dsq = 1. /N * np.ones((N,D)) * dvar

  #step3
  dxmu2 = 2 * xmu * dsq

  #step2
  dx1 = (dxmu1 + dxmu2)
  dmu = -1 * np.sum(dxmu1+dxmu2, axis=0)

  #step1
  dx2 = 1. /N * np.ones((N,D)) * dmu

  #step0
  dx = dx1 + dx2

  return dx, dgamma, dbeta


class BatchNorm1d:
  def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
               dtype=np.float64):
    self.num_features = num_features
    self.eps = eps
    self.momentum = momentum
    self.training = True
    self.gamma = Parameter(np.ones(num_features, dtype))
    self.beta = Parameter(np.zeros(num_features, dtype))
    self.running_mean = np.zeros(num_features, dtype)
    self.running_var = np.ones(num_features, dtype)

  def train(self, mode=True):
    self.training = mode
    return self

  def eval(self):
    return self.train(False)

  def forward(self, x):
    self.shape = x.shape
    if x.ndim == 3:
      N, C, L = x.shape
      x = x.transpose(0, 2, 1).reshape(N * L, C)
    out, self.cache = batchnorm_forward(x, self.gamma.data, self.beta.data, self.eps)
    if len(self.shape) == 3:
      N, C, L = self.shape
      out = out.reshape(N, L, C).transpose(0, 2, 1)
    return out

  def backward(self, dout):
    if dout.ndim == 3:
      N, C, L = dout.shape
      dout = dout.transpose(0, 2, 1).reshape(N * L, C)
    dx, dgamma, dbeta = batchnorm_backward(dout, self.cache)
    self.gamma.grad += dgamma
    self.beta.grad += dbeta
    if len(self.shape) == 3:
      N, C, L = self.shape
      dx = dx.reshape(N, L, C).transpose(0, 2, 1)
    return dx
