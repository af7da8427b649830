# 手撕 BatchNorm1d（训练 + 推理）
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.track_running_stats = track_running_stats
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.num_batches_tracked = 0

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        ax = (0,) if x.ndim == 2 else (0, 2)          # 除了通道维都要统计
        sh = (1, -1) + (1,) * (x.ndim - 2)
        if self.training:
            mean = x.mean(axis=ax)
            var = x.var(axis=ax)
            self.num_batches_tracked += 1
            m = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
            # 更新滑动平均
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var
        else:
            mean, var = self.running_mean, self.running_var
        self.rstd = (1 / np.sqrt(var + self.eps)).reshape(sh)
        self.xhat = (x - mean.reshape(sh)) * self.rstd
        self.ax, self.sh = ax, sh
        return self.gamma.data.reshape(sh) * self.xhat + self.beta.data.reshape(sh)

    def backward(self, dy):
        ax, sh = self.ax, self.sh
        self.gamma.grad += (dy * self.xhat).sum(axis=ax)
        self.beta.grad += dy.sum(axis=ax)
        g = dy * self.gamma.data.reshape(sh)
        # 反向公式（训练和推理都用这一个）
        return self.rstd * (g - g.mean(axis=ax, keepdims=True)
                            - self.xhat * (g * self.xhat).mean(axis=ax, keepdims=True))
