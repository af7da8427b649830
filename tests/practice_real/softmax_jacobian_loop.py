import numpy as np


class Softmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        # move the softmax axis last, flatten the rest into rows
        xm = np.moveaxis(x, self.axis, -1)
        rows = xm.reshape(-1, xm.shape[-1])
        out = np.empty_like(rows)
        for i, r in enumerate(rows):
            e = np.exp(r - np.max(r))
            out[i] = e / np.sum(e)
        self.out = out
        self.moved_shape = xm.shape
        return np.moveaxis(out.reshape(xm.shape), -1, self.axis)

    def backward(self, dy):
        dym = np.moveaxis(dy, self.axis, -1).reshape(-1, self.moved_shape[-1])
        dx = np.empty_like(dym)
        for i, s in enumerate(self.out):
            J = np.diag(s) - np.outer(s, s)   # J[i, j] = s_i (delta_ij - s_j)
            dx[i] = J @ dym[i]                # J is symmetric
        return np.moveaxis(dx.reshape(self.moved_shape), -1, self.axis)
