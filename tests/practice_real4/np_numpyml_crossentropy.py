# exercise: cross_entropy
# Source: github.com/ddbourgin/numpy-ml, numpy_ml/neural_nets/losses/losses.py, class
# CrossEntropy(ObjectiveBase) (loss, grad), with the library's Softmax layer's _fwd for the
# probabilities (numpy_ml/neural_nets/layers/layers.py).
# Ported: the loss takes one-hot targets and probabilities, so forward one-hot encodes the
# integer targets and applies the softmax; backward(dloss) multiplies grad() by dloss. Kept:
# the loss is the SUM over the batch, as its docstring says ("the sum (not the average!)"), and
# the log is taken of y_pred + np.finfo(float).eps; grad = y_pred - y, summed too.
import numpy as np


def softmax(X, dim=-1):
    e_X = np.exp(X - np.max(X, axis=dim, keepdims=True))
    return e_X / e_X.sum(axis=dim, keepdims=True)


class CrossEntropy:
    @staticmethod
    def loss(y, y_pred):
        # prevent taking the log of 0
        eps = np.finfo(float).eps

        # each example is associated with a single class; sum the negative log
        # probability of the correct label over all samples in the batch.
        # observe that we are taking advantage of the fact that y is one-hot
        # encoded
        cross_entropy = -np.sum(y * np.log(y_pred + eps))
        return cross_entropy

    @staticmethod
    def grad(y, y_pred):
        # derivative of xe wrt z is y_pred - y_true, hence we can just
        # subtract 1 from the probability of the correct class labels
        grad = y_pred - y
        return grad


class CrossEntropyLoss:
    def forward(self, logits, targets):
        self.y = np.eye(logits.shape[1], dtype=logits.dtype)[targets]
        self.y_pred = softmax(logits)
        return CrossEntropy.loss(self.y, self.y_pred)

    def backward(self, dloss=1.0):
        return CrossEntropy.grad(self.y, self.y_pred) * dloss
