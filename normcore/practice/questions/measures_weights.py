"""The numbers bank_weights.toml quotes, each computed by normcore's layers at small size.

Every function takes no argument, returns one number, is deterministic (fixed seeds) and runs
in well under a second on one core. They measure the weight side and BatchNorm's small-batch
fixes on one batch, from the layers' own forward and backward: WeightNorm's gradient, Weight
Standardization (``WSLinear``), Batch Renormalization's r and d (``BatchRenorm1d``), Ghost
BatchNorm (``GhostBatchNorm1d``), and a residual branch scaled by ``ReZero`` or ``LayerScale``
(with the no_norm experiment's network at initialisation). What training does is the
experiments' (README: grad_weight, small_batches, no_norm); the answers say it in words.
"""

import numpy as np

from ... import nn, norms
from ...module import Sequential
from ...experiments.no_norm import LAYERSCALE_INIT, stream_growth


def _rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- WeightNorm

def _weight_norm_case(v_scale=1.0):
    """A WeightNorm(Linear(6, 3)) whose v is multiplied by ``v_scale`` (w unchanged), after one
    forward and backward with a random upstream gradient: (layer, dw = dL/dw)."""
    rng = _rng(31)
    layer = nn.WeightNorm(nn.Linear(6, 3, rng=1))
    layer.weight_v.data *= v_scale
    x, dy = rng.standard_normal((5, 6)), rng.standard_normal((5, 3))
    layer(x)
    layer.backward(dy)
    return layer, dy.T @ x  # (3, 6): dL/dw of y = x @ w.T + b


def _row_cosines(a, b):
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def wn_grad_v_cosine():
    """Largest |cos(dL/dv, v)| over the rows: the gradient is orthogonal to v."""
    layer, _ = _weight_norm_case()
    return float(np.abs(_row_cosines(layer.weight_v.grad, layer.weight_v.data)).max())


def wn_unprojected_cosine():
    """Largest |cos((g / ||v||) dL/dw, v)|: the gradient with the projection dropped has a part
    along v."""
    layer, dw = _weight_norm_case()
    return float(np.abs(_row_cosines(dw, layer.weight_v.data)).max())


def wn_grad_shrink_v_times_3():
    """How many times smaller dL/dv gets when v is multiplied by 3 (w, and the loss, unchanged)."""
    small, _ = _weight_norm_case(1.0)
    large, _ = _weight_norm_case(3.0)
    return float(np.linalg.norm(small.weight_v.grad) / np.linalg.norm(large.weight_v.grad))


def wn_sgd_norm_growth_ratio():
    """After one SGD step v - lr dL/dv (lr 0.5): the growth of ||v||^2 over lr^2 ||dL/dv||^2,
    1 by Pythagoras, since the step is orthogonal to v."""
    layer, _ = _weight_norm_case()
    v, dv, lr = layer.weight_v.data, layer.weight_v.grad, 0.5
    growth = np.sum((v - lr * dv) ** 2) - np.sum(v ** 2)
    return float(growth / (lr ** 2 * np.sum(dv ** 2)))


# ---------------------------------------------------------------- Weight Standardization

def _ws_layer():
    return nn.WSLinear(16, 8, bias=False, rng=2)


def ws_input_scale_factor():
    """How many times WSLinear's output grows when its input is multiplied by 10: the weight is
    standardised, the activations are not."""
    rng, layer = _rng(33), _ws_layer()
    x = rng.standard_normal((4, 16))
    return float(np.linalg.norm(layer(10.0 * x)) / np.linalg.norm(layer(x)))


def _other_samples_change(norm):
    """Largest change of sample 0's output of WSLinear -> ``norm`` when the other sample of a
    batch of 2 is replaced."""
    rng, layer = _rng(34), _ws_layer()
    x = rng.standard_normal((2, 16))
    other = x.copy()
    other[1] = 3.0 * rng.standard_normal(16)
    return float(np.abs(norm(layer(other))[0] - norm(layer(x))[0]).max())


def ws_gn_batch_change():
    """WSLinear -> GroupNorm(4 groups): sample 0's output does not depend on the other sample."""
    return _other_samples_change(norms.GroupNorm(4, 8))


def ws_bn_batch_change():
    """WSLinear -> BatchNorm1d in training, batch 2: sample 0's output moves with the other one."""
    return _other_samples_change(norms.BatchNorm1d(8))


# ---------------------------------------------------------------- Batch Renormalization

def _renorm_case():
    """A BatchRenorm1d(4) whose running statistics are off from the batch's but within the
    clips (r in [1/3, 3], d in [-5, 5]), one training forward and backward on 6 samples; and a
    BatchNorm1d in evaluation mode with the same running statistics (what r and d aim at).
    Returns (the renorm's y, dx, r), (the evaluation BatchNorm's y, dx), and BatchNorm's dx in
    training, for the same x and dy."""
    rng = _rng(35)
    x = 2.0 + 1.5 * rng.standard_normal((6, 4))
    dy = rng.standard_normal((6, 4))
    running = {"running_mean": np.full(4, 1.6), "running_var": np.full(4, 3.2)}
    renorm, bn_eval, bn_train = norms.BatchRenorm1d(4), norms.BatchNorm1d(4).eval(), norms.BatchNorm1d(4)
    for layer in (renorm, bn_eval):
        layer.running_mean[...], layer.running_var[...] = running["running_mean"], running["running_var"]
    r = np.sqrt(x.var(axis=0) + renorm.eps) / np.sqrt(renorm.running_var + renorm.eps)  # (4,)
    y = renorm(x)
    out = (y, renorm.backward(dy), r), (bn_eval(x), bn_eval.backward(dy))
    bn_train(x)
    return out + (bn_train.backward(dy),)


