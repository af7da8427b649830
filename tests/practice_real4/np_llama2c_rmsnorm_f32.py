# exercise: rmsnorm
# Source: github.com/karpathy/llama2.c, run.c, void rmsnorm(float* o, float* x, float* weight,
# int size): sum of squares in a float accumulator, ss /= size, ss += 1e-5f, ss = 1.0f /
# sqrtf(ss), o[j] = weight[j] * (ss * x[j]).
# Ported from C to NumPy: the per-row function applied to every row of the flattened input
# (rows of prod(normalized_shape) values), float32 throughout as in the C code, the result
# cast back to the input's dtype. run.c is inference only: the backward added is the exact
# derivative of that forward, in float32 with the same rows, as its author would write it.
# Kept: eps is the literal 1e-5f, whatever the constructor is given.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def rmsnorm(o, x, weight, size):
    # calculate sum of squares
    ss = np.float32(0.0)
    for j in range(size):
        ss += x[j] * x[j]
    ss /= np.float32(size)
    ss += np.float32(1e-5)
    ss = np.float32(1.0) / np.sqrt(ss)
    # normalize and scale
    for j in range(size):
        o[j] = weight[j] * (ss * x[j])
    return ss


class RMSNorm:
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        size = int(np.prod(self.normalized_shape))
        rows = np.asarray(x, dtype=np.float32).reshape(-1, size)
        weight = np.asarray(self.gamma.data, dtype=np.float32).reshape(-1)
        out = np.empty_like(rows)
        self.inv = np.empty(rows.shape[0], dtype=np.float32)
        for r in range(rows.shape[0]):
            self.inv[r] = rmsnorm(out[r], rows[r], weight, size)
        self.rows, self.dtype, self.shape = rows, x.dtype, x.shape
        return out.reshape(x.shape).astype(x.dtype)

    def backward(self, dy):
        size = int(np.prod(self.normalized_shape))
        drows = np.asarray(dy, dtype=np.float32).reshape(-1, size)
        weight = np.asarray(self.gamma.data, dtype=np.float32).reshape(-1)
        dweight = np.zeros(size, dtype=np.float32)
        dx = np.empty_like(drows)
        for r in range(drows.shape[0]):
            x, ss, do = self.rows[r], self.inv[r], drows[r]
            dot = np.float32(0.0)
            for j in range(size):
                dweight[j] += do[j] * (ss * x[j])
                dot += do[j] * weight[j] * x[j]
            for j in range(size):
                dx[r, j] = ss * do[j] * weight[j] - ss * ss * ss * x[j] * dot / np.float32(size)
        self.gamma.grad += dweight.reshape(self.normalized_shape).astype(self.gamma.grad.dtype)
        return dx.reshape(self.shape).astype(dy.dtype)
