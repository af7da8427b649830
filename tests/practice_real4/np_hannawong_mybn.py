# exercise: batchnorm
# Source: github.com/hannawong/MLE-interview, 编程语言基础/pytorch/BN实现.md (class MyBN with
# batch_norm(self, x), a Chinese interview note; the method is written at module level in the
# note, indented here into the class).
# Ported: MyBN(momentum, eps, num_features) is the contract's BatchNorm1d(num_features, eps,
# momentum); _gamma/_beta are the contract's gamma/beta Parameters, _running_mean/_running_var
# are exposed as running_mean/running_var; (N, C, L) goes through as (N*L, C). The note has a
# forward only: the backward added is the usual one for its forward (batch statistics). Kept:
# running = (1 - momentum) * batch + momentum * running, the biased batch variance in the
# running update, the running statistics starting as the scalars 0 and 1, and a forward that
# uses the batch statistics whatever the mode (the note has no inference path).
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        """
        初始化参数值
        :param momentum: 追踪样本整体均值和方差的动量
        :param eps: 防止数值计算错误
        :param num_features: 特征数量
        """
        # 对每个batch的mean和var进行追踪统计
        self._running_mean = 0
        self._running_var = 1
        # 更新self._running_xxx时的动量
        self._momentum = momentum
        # 防止分母计算为0
        self._eps = eps
        # 对应论文中需要更新的beta和gamma，采用pytorch文档中的初始化值
        self.beta = Parameter(np.zeros(shape=(num_features, ), dtype=dtype))
        self.gamma = Parameter(np.ones(shape=(num_features, ), dtype=dtype))
        self.num_features = num_features
        self.training = True

    @property
    def running_mean(self):
        return np.broadcast_to(self._running_mean, (self.num_features,))

    @property
    def running_var(self):
        return np.broadcast_to(self._running_var, (self.num_features,))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def batch_norm(self, x):
        """
        BN向传播
        :param x: 数据
        :return: BN输出
        """
        x_mean = x.mean(axis=0)
        x_var = x.var(axis=0)
        # 对应running_mean的更新公式
        self._running_mean = (1-self._momentum)*x_mean + self._momentum*self._running_mean
        self._running_var = (1-self._momentum)*x_var + self._momentum*self._running_var
        # 对应论文中计算BN的公式
        x_hat = (x-x_mean)/np.sqrt(x_var+self._eps)
        y = self.gamma.data*x_hat + self.beta.data
        self.cache = (x_hat, x_var)
        return y

    def forward(self, x):
        self.shape = x.shape
        if x.ndim == 3:
            N, C, L = x.shape
            x = x.transpose(0, 2, 1).reshape(-1, C)
        y = self.batch_norm(x)
        if len(self.shape) == 3:
            N, C, L = self.shape
            y = y.reshape(N, L, C).transpose(0, 2, 1)
        return y

    def backward(self, dy):
        if dy.ndim == 3:
            N, C, L = dy.shape
            dy = dy.transpose(0, 2, 1).reshape(-1, C)
        x_hat, x_var = self.cache
        self.gamma.grad += (dy * x_hat).sum(axis=0)
        self.beta.grad += dy.sum(axis=0)
        dx_hat = dy * self.gamma.data
        dx = (dx_hat - dx_hat.mean(axis=0) - x_hat * (dx_hat * x_hat).mean(axis=0)) / np.sqrt(x_var + self._eps)
        if len(self.shape) == 3:
            N, C, L = self.shape
            dx = dx.reshape(N, L, C).transpose(0, 2, 1)
        return dx
