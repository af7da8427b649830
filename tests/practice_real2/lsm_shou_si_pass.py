# 手撕 LogSoftmax（任意维度）
import numpy as np


class LogSoftmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        m = np.max(x, axis=self.axis, keepdims=True)          # 先减最大值
        lse = m + np.log(np.sum(np.exp(x - m), axis=self.axis, keepdims=True))
        out = x - lse                                          # logp = x - logsumexp(x)
        self.p = np.exp(out)                                   # 反向要用 softmax
        return out

    def backward(self, dy):
        # dx = dy - softmax * sum(dy)
        return dy - self.p * np.sum(dy, axis=self.axis, keepdims=True)
