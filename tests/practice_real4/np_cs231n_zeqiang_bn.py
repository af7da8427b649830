# exercise: batchnorm
# Source: github.com/Zeqiang-Lai/CS231n, assigment2/cs231n/layers.py (batchnorm_forward with
# Kratzert's nine steps, batchnorm_backward steps 9 to 0, batchnorm_backward_alt; CS231n
# 2017 assignment 2), commit bac0c5cf.
# Ported: the functions wrapped by the BatchNorm1d class (training backward: the staged
# batchnorm_backward); (N, C, L) moved to (N*L, C) as the assignment's spatial batchnorm does;
# CS231n's momentum (0.9, weight of the old value) is 1 - the contract's momentum. The source
# has no test-mode backward (its cache is None there): the one below is gamma / sqrt(running_var
# + eps), as its test-mode forward implies. Kept: running_var updated with np.var (biased);
# no momentum=None.
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
        sample_mean = np.mean(x, axis=0)
        sample_var = np.var(x, axis=0)
        # x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)

        # out = gamma * x_hat + beta

        running_mean = momentum * running_mean + (1 - momentum) * sample_mean
        running_var = momentum * running_var + (1 - momentum) * sample_var

        # cache = (gamma, (x - sample_mean), np.sqrt(sample_var + eps), x_hat)
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
    elif mode == 'test':
        out = (x - running_mean) / np.sqrt(running_var + eps)
        out = gamma * out + beta
        cache = ((x - running_mean) / np.sqrt(running_var + eps), gamma, running_var, eps)
    else:
        raise ValueError('Invalid forward batchnorm mode "%s"' % mode)

    # Store the updated running means back into bn_param
    bn_param['running_mean'] = running_mean
    bn_param['running_var'] = running_var

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


def batchnorm_backward_test(dout, cache):
    xhat, gamma, running_var, eps = cache
    return dout * gamma / np.sqrt(running_var + eps), np.sum(dout * xhat, axis=0), np.sum(dout, axis=0)


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
        bn_param = {'mode': 'train' if self.training else 'test', 'eps': self.eps,
                    'running_mean': self.running_mean, 'running_var': self.running_var}
        if self.training:
            bn_param['momentum'] = 1 - self.momentum
        out, self.cache = batchnorm_forward(x, self.gamma.data, self.beta.data, bn_param)
        self.mode = bn_param['mode']
        self.running_mean, self.running_var = bn_param['running_mean'], bn_param['running_var']
        if len(self.shape) == 3:
            N, C, L = self.shape
            out = out.reshape(N, L, C).transpose(0, 2, 1)
        return out

    def backward(self, dout):
        if dout.ndim == 3:
            N, C, L = dout.shape
            dout = dout.transpose(0, 2, 1).reshape(N * L, C)
        if self.mode == 'train':
            dx, dgamma, dbeta = batchnorm_backward(dout, self.cache)
        else:
            dx, dgamma, dbeta = batchnorm_backward_test(dout, self.cache)
        self.gamma.grad += dgamma
        self.beta.grad += dbeta
        if len(self.shape) == 3:
            N, C, L = self.shape
            dx = dx.reshape(N, L, C).transpose(0, 2, 1)
        return dx
