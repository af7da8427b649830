# Linear -> BatchNorm -> tanh -> Linear -> cross-entropy, the backward written the
# makemore way: one line per node, d<node> named after the node.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MLPWithBatchNorm:
    def __init__(self, n_in, n_hidden, n_classes, rng=0):
        rng = np.random.default_rng(rng)
        self.eps = 1e-5
        self.w1 = Parameter(rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in))
        self.b1 = Parameter(np.zeros(n_hidden))
        self.gamma = Parameter(np.ones(n_hidden))
        self.beta = Parameter(np.zeros(n_hidden))
        self.w2 = Parameter(rng.standard_normal((n_hidden, n_classes)) / np.sqrt(n_hidden))
        self.b2 = Parameter(np.zeros(n_classes))

    def forward(self, x, targets):
        n = x.shape[0]
        hprebn = x @ self.w1.data + self.b1.data
        bnmeani = 1 / n * hprebn.sum(0, keepdims=True)
        bndiff = hprebn - bnmeani
        bndiff2 = bndiff ** 2
        bnvar = 1 / n * bndiff2.sum(0, keepdims=True)
        bnvar_inv = (bnvar + self.eps) ** -0.5
        bnraw = bndiff * bnvar_inv
        hpreact = self.gamma.data * bnraw + self.beta.data
        h = np.tanh(hpreact)
        logits = h @ self.w2.data + self.b2.data
        logit_maxes = logits.max(1, keepdims=True)
        norm_logits = logits - logit_maxes
        counts = np.exp(norm_logits)
        counts_sum = counts.sum(1, keepdims=True)
        logprobs = norm_logits - np.log(counts_sum)
        loss = -logprobs[np.arange(n), targets].mean()
        self.cache = dict(x=x, targets=targets, bndiff=bndiff, bnvar_inv=bnvar_inv, bnraw=bnraw,
                          h=h, probs=counts / counts_sum)
        return loss

    def backward(self, dloss=1.0):
        c = self.cache
        x, h, probs = c["x"], c["h"], c["probs"]
        n = x.shape[0]
        dlogits = probs.copy()
        dlogits[np.arange(n), c["targets"]] -= 1
        dlogits *= dloss / n
        self.w2.grad += h.T @ dlogits
        self.b2.grad += dlogits.sum(0)
        dh = dlogits @ self.w2.data.T
        dhpreact = (1.0 - h ** 2) * dh
        self.gamma.grad += (c["bnraw"] * dhpreact).sum(0)
        self.beta.grad += dhpreact.sum(0)
        bnvar_inv, bnraw = c["bnvar_inv"], c["bnraw"]
        dhprebn = bnvar_inv / n * (n * self.gamma.data * dhpreact
                                   - (self.gamma.data * dhpreact).sum(0)
                                   - bnraw * (self.gamma.data * dhpreact * bnraw).sum(0))
        self.w1.grad += x.T @ dhprebn
        self.b1.grad += dhprebn.sum(0)
        return dhprebn @ self.w1.data.T
