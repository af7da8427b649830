# exercise: softmax
# Source: github.com/xinghaow99/transformer_from_scratch, modules/softmax.py (class Softmax,
# a NumPy Transformer's softmax; its backward cites sgugger.github.io/a-simple-neural-net-in-
# numpy.html), commit 1566c198.
# Ported: the constructor takes the contract's axis argument, but, as in the source, self.axis
# is always -1; the test lines at the bottom of the module dropped. Kept: the backward's sum
# along the axis without keepdims.
import numpy as np

class Softmax():
    def __init__(self, axis=-1):
        self.axis = -1

    def forward(self, x):
        self.x = x
        e_x = np.exp(x - np.max(x, axis = self.axis, keepdims=True))
        self.y =  e_x / np.sum(e_x, axis = self.axis, keepdims=True)
        return self.y

    def backward(self, grad_y):
        # https://sgugger.github.io/a-simple-neural-net-in-numpy.html
        grad_x = self.y * (grad_y - (grad_y * self.y).sum(axis=self.axis))
        return grad_x
