"""BatchNorm1d, BatchNorm2d and BatchNorm3d: standardise each channel over the batch (and spatial) axes."""

from typing import Self

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .base import _Norm, channel_shape
from .standardization import moments, standardize, standardize_backward


class _BatchNorm(_Norm):
    r"""Batch normalisation of each channel over B = every axis but the channel axis 1.

    Training (this batch's statistics; n = x.size / C values per channel)::

        mean  = mean_B(x)                         (1, C, 1...)
        var   = mean_B((x - mean)**2)             (1, C, 1...)   biased: divide by n
        rstd  = 1 / sqrt(var + eps)               (1, C, 1...)
        x_hat = (x - mean) * rstd                 (N, C, ...)
        y     = x_hat * gamma + beta              gamma, beta: (C,)

        running_mean = (1 - momentum) * running_mean + momentum * mean
        running_var  = (1 - momentum) * running_var  + momentum * var * n / (n - 1)   unbiased
        (momentum=None: momentum = 1 / num_batches_tracked, the plain average of all batches)

    Evaluation (the running statistics, constants)::

        x_hat = (x - running_mean) / sqrt(running_var + eps)

    Backward (dy = dL/dy)::

        dgamma = sum_B(dy * x_hat),   dbeta = sum_B(dy)      (C,)   (no beta with bias=False)
        dx_hat = dy * gamma                                  (N, C, ...)
        training:   dx = rstd * (dx_hat - mean_B(dx_hat) - x_hat * mean_B(dx_hat * x_hat))
        evaluation: dx = rstd * dx_hat         (the statistics do not depend on x)

    ``bias=False`` keeps gamma and drops beta; ``affine=False`` drops both, whatever ``bias``
    says (as in PyTorch). ``track_running_stats=False`` keeps no running statistics and uses the batch's in
    evaluation too, so there, as in training (and in PyTorch), one value per channel or
    eps <= 0 raises. Note the momentum convention: ``momentum`` weights the *new* batch (0.1
    here is 0.9 in the "decay" convention of some other frameworks). An empty batch (n = 0)
    gives an empty output and is counted in num_batches_tracked without changing the running
    statistics, as in PyTorch. Cache: x_hat, rstd, and whether the batch's statistics were used.
    Float64 inputs near 1e200 are standardised correctly (see ``moments``), where PyTorch 2.13
    returns beta; running_var then overflows to inf, as the variance itself does.
    """

    _dims: tuple[int, ...] = ()  # the input ranks the layer takes, set by each subclass
    frozen = False  # set by nc.freeze_batchnorm: evaluation mode whatever train() says

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        self._make_channel_norm(num_features, eps, momentum, affine, track_running_stats, dtype, bias)

    def train(self, mode: bool = True) -> Self:
        """``Module.train``, except that a frozen BatchNorm (``nc.freeze_batchnorm``) stays in
        evaluation mode: it keeps normalising with its running statistics, and never updates them,
        while the model around it trains."""
        super().train(mode)
        if self.frozen:
            self.training = False
        return self

    def _check_shape(self, x: np.ndarray) -> None:
        who = type(self).__name__
        if x.ndim not in self._dims:
            raise ValueError(f"{who} expected {' or '.join(f'{d}D' for d in self._dims)} input "
                             f"(got {x.ndim}D input)")
        if x.shape[1] != self.num_features:
            raise ValueError(f"{who}({self.num_features}) expected input with {self.num_features} "
                             f"channels on axis 1, got input of shape {x.shape}")

    def _check_batch(self, x: np.ndarray, n: int) -> None:
        """The errors PyTorch raises whenever the batch's statistics are used (training, or
        evaluation with track_running_stats=False): one value per channel, or eps <= 0."""
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape}")
        if self.eps <= 0:
            raise ValueError(f"batch_norm eps must be positive during training, got eps={self.eps}")

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._input(x)                               # (N, C, *L)  float16 -> float32
        B = (0,) + tuple(range(2, x.ndim))                         # every axis but the channels
        shape = channel_shape(self.num_features, x.ndim)           # (1, C, 1...)
        batch_stats = self.training or not self.track_running_stats
        n = x.size // self.num_features                            # values per channel
        if batch_stats:
            self._check_batch(x, n)
            mean, var, scale = moments(x, B)                       # (1, C, 1...)  var in units of scale**2
        else:
            mean, var = self.running_mean.reshape(shape), self.running_var.reshape(shape)
            scale = np.ones(shape)                                 # (1, C, 1...)  var as it is
        x_hat, rstd = standardize(x, mean, var, self.eps, scale)   # (N, C, *L), (1, C, 1...)
        gamma, beta = self._gamma_beta(x.dtype, shape)             # (1, C, 1...)
        y = x_hat * gamma + beta                                   # (N, C, *L)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var * scale ** 2, n)
        self._cache = (x_hat, rstd, batch_stats, in_dtype)
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstd, batch_stats, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # (N, C, *L)
        dx_hat = self._affine_backward(dy, x_hat)                  # (N, C, *L)  adds dgamma, dbeta
        dx = self._x_hat_backward(dx_hat, x_hat, rstd, batch_stats)  # (N, C, *L)
        return dx.astype(in_dtype, copy=False)

    def _affine_backward(self, dy: np.ndarray, x_hat: np.ndarray) -> np.ndarray:
        """The backward of the affine part y = gamma * x_hat + beta::

            dgamma = sum_B(dy * x_hat),   dbeta = sum_B(dy)     (C,)  added to .grad
            dx_hat = dy * gamma                                 (N, C, ...)  returned
        """
        B = (0,) + tuple(range(2, x_hat.ndim))                     # every axis but the channels
        dgamma = (dy * x_hat).sum(axis=B, dtype=np.float64)        # (C,)
        dbeta = dy.sum(axis=B, dtype=np.float64)                   # (C,)
        self._add_grads(dgamma, dbeta)
        gamma, _ = self._gamma_beta(x_hat.dtype, channel_shape(self.num_features, x_hat.ndim))
        return dy * gamma                                          # (N, C, *L)

    @staticmethod
    def _x_hat_backward(dx_hat: np.ndarray, x_hat: np.ndarray, rstd: np.ndarray,
                        batch_stats: bool) -> np.ndarray:
        """dL/dx from dL/dx_hat, x_hat = (x - mean) * rstd::

            the batch's statistics:   dx = rstd * (dx_hat - mean_B(dx_hat) - x_hat * mean_B(dx_hat * x_hat))
            constant statistics:      dx = rstd * dx_hat       (the running ones, in evaluation)
        """
        if not batch_stats:
            return rstd * dx_hat                                   # (N, C, *L)
        B = (0,) + tuple(range(2, x_hat.ndim))                     # every axis but the channels
        return standardize_backward(dx_hat, x_hat, rstd, B)        # (N, C, *L)


class BatchNorm1d(_BatchNorm):
    __doc__ = f"BatchNorm for (N, C) or (N, C, L) input; statistics over N (and L).\n\n{_BatchNorm.__doc__}"
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    __doc__ = f"BatchNorm for (N, C, H, W) input; statistics over N, H and W.\n\n{_BatchNorm.__doc__}"
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    __doc__ = f"BatchNorm for (N, C, D, H, W) input; statistics over N, D, H and W.\n\n{_BatchNorm.__doc__}"
    _dims = (5,)
