# 手撕：Linear -> BN(训练) -> tanh -> Linear -> 交叉熵，全部手写反向
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
        N = x.shape[0]
        h = x @ self.w1.data + self.b1.data
        mu = h.mean(0)
        var = h.var(0)                              # 有偏方差
        rstd = 1 / np.sqrt(var + self.eps)
        hh = (h - mu) * rstd
        hbn = self.gamma.data * hh + self.beta.data
        a = np.tanh(hbn)
        z = a @ self.w2.data + self.b2.data
        z = z - z.max(1, keepdims=True)             # 数值稳定
        logp = z - np.log(np.exp(z).sum(1, keepdims=True))
        loss = -logp[np.arange(N), targets].mean()
        self.cache = (x, targets, hh, rstd, hbn, a, np.exp(logp))
        return loss

    def backward(self, dloss=1.0):
        x, t, hh, rstd, hbn, a, p = self.cache
        N = x.shape[0]
        dz = p.copy()
        dz[np.arange(N), t] -= 1
        dz = dz * dloss / N                        # softmax + 交叉熵 的梯度
        self.w2.grad += a.T @ dz
        self.b2.grad += dz.sum(0)
        da = dz @ self.w2.data.T
        dhbn = da * (1 - hbn ** 2)                  # tanh 的导数
        self.gamma.grad += (dhbn * hh).sum(0)
        self.beta.grad += dhbn.sum(0)
        dhh = dhbn * self.gamma.data
        dh = rstd * (dhh - dhh.mean(0) - hh * (dhh * hh).mean(0))   # BN 反向
        self.w1.grad += x.T @ dh
        self.b1.grad += dh.sum(0)
        return dh @ self.w1.data.T
