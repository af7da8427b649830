# 手撕 BatchNorm1d（面试版）：前向 + 反向，numpy 实现
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
        # 可学习参数：缩放 gamma 和平移 beta
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        # 推理时用的滑动平均
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.num_batches_tracked = 0
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # 输入 (N, C) 或 (N, C, L)，统计量在除通道外的所有维度上求
        self.axes = (0,) if x.ndim == 2 else (0, 2)
        self.shape = (1, -1) if x.ndim == 2 else (1, -1, 1)
        if self.training:
            mean = x.mean(axis=self.axes)
            var = x.var(axis=self.axes)              # 归一化用有偏方差
            n = x.size // x.shape[1]
            self.num_batches_tracked += 1
            mom = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
            # 更新滑动平均（running_var 用无偏方差）
            self.running_mean = (1 - mom) * self.running_mean + mom * mean
            self.running_var = (1 - mom) * self.running_var + mom * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        std = np.sqrt(var).reshape(self.shape)
        self.inv = 1.0 / (std + self.eps)            # 防止除零
        self.x_hat = (x - mean.reshape(self.shape)) * self.inv
        return self.gamma.data.reshape(self.shape) * self.x_hat + self.beta.data.reshape(self.shape)

    def backward(self, dy):
        # 参数梯度：在 batch（和长度）维上求和
        self.gamma.grad += np.sum(dy * self.x_hat, axis=self.axes)
        self.beta.grad += np.sum(dy, axis=self.axes)
        dx_hat = dy * self.gamma.data.reshape(self.shape)
        if not self.training:
            return dx_hat * self.inv                 # 推理模式：统计量是常数
        # 训练模式：经过均值和方差的三项
        return self.inv * (dx_hat - dx_hat.mean(axis=self.axes, keepdims=True)
                           - self.x_hat * (dx_hat * self.x_hat).mean(axis=self.axes, keepdims=True))
