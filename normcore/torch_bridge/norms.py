"""The norms' twins: LayerNorm, RMSNorm, BatchNorm, InstanceNorm, GroupNorm, DyT, Batch Renorm
and Ghost BatchNorm.

torch has each of them but DyT, Batch Renorm and Ghost BatchNorm under the same name and
arguments, so the converters are one call each; DyT gets a small torch module, ``dyt_twin()``,
and Batch Renorm and Ghost BatchNorm subclasses of torch's BatchNorm1d and BatchNorm2d,
``batch_variant_twins()``, which keep BatchNorm's arguments, state dict and evaluation.
``from_torch`` builds the normcore norm from torch's with the same arguments.
"""

import functools

from .. import norms
from ..norms.batchrenorm import clip_limits
from .core import _torch, builds_from_torch, converts


@converts(norms.LayerNorm)
def _layernorm(m, sub):
    return _torch().nn.LayerNorm(m.normalized_shape, m.eps, m.elementwise_affine,
                                 bias=m.bias is not None)


@converts(norms.RMSNorm)
def _rmsnorm(m, sub):
    return _torch().nn.RMSNorm(m.normalized_shape, m.eps, m.elementwise_affine)


@converts(norms.DyT)
def _dyt(m, sub):
    return dyt_twin()(m.normalized_shape, m.alpha_init, m.weight is not None, m.bias is not None)


@functools.cache
def dyt_twin():
    """The torch module of DyT, built on first use (torch 2.13 has none)."""
    torch = _torch()

    class DyT(torch.nn.Module):
        """y = weight * tanh(alpha * x) + bias, as normcore.DyT (torch 2.13 has no DyT): alpha
        (1,), weight and bias of normalized_shape (None when absent), torch's autograd."""

        def __init__(self, normalized_shape, alpha_init, weight, bias):
            super().__init__()
            self.alpha = torch.nn.Parameter(torch.full((1,), float(alpha_init)))
            self.weight = torch.nn.Parameter(torch.ones(normalized_shape)) if weight else None
            self.bias = torch.nn.Parameter(torch.zeros(normalized_shape)) if bias else None

        def forward(self, x):
            t = torch.tanh(self.alpha * x)
            y = t if self.weight is None else self.weight * t
            return y if self.bias is None else y + self.bias

    return DyT


RUNNING_NORMS = ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")


def _running_norm(torch_name):
    """BatchNorm and InstanceNorm take the same arguments on both sides."""
    def convert(m, sub):
        return getattr(_torch().nn, torch_name)(m.num_features, m.eps, m.momentum, m.affine,
                                                m.track_running_stats, bias=m.bias is not None)
    return convert


for _name in RUNNING_NORMS:
    converts(getattr(norms, _name))(_running_norm(_name))


@converts(norms.GroupNorm)
def _groupnorm(m, sub):
    return _torch().nn.GroupNorm(m.num_groups, m.num_channels, m.eps, m.affine, bias=m.bias is not None)


def _batch_renorm(name):
    def convert(m, sub):
        return getattr(batch_variant_twins(), name)(m.num_features, m.r_max, m.d_max, m.eps, m.momentum,
                                                    m.affine, bias=m.bias is not None, warmup=m.warmup)
    return convert


def _ghost_batchnorm(name):
    def convert(m, sub):
        return getattr(batch_variant_twins(), name)(m.num_features, m.virtual_batch_size, m.eps, m.momentum,
                                                    m.affine, m.track_running_stats, bias=m.bias is not None)
    return convert


for _dims in ("1d", "2d"):
    converts(getattr(norms, f"BatchRenorm{_dims}"))(_batch_renorm(f"BatchRenorm{_dims}"))
    converts(getattr(norms, f"GhostBatchNorm{_dims}"))(_ghost_batchnorm(f"GhostBatchNorm{_dims}"))


