# exercise: groupnorm
# Source: github.com/ApolloLiZhaoyu/MS326_Assignment, assignment2/MS326/layers.py
# (spatial_groupnorm_forward, spatial_groupnorm_backward; SJTU MS326's port of CS231n
# assignment 2), commit 85b29bdd.
# Ported: the functions wrapped by the GroupNorm class; they take (N, C, H, W), so the input
# (N, C, *spatial) is viewed as (N, C, S, 1) with S the product of the spatial sizes (1 for
# (N, C)); gamma / beta go in as (1, C, 1, 1) as the assignment's tests pass them, and the
# (1, C, 1, 1) dgamma / dbeta come back reshaped to (C,).
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def spatial_groupnorm_forward(x, gamma, beta, G, gn_param):
    eps = gn_param.get('eps', 1e-5)
    N, C, H, W = x.shape
    x_group = np.reshape(x, (N, G, C // G, H, W))
    mean = np.mean(x_group, axis=(2, 3, 4), keepdims=True)
    var = np.var(x_group, axis=(2, 3, 4), keepdims=True)
    x_groupnorm = (x_group - mean) / np.sqrt(var + eps)
    x_norm = np.reshape(x_groupnorm, (N, C, H, W))
    out = x_norm * gamma + beta
    cache = (G, x, x_norm, mean, var, beta, gamma, eps)
    return out, cache


def spatial_groupnorm_backward(dout, cache):
    N, C, H, W = dout.shape
    G, x, x_norm, mean, var, beta, gamma, eps = cache
    dbeta = np.sum(dout, axis=(0, 2, 3), keepdims=True)
    dgamma = np.sum(dout * x_norm, axis=(0, 2, 3), keepdims=True)

    dx_norm = dout * gamma
    dx_groupnorm = dx_norm.reshape((N, G, C // G, H, W))
    x_group = x.reshape((N, G, C // G, H, W))
    dvar = np.sum(dx_groupnorm * -1.0 / 2 * (x_group - mean) / (var + eps) ** (3.0 / 2), axis=(2,3,4), keepdims=True)
    N_GROUP = C // G * H * W
    dmean1 = np.sum(dx_groupnorm * -1.0 / np.sqrt(var + eps), axis=(2, 3, 4), keepdims=True)
    dmean2_var = dvar * -2.0 / N_GROUP * np.sum(x_group - mean, axis=(2, 3, 4), keepdims=True)
    dmean = dmean1 + dmean2_var
    dx_group1 = dx_groupnorm * 1.0 / np.sqrt(var + eps)
    dx_group2_mean = dmean * 1.0 / N_GROUP
    dx_group3_var = dvar * 2.0 / N_GROUP * (x_group - mean)
    dx_group = dx_group1 + dx_group2_mean + dx_group3_var

    dx = dx_group.reshape((N, C, H, W))
    return dx, dgamma, dbeta


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(num_channels, dtype))
        self.beta = Parameter(np.zeros(num_channels, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.shape = x.shape
        N, C = x.shape[:2]
        x4 = x.reshape(N, C, -1, 1)
        C4 = (1, C, 1, 1)
        out, self.cache = spatial_groupnorm_forward(x4, self.gamma.data.reshape(C4), self.beta.data.reshape(C4),
                                                    self.num_groups, {'eps': self.eps})
        return out.reshape(self.shape)

    def backward(self, dout):
        N, C = dout.shape[:2]
        dx, dgamma, dbeta = spatial_groupnorm_backward(dout.reshape(N, C, -1, 1), self.cache)
        self.gamma.grad += dgamma.reshape(C)
        self.beta.grad += dbeta.reshape(C)
        return dx.reshape(self.shape)
