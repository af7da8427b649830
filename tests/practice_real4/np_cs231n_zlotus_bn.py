# exercise: batchnorm
# Source: github.com/zlotus/cs231n, assignment2/cs231n/layers.py (batchnorm_forward,
# batchnorm_backward, spatial_batchnorm_forward/backward; CS231n 2016 assignment 2, the student
# follows costapt.github.io/2016/06/26/batch-norm for the staged backward), commit 03acea73.
# Ported: the functions kept with their bn_param dict and cache tuple and wrapped by the
# BatchNorm1d class the exercise asks for; (N, C, L) input goes through the solution's own
# spatial trick (move C last, reshape to (N*L, C)); CS231n's momentum (0.9, the weight of the
# old value) is the contract's 1 - momentum. The source has no backward in test mode (its cache
# is None there): the eval backward below is gamma / sqrt(running_var + eps), as the test-mode
# forward implies. Kept: running_var updated with the biased sample variance, as CS231n's
# docstring asks; no momentum=None (CS231n has no cumulative average).
import numpy as np


class Parameter:
  def __init__(self, data):
    self.data = data
    self.grad = np.zeros_like(data)


def batchnorm_forward(x, gamma, beta, bn_param):
  mode = bn_param['mode']
  eps = bn_param.get('eps', 1e-5)
  momentum = bn_param.get('momentum', 0.9)

  N, D = x.shape
  running_mean = bn_param.get('running_mean', np.zeros(D, dtype=x.dtype))
  running_var = bn_param.get('running_var', np.zeros(D, dtype=x.dtype))

  out, cache = None, None
  if mode == 'train':
    # ref: http://costapt.github.io/2016/06/26/batch-norm/
    sample_mean = np.mean(x, axis=0)
    xcentered = x - sample_mean
    xcentered2 = xcentered**2 # x centered squarre
    sample_var = np.mean(xcentered2, axis=0)
    std = np.sqrt(sample_var + eps)
    stdinv = 1 / std
    xhat = xcentered * stdinv
    out = gamma * xhat + beta

    running_mean = momentum * running_mean + (1 - momentum) * sample_mean
    running_var = momentum * running_var + (1 - momentum) * sample_var

    cache = (gamma, xhat, stdinv, std, xcentered)
  elif mode == 'test':
    x_hat = (x-running_mean) / (np.sqrt(running_var+eps))
    out = gamma*x_hat + beta
    cache = (gamma, running_var, eps)
  else:
    raise ValueError('Invalid forward batchnorm mode "%s"' % mode)

  # Store the updated running means back into bn_param
  bn_param['running_mean'] = running_mean
  bn_param['running_var'] = running_var

  return out, cache


def batchnorm_backward(dout, cache):
  # ref: http://costapt.github.io/2016/06/26/batch-norm/
  N, D = dout.shape
  gamma, xhat, stdinv, std, xcentered = cache

  dgamma = np.sum(xhat * dout, axis=0) # (D, )
  dbeta = np.sum(dout, axis=0) # (D, )

  dout_dxhat = gamma * dout # (N, D)

  dout_dstdinv = np.sum(dout_dxhat * xcentered, axis=0) # (D, )
  dout_dstd = -1 * dout_dstdinv / (std**2) # (D, )
  dout_dvar = dout_dstd * 1 / (2 * std) # (D, )
  dout_dxcenterdsq = dout_dvar * np.ones((N, D)) / N # (N, D)
  dout_dxcenter = dout_dxhat * stdinv + dout_dxcenterdsq * 2 * xcentered # (N, D)
  dout_dmean = -1 * np.sum(dout_dxcenter, axis=0) # (N, D)
  dx = 1 * dout_dxcenter + dout_dmean * np.ones((N, D)) / N # (N, D)
  return dx, dgamma, dbeta


def batchnorm_backward_test(dout, cache):
  gamma, running_var, eps = cache
  dgamma = None  # filled by the caller from x_hat
  dx = dout * gamma / np.sqrt(running_var + eps)
  return dx


class BatchNorm1d:
  def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
               dtype=np.float64):
    self.num_features = num_features
    self.eps = eps
    self.momentum = momentum
    self.track_running_stats = track_running_stats
    self.training = True
    self.gamma = Parameter(np.ones(num_features, dtype)) if affine else None
    self.beta = Parameter(np.zeros(num_features, dtype)) if affine else None
    self.running_mean = np.zeros(num_features, dtype)
    self.running_var = np.ones(num_features, dtype)
    self.num_batches_tracked = 0

  def train(self, mode=True):
    self.training = mode
    return self

  def eval(self):
    return self.train(False)

  def forward(self, x):
    self.shape = x.shape
    if x.ndim == 3:
      N, C, L = x.shape
      x = x.transpose(0, 2, 1).reshape(N*L, C)
    bn_param = {'mode': 'train' if self.training else 'test', 'eps': self.eps,
                'running_mean': self.running_mean, 'running_var': self.running_var}
    if self.training:
      bn_param['momentum'] = 1 - self.momentum
    out, self.cache = batchnorm_forward(x, self.gamma.data, self.beta.data, bn_param)
    self.running_mean, self.running_var = bn_param['running_mean'], bn_param['running_var']
    self.x2d = x
    if len(self.shape) == 3:
      N, C, L = self.shape
      out = out.reshape(N, L, C).transpose(0, 2, 1)
    return out

  def backward(self, dout):
    if dout.ndim == 3:
      N, C, L = dout.shape
      dout = dout.transpose(0, 2, 1).reshape(N*L, C)
    if self.training:
      dx, dgamma, dbeta = batchnorm_backward(dout, self.cache)
    else:
      dx = batchnorm_backward_test(dout, self.cache)
      x_hat = (self.x2d - self.running_mean) / np.sqrt(self.running_var + self.eps)
      dgamma, dbeta = np.sum(x_hat * dout, axis=0), np.sum(dout, axis=0)
    self.gamma.grad += dgamma
    self.beta.grad += dbeta
    if len(self.shape) == 3:
      N, C, L = self.shape
      dx = dx.reshape(N, L, C).transpose(0, 2, 1)
    return dx