def renorm_train_eval_gap():
    """Largest |Batch Renorm's training output - BatchNorm's evaluation output| (same running
    statistics, r and d within their clips): x_hat r + d is (x - running_mean) / sigma."""
    (y, _, _), (y_eval, _), _ = _renorm_case()
    return float(np.abs(y - y_eval).max())


def renorm_dx_batch_sum():
    """Largest |sum over the batch| of Batch Renorm's input gradient, per channel: 0, as
    BatchNorm's (r and d held constant, the batch statistics still differentiated)."""
    (_, dx, _), _, _ = _renorm_case()
    return float(np.abs(dx.sum(axis=0)).max())


def through_rd_dx_batch_sum():
    """The same for the gradient differentiated through r and d: the evaluation-mode gradient,
    which does not sum to 0."""
    _, (_, dx_eval), _ = _renorm_case()
    return float(np.abs(dx_eval.sum(axis=0)).max())


def renorm_dx_vs_bn_times_r():
    """Largest |Batch Renorm's dx - r times BatchNorm's training dx|: the stop-gradient leaves
    BatchNorm's backward, scaled by r."""
    (_, dx, r), _, dx_bn = _renorm_case()
    return float(np.abs(dx - r * dx_bn).max())


# ---------------------------------------------------------------- Ghost BatchNorm

def _ghost_case(change):
    """Largest change of sample 0's output of GhostBatchNorm1d(virtual batches of 8) on 32
    samples when samples ``change`` are replaced."""
    rng = _rng(36)
    x = rng.standard_normal((32, 4))
    other = x.copy()
    other[change] = 3.0 * rng.standard_normal((len(range(32)[change]), 4))
    ghost = norms.GhostBatchNorm1d(4, virtual_batch_size=8)
    return float(np.abs(ghost(other)[0] - ghost(x)[0]).max())


def ghost_own_chunk_change():
    """Samples 1-7 (sample 0's virtual batch) replaced."""
    return _ghost_case(slice(1, 8))


def ghost_other_chunks_change():
    """Samples 8-31 (the other virtual batches) replaced: no change."""
    return _ghost_case(slice(8, 32))


def ghost_two_sample_output_gap():
    """Largest ||y| - 1| of GhostBatchNorm1d with virtual batches of 2 (no affine): every output
    is +-1, each feature reduced to which of the two samples is larger."""
    x = _rng(37).standard_normal((32, 4))
    y = norms.GhostBatchNorm1d(4, virtual_batch_size=2, affine=False, eps=1e-10)(x)
    return float(np.abs(np.abs(y) - 1.0).max())


# ---------------------------------------------------------------- ReZero and LayerScale

def _rezero_branch_grads(alpha=0.0):
    """One residual block y = x + alpha F(x), F = Linear -> ReLU -> Linear (width 16), ReZero's
    alpha at ``alpha``, after a forward and backward with a random dy: (the largest |gradient|
    of F's second weight, alpha's gradient)."""
    rng = _rng(38)
    branch = Sequential(nn.Linear(16, 16, rng=3), nn.ReLU(), nn.Linear(16, 16, rng=4))
    rezero = nn.ReZero(init=alpha)
    x, dy = rng.standard_normal((2, 8, 16))
    rezero(branch(x))
    branch.backward(rezero.backward(dy))
    return float(np.abs(branch[2].weight.grad).max()), float(rezero.alpha.grad[0])


def rezero_branch_grad():
    """ReZero at alpha = 0: the branch's weights get a gradient of exactly 0."""
    return _rezero_branch_grads()[0]


def rezero_alpha_grad():
    """... while alpha's gradient, sum(dy * F(x)), is not 0."""
    return abs(_rezero_branch_grads()[1])


REZERO_LR = 0.01  # the learning rate of the one SGD step on alpha


def rezero_lr():
    """The learning rate of that step."""
    return REZERO_LR


def rezero_alpha_after_step():
    """alpha after one SGD step from 0: -lr times its gradient."""
    return -REZERO_LR * _rezero_branch_grads()[1]


def rezero_branch_grad_after_step():
    """The branch's weight gradient (largest |.|) once alpha has taken that step."""
    return _rezero_branch_grads(rezero_alpha_after_step())[0]


def _no_norm_growth(variant):
    """The no_norm experiment's 16-block residual MLP at initialisation: RMS of the stream
    leaving the last block over the RMS entering the first (seed 0)."""
    return stream_growth(variant, 16, 0, _rng(39).standard_normal((64, 20)))


def rezero_stream_growth_16():
    """ReZero: every block the identity at initialisation, growth 1."""
    return _no_norm_growth("rezero")


def layerscale_init():
    """The initial gamma of the no_norm experiment's LayerScale."""
    return LAYERSCALE_INIT


def layerscale_stream_growth_16():
    """LayerScale at 0.1 (the no_norm experiment's init)."""
    return _no_norm_growth("layerscale")


def plain_stream_growth_16():
    """Neither norm nor scale: the branches' outputs add up."""
    return _no_norm_growth("plain")


def pre_ln_stream_growth_16():
    """Pre-LN: the stream grows too, but the branches see it normalised."""
    return _no_norm_growth("pre_ln")
