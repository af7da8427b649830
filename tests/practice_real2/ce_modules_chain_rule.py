# Cross-entropy as two tiny modules chained with the chain rule: Softmax (with its full
# Jacobian-vector product) and NLL on the probabilities, dL/dp = -1/p at the target.
import numpy as np


class Module:
    def __call__(self, *args):
        return self.forward(*args)


class Softmax(Module):
    def forward(self, z):
        e = np.exp(z - z.max(1, keepdims=True))
        self.p = e / e.sum(1, keepdims=True)
        return self.p

    def backward(self, dp):
        return self.p * (dp - (dp * self.p).sum(1, keepdims=True))


class NLL(Module):
    def forward(self, p, targets):
        self.p, self.t = p, targets
        n = p.shape[0]
        with np.errstate(divide="ignore"):
            return -np.mean(np.log(p[np.arange(n), targets]))

    def backward(self, dloss):
        n = self.p.shape[0]
        dp = np.zeros_like(self.p)
        with np.errstate(divide="ignore", invalid="ignore"):
            dp[np.arange(n), self.t] = -dloss / (n * self.p[np.arange(n), self.t])
        return dp


class CrossEntropyLoss(Module):
    def __init__(self):
        self.softmax, self.nll = Softmax(), NLL()

    def forward(self, logits, targets):
        self.dtype = logits.dtype
        z = logits.astype(np.float64)
        m = z.max(1, keepdims=True)
        logp = z - m - np.log(np.exp(z - m).sum(1, keepdims=True))   # stable loss
        self.softmax(z)
        self.nll.p, self.nll.t = self.softmax.p, targets
        return np.asarray(-logp[np.arange(z.shape[0]), targets].mean(), dtype=self.dtype)[()]

    def backward(self, dloss=1.0):
        with np.errstate(invalid="ignore", over="ignore"):
            g = self.softmax.backward(self.nll.backward(dloss))
        return g.astype(self.dtype)