@functools.cache
def batch_variant_twins():
    """torch modules of Batch Renorm and Ghost BatchNorm (torch 2.13 has neither): subclasses of
    torch's BatchNorm1d and BatchNorm2d, so that parameters, buffers, state dict and evaluation
    are BatchNorm's; only the training forward is written out."""
    torch = _torch()

    class BatchRenorm:
        """Batch Renorm's training forward, as normcore's (Ioffe 2017): the batch's x_hat
        corrected by r = clip(sigma_B / sigma, 1/r_max, r_max) and d = clip((mean_B -
        running_mean) / sigma, -d_max, d_max), sigma = sqrt(running_var + eps), both detached
        (no gradient flows through them); the running statistics then updated as BatchNorm's,
        with the raw batch statistics. r_max and d_max follow ``warmup`` (hold, r_steps,
        d_steps): 1 and 0 up to step ``hold``, then linear, the step num_batches_tracked before
        this batch. Evaluation: BatchNorm's."""

        def __init__(self, num_features, r_max, d_max, eps, momentum, affine, *, bias, warmup):
            super().__init__(num_features, eps, momentum, affine, True, bias=bias)
            self.r_max, self.d_max, self.warmup = r_max, d_max, warmup

        def limits(self):
            """(r_max, d_max) at this step: normcore's schedule (``clip_limits``), which its own
            tests pin down step by step; what the twin checks is the forward with r and d."""
            return clip_limits(self.r_max, self.d_max, self.warmup, int(self.num_batches_tracked))

        def forward(self, x):
            if not self.training:
                return super().forward(x)
            dims = [0, *range(2, x.dim())]                       # every axis but the channels
            shape = [1, -1] + [1] * (x.dim() - 2)                # (1, C, 1...)
            var, mean = torch.var_mean(x, dim=dims, keepdim=True, correction=0)
            sigma_b = torch.sqrt(var + self.eps)
            x_hat = (x - mean) / sigma_b
            r_max, d_max = self.limits()
            sigma = torch.sqrt(self.running_var.reshape(shape) + self.eps)
            r = torch.clamp(sigma_b / sigma, 1 / r_max, r_max).detach()  # the stop-gradient
            d = torch.clamp((mean - self.running_mean.reshape(shape)) / sigma, -d_max, d_max).detach()
            y = x_hat * r + d
            if self.weight is not None:
                y = y * self.weight.reshape(shape)
            if self.bias is not None:
                y = y + self.bias.reshape(shape)
            self._update(mean.detach().flatten(), var.detach().flatten(), x.numel() // x.shape[1])
            return y

        def _update(self, mean, var, n):
            """BatchNorm's update: running = (1 - m) running + m batch, the unbiased variance;
            momentum None: m = 1 / num_batches_tracked."""
            with torch.no_grad():
                self.num_batches_tracked += 1
                m = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
                self.running_mean.mul_(1 - m).add_(m * mean)
                self.running_var.mul_(1 - m).add_(m * var * n / (n - 1))

    class GhostBatchNorm:
        """Ghost BatchNorm, as normcore's: torch's own BatchNorm applied to each chunk of
        ``virtual_batch_size`` samples along N (``x.split``), one running-statistics update per
        chunk, in order. In evaluation with running statistics the chunks change nothing."""

        def __init__(self, num_features, virtual_batch_size, eps, momentum, affine, track_running_stats, *,
                     bias):
            super().__init__(num_features, eps, momentum, affine, track_running_stats, bias=bias)
            self.virtual_batch_size = virtual_batch_size

        def forward(self, x):
            batchnorm = super().forward                         # torch's, on one chunk
            return torch.cat([batchnorm(chunk) for chunk in x.split(self.virtual_batch_size)])

    twins = {}
    for name in ("BatchNorm1d", "BatchNorm2d"):
        for variant in (BatchRenorm, GhostBatchNorm):
            twin_name = variant.__name__ + name.removeprefix("BatchNorm")  # BatchRenorm1d, GhostBatchNorm2d
            twins[twin_name] = type(twin_name, (variant, getattr(torch.nn, name)), {"__doc__": variant.__doc__})
    return type("BatchVariantTwins", (), twins)


@builds_from_torch
def _from_torch(tnn):
    def running_norm(cls):
        return lambda t, sub: cls(t.num_features, t.eps, t.momentum, t.affine, t.track_running_stats,
                                  bias=t.bias is not None)

    def batch_renorm(cls):
        return lambda t, sub: cls(t.num_features, t.r_max, t.d_max, t.eps, t.momentum, t.affine,
                                  bias=t.bias is not None, warmup=t.warmup)

    def ghost_batchnorm(cls):
        return lambda t, sub: cls(t.num_features, t.virtual_batch_size, t.eps, t.momentum, t.affine,
                                  t.track_running_stats, bias=t.bias is not None)

    twins = batch_variant_twins()
    return {
        **{getattr(twins, f"BatchRenorm{d}"): batch_renorm(getattr(norms, f"BatchRenorm{d}")) for d in ("1d", "2d")},
        **{getattr(twins, f"GhostBatchNorm{d}"): ghost_batchnorm(getattr(norms, f"GhostBatchNorm{d}"))
           for d in ("1d", "2d")},
        tnn.LayerNorm: lambda t, sub: norms.LayerNorm(t.normalized_shape, t.eps, t.elementwise_affine,
                                                      bias=t.bias is not None),
        tnn.RMSNorm: lambda t, sub: norms.RMSNorm(t.normalized_shape, t.eps, t.elementwise_affine),
        **{getattr(tnn, name): running_norm(getattr(norms, name)) for name in RUNNING_NORMS},
        tnn.GroupNorm: lambda t, sub: norms.GroupNorm(t.num_groups, t.num_channels, t.eps, t.affine,
                                                      bias=t.bias is not None),
    }
