# exercise: batchnorm
# Source: Andrej Karpathy, "Building makemore Part 3: Activations & Gradients, BatchNorm"
# (github.com/karpathy/nn-zero-to-hero lectures/makemore/makemore_part3_bn.ipynb), class
# BatchNorm1d (torch tensors, __call__, buffers updated under no_grad), with part 5's
# dimension switch for 3-D input.
# Ported from torch to NumPy: x.mean / x.var keep torch's defaults (var is unbiased: ddof=1);
# __call__ is forward; the gamma / beta tensors are Parameters; part 5 reduces a 3-D (B, T, C)
# input over dims (0, 1), here the contract's (N, C, L) is reduced over (0, 2) so that C stays
# the channel. The lecture's layer has no backward (autograd): the one added is part 4's
# manual BatchNorm backward for this forward, with its n/(n-1) factor, and x_hat's alone in
# evaluation. Kept: the unbiased batch variance in the normalisation; the running statistics
# blended with keepdim batch statistics, so they become (1, C) arrays after the first step.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.eps = eps
        self.momentum = momentum
        self.training = True
        # parameters (trained with backprop)
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        # buffers (trained with a running 'momentum update')
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # calculate the forward pass
        if x.ndim == 2:
            dim = 0
            shape = (1, -1)
        elif x.ndim == 3:
            dim = (0, 2)
            shape = (1, -1, 1)
        if self.training:
            xmean = x.mean(dim, keepdims=True) # batch mean
            xvar = x.var(dim, keepdims=True, ddof=1) # batch variance
        else:
            xmean = self.running_mean.reshape(shape)
            xvar = self.running_var.reshape(shape)
        xhat = (x - xmean) / np.sqrt(xvar + self.eps) # normalize to unit variance
        self.out = self.gamma.data.reshape(shape) * xhat + self.beta.data.reshape(shape)
        # update the buffers
        if self.training:
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean.reshape(1, -1)
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar.reshape(1, -1)
        self.cache = (xhat, xvar, dim, shape, self.training)
        return self.out

    def backward(self, dout):
        bnraw, bnvar, dim, shape, training = self.cache
        dhpreact = dout
        self.gamma.grad += (bnraw * dhpreact).sum(dim)
        self.beta.grad += dhpreact.sum(dim)
        bngain = self.gamma.data.reshape(shape)
        bnvar_inv = (bnvar + self.eps) ** -0.5
        if not training:
            return bngain * bnvar_inv * dhpreact
        n = dout.size // dout.shape[1]
        return bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(dim, keepdims=True)
                                          - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(dim, keepdims=True))
