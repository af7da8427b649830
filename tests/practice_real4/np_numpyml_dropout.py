# exercise: dropout
# Source: github.com/ddbourgin/numpy-ml, numpy_ml/neural_nets/wrappers/wrappers.py, class
# Dropout(WrapperBase) (forward, backward).
# Ported: the wrapper around an identity base layer (the exercise's Dropout has no layer
# inside), so forward returns scaler * (mask * X) and backward returns the scaled dLdy; the
# mask drawn from self.rng instead of np.random.rand; "trainable" is self.training. Kept: the
# backward scales the gradient by 1 / (1 - p) in place and never applies the mask it saved;
# the backward asserts the layer is trainable; scaler = 1.0 / (1.0 - p) for p = 1.
import numpy as np


class Dropout:
    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.training = True
        self._wrapper_derived_variables = {"dropout_mask": []}

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    @property
    def trainable(self):
        return self.training

    def forward(self, X, retain_derived=True):
        scaler, mask = 1.0, np.ones(X.shape).astype(bool)
        if self.trainable:
            scaler = 1.0 / (1.0 - self.p)
            mask = self.rng.random(X.shape) >= self.p
            X = mask * X

        if retain_derived:
            self._wrapper_derived_variables["dropout_mask"].append(mask)

        return scaler * X

    def backward(self, dLdy, retain_grads=True):
        assert self.trainable, "Layer is frozen"
        dLdy *= 1.0 / (1.0 - self.p)
        return dLdy
