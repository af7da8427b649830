"""An MLP with BatchNorm, staged node by node (makemore style), normalising with Bessel's
correction 1 / (n - 1) in training, in the forward and consistently in the backward.
"""

import numpy as np


class Param:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MLPWithBatchNorm:
    def __init__(self, n_in, n_hidden, n_classes):
        self.w1 = Param(np.random.randn(n_in, n_hidden) * 0.1)
        self.b1 = Param(np.zeros(n_hidden))
        self.gamma = Param(np.ones(n_hidden))
        self.beta = Param(np.zeros(n_hidden))
        self.w2 = Param(np.random.randn(n_hidden, n_classes) * 0.1)
        self.b2 = Param(np.zeros(n_classes))

    def forward(self, x, targets):
        n = x.shape[0]
        self.x, self.Yb, self.n = x, targets, n
        self.hprebn = x @ self.w1.data + self.b1.data
        self.bnmeani = 1 / n * self.hprebn.sum(0, keepdims=True)
        self.bndiff = self.hprebn - self.bnmeani
        self.bndiff2 = self.bndiff ** 2
        self.bnvar = 1 / (n - 1) * self.bndiff2.sum(0, keepdims=True)
        self.bnvar_inv = (self.bnvar + 1e-5) ** -0.5
        self.bnraw = self.bndiff * self.bnvar_inv
        self.hpreact = self.gamma.data * self.bnraw + self.beta.data
        self.h = np.tanh(self.hpreact)
        self.logits = self.h @ self.w2.data + self.b2.data
        self.logit_maxes = self.logits.max(1, keepdims=True)
        norm_logits = self.logits - self.logit_maxes
        self.counts = np.exp(norm_logits)
        self.counts_sum = self.counts.sum(1, keepdims=True)
        self.counts_sum_inv = self.counts_sum ** -1
        self.probs = self.counts * self.counts_sum_inv
        self.logprobs = np.log(self.probs)
        return (-self.logprobs[np.arange(n), targets].mean()).astype(x.dtype)

    def backward(self, dloss=1.0):
        n = self.n
        dlogprobs = np.zeros_like(self.logprobs)
        dlogprobs[np.arange(n), self.Yb] = -dloss / n
        dprobs = (1.0 / self.probs) * dlogprobs
        dcounts_sum_inv = (self.counts * dprobs).sum(1, keepdims=True)
        dcounts = self.counts_sum_inv * dprobs
        dcounts_sum = -self.counts_sum ** -2 * dcounts_sum_inv
        dcounts += np.ones_like(self.counts) * dcounts_sum
        dnorm_logits = self.counts * dcounts
        dlogits = dnorm_logits.copy()
        dlogit_maxes = -dnorm_logits.sum(1, keepdims=True)
        dlogits += (self.logits == self.logit_maxes) * dlogit_maxes
        dh = dlogits @ self.w2.data.T
        self.w2.grad += self.h.T @ dlogits
        self.b2.grad += dlogits.sum(0)
        dhpreact = (1.0 - self.h ** 2) * dh
        self.gamma.grad += (self.bnraw * dhpreact).sum(0)
        self.beta.grad += dhpreact.sum(0)
        dbnraw = self.gamma.data * dhpreact
        dbnvar_inv = (self.bndiff * dbnraw).sum(0, keepdims=True)
        dbndiff = self.bnvar_inv * dbnraw
        dbnvar = (-0.5 * (self.bnvar + 1e-5) ** -1.5) * dbnvar_inv
        dbndiff2 = (1 / (n - 1) * np.ones_like(self.bndiff2)) * dbnvar
        dbndiff += 2 * self.bndiff * dbndiff2
        dhprebn = dbndiff.copy()
        dbnmeani = -dbndiff.sum(0)
        dhprebn += 1 / n * np.ones_like(self.hprebn) * dbnmeani
        self.w1.grad += self.x.T @ dhprebn
        self.b1.grad += dhprebn.sum(0)
        return (dhprebn @ self.w1.data.T).astype(self.x.dtype)
