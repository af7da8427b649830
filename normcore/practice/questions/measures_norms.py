"""The numbers bank_norms.toml quotes, each computed with normcore (fixed seeds, small sizes).

Each function takes no argument and returns one number; the bank names it in a
``[[question.number]]`` with the format that gives the text the answer quotes.
"""

import numpy as np

import normcore as nc
import normcore.distributed as ncd

SCORES = np.array([[90.0, 80.0, 70.0],    # W4's table: student A's Chinese, maths, English
                   [60.0, 50.0, 40.0]])   # student B


def _rng(seed):
    return np.random.default_rng(seed)


# --- BatchNorm against LayerNorm -------------------------------------------------------------
def scores_bn_mean_chinese():
    """BatchNorm's mean of the first subject (Chinese) over the two students."""
    return float(SCORES.mean(axis=0)[0])


def scores_ln_mean_student_a():
    """LayerNorm's mean of student A over the three subjects."""
    return float(SCORES.mean(axis=1)[0])


def _batchmate_shift(layer):
    """How far (largest |change|) one sample's training-mode output moves when the other seven
    samples of its batch of 8 are replaced."""
    rng = _rng(1)
    x = rng.normal(2.0, 3.0, size=(8, 16))
    other = x.copy()
    other[1:] = rng.normal(2.0, 3.0, size=(7, 16))
    return float(np.abs(layer(x)[0] - layer(other)[0]).max())


def bn_batchmate_shift():
    return _batchmate_shift(nc.BatchNorm1d(16))


def ln_batchmate_shift():
    return _batchmate_shift(nc.LayerNorm(16))


def ln_train_eval_gap():
    """LayerNorm's largest train-mode vs eval-mode output difference: none."""
    ln, x = nc.LayerNorm(16), _rng(2).normal(size=(8, 16))
    return float(np.abs(ln.train()(x) - ln.eval()(x)).max())


# --- BatchNorm in training and in inference ----------------------------------------------------
def _bn_trained(momentum=0.1, seed=3, steps=100, batch=32, std=2.0, channels=1):
    """A BatchNorm1d trained on batches from N(1, std^2): its running statistics gathered."""
    rng = _rng(seed)
    bn = nc.BatchNorm1d(channels, momentum=momentum)
    for _ in range(steps):
        bn(rng.normal(1.0, std, size=(batch, channels)))
    return bn


def bn_train_eval_gap_batch4():
    """The mean |train-mode output - eval-mode output| of the same batch of 4, after 100
    training batches of 32: the batch's own statistics are not the running ones."""
    bn = _bn_trained()
    x = _rng(4).normal(1.0, 2.0, size=(4, 1))
    return float(np.abs(bn.train()(x) - bn.eval()(x)).mean())


def bn_eval_alone_gap():
    """In eval mode, a sample's output alone vs inside a batch of 8: the largest difference."""
    bn = _bn_trained(channels=3).eval()
    batch = _rng(5).normal(1.0, 2.0, size=(8, 3))
    return float(np.abs(bn(batch[:1]) - bn(batch)[:1]).max())


def one_sample_x_hat():
    """x_hat of a batch of one sample: 0, whatever the sample (0 / sqrt(eps))."""
    one, eps = np.array([[7.3]]), nc.BatchNorm1d(1).eps
    return float(np.abs((one - one.mean(axis=0)) / np.sqrt(one.var(axis=0) + eps)).max())


def worst_x_hat_batch8():
    """The largest |x_hat| over 200 heavy-tailed batches of 8 (it never exceeds sqrt(7))."""
    rng = _rng(11)
    return float(max(np.abs(nc.BatchNorm1d(1, eps=1e-12)(rng.standard_cauchy((8, 1)))).max()
                     for _ in range(200)))


def sqrt_7():
    return float(np.sqrt(7))


# --- momentum ---------------------------------------------------------------------------------
def default_momentum():
    """normcore's (PyTorch's) default momentum: the weight of the new batch."""
    return nc.BatchNorm1d(1).momentum


def keras_decay_of_default():
    """The same running average in the decay convention: the weight of the old value."""
    return 1 - nc.BatchNorm1d(1).momentum


def flipped_momentum_ratio():
    """After one batch, W3's running mean (0.1 * running + 0.9 * batch) over normcore's."""
    x = _rng(4).normal(3.0, 2.0, size=(32, 3))
    bn = nc.BatchNorm1d(3, momentum=0.1)
    bn(x)
    flipped = 0.1 * np.zeros(3) + 0.9 * x.mean(axis=0)
    return float(np.mean(flipped / bn.running_mean))


def _running_mean_noise(momentum):
    rng = _rng(5)
    bn = nc.BatchNorm1d(200, momentum=momentum)  # 200 channels: 200 independent runs
    for _ in range(400):
        bn(rng.normal(3.0, 2.0, size=(16, 200)))
    return bn.running_mean.std()


MOMENTA = (0.1, 0.01)  # running_noise_ratio compares these two (decay 0.9 and 0.99)


def running_noise_ratio():
    """Running-mean noise with the first of MOMENTA over that with the second."""
    return float(_running_mean_noise(MOMENTA[0]) / _running_mean_noise(MOMENTA[1]))


# --- variance: biased and unbiased ----------------------------------------------------------
def _running_var_batches_of_4():
    rng = _rng(6)
    bn = nc.BatchNorm1d(1, momentum=None)  # the exact average of every batch
    biased = []
    for _ in range(2000):
        b = rng.normal(0.0, 2.0, size=(4, 1))
        bn(b)
        biased.append(b.var())
    return float(bn.running_var[0]), float(np.mean(biased))


def running_var_unbiased_batch4():
    """running_var after 2000 batches of 4 from N(0, 4): the unbiased estimate, near 4."""
    return _running_var_batches_of_4()[0]


def running_var_biased_batch4():
    """The average biased batch variance of the same batches: near 3/4 of 4."""
    return _running_var_batches_of_4()[1]


def torch_var_ln_ratio():
    """A LayerNorm written with the unbiased variance (torch.var's default) over D = 8, divided
    by the real one: sqrt(7/8) on every entry."""
    x = _rng(7).normal(size=(4, 8))
    right = nc.LayerNorm(8, elementwise_affine=False, eps=0.0)(x)
    mu = x.mean(axis=1, keepdims=True)
    unbiased = (x - mu) / np.sqrt(x.var(axis=1, ddof=1, keepdims=True))
    return float(np.mean(unbiased / right))


def squared_running_var_std():
    """The spread of eval outputs when running_var is squared (W4), data of variance 4."""
    bn = _bn_trained(momentum=None, seed=8, steps=200)
    test = _rng(9).normal(1.0, 2.0, size=(5000, 1))
    return float(((test - bn.running_mean) / np.sqrt(bn.running_var ** 2 + bn.eps)).std())


def right_running_var_std():
    bn = _bn_trained(momentum=None, seed=8, steps=200).eval()
    return float(bn(_rng(9).normal(1.0, 2.0, size=(5000, 1))).std())


# --- gamma and beta ---------------------------------------------------------------------------
def identity_recovery_error():
    """BatchNorm with gamma = sqrt(var + eps) and beta = the batch mean gives back its input:
    the largest |y - x| (rounding only)."""
    x = _rng(10).normal(3.0, 2.0, size=(16, 4))
    bn = nc.BatchNorm1d(4)
    bn.gamma.data[...] = np.sqrt(x.var(axis=0) + bn.eps)
    bn.beta.data[...] = x.mean(axis=0)
    return float(np.abs(bn(x) - x).max())


def sigmoid_linear_fraction():
    """The share of sigmoid(x_hat)'s variance a straight line explains, x_hat ~ N(0, 1) (the
    sigmoid after a norm without gamma and beta is nearly linear)."""
    z = _rng(12).standard_normal(100_000)
    s = 1 / (1 + np.exp(-z))
    return float(np.corrcoef(z, s)[0, 1] ** 2 * 100)


# --- eps --------------------------------------------------------------------------------------
SMALL_STD = 1e-3  # the features of the eps measures: a variance (1e-6) below eps (1e-5)


def _eps_outputs(std):
    x = _rng(13).normal(0.0, std, size=(4, 64))
    eps = 1e-5
    mu, var = x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True)
    inside = nc.LayerNorm(64, elementwise_affine=False, eps=eps)(x)
    outside = (x - mu) / (np.sqrt(var) + eps)
    return inside.std(), outside.std()


def eps_inside_std_small():
    """The output std of LayerNorm (eps inside the root) on features of std 0.001."""
    return float(_eps_outputs(SMALL_STD)[0])


def eps_outside_std_small():
    """The same with sigma + eps (eps outside the root) on features of std 0.001."""
    return float(_eps_outputs(SMALL_STD)[1])


def eps_constant_input_output():
    """LayerNorm of a constant row: 0 / sqrt(0 + eps) = 0, no division by zero."""
    return float(np.abs(nc.LayerNorm(8)(np.full((1, 8), 3.0))).max())


# --- the bias before BatchNorm ----------------------------------------------------------------
def bias_before_bn_output_change():
    """Linear -> BatchNorm (training): the largest change in the output when the Linear's bias
    is set to random values (it cancels in x - mean)."""
    rng = _rng(14)
    x = rng.normal(size=(16, 8))
    lin, bn = nc.Linear(8, 4, rng=rng), nc.BatchNorm1d(4)
    before = bn(lin(x))
    lin.bias.data[...] = rng.normal(0.0, 5.0, size=4)
    return float(np.abs(bn(lin(x)) - before).max())


def bias_before_bn_gradient():
    """The largest |dL/db| of a Linear's bias under a BatchNorm in training (zero up to
    rounding)."""
    rng = _rng(15)
    x = rng.normal(size=(16, 8))
    lin, bn = nc.Linear(8, 4, rng=rng), nc.BatchNorm1d(4)
    bn(lin(x))
    lin.zero_grad()
    lin.backward(bn.backward(rng.normal(size=(16, 4))))
    return float(np.abs(lin.bias.grad).max())


# --- small batches ----------------------------------------------------------------------------
def batch_mean_error(b):
    """The mean |error| of a batch mean of b samples from N(0, 1), over 2000 batches."""
    return float(np.abs(_rng(12).standard_normal((2000, b)).mean(axis=1)).mean())


def batch_mean_error_2():
    return batch_mean_error(2)


def batch_mean_error_128():
    return batch_mean_error(128)


def groupnorm_batchmate_shift():
    """GroupNorm's output for one sample when the rest of the batch changes: unchanged."""
    rng = _rng(16)
    gn = nc.GroupNorm(4, 16)
    x = rng.normal(size=(2, 16, 5))
    other = x.copy()
    other[1] = rng.normal(size=(16, 5))
    return float(np.abs(gn(x)[0] - gn(other)[0]).max())


def _shards():
    return [_rng(17 + k).normal(2.0, 3.0, size=(2, 3)) for k in range(4)]


def sync_bn_vs_full_batch():
    """SyncBatchNorm over 4 workers of 2 samples against BatchNorm on the 8 together."""
    shards = _shards()
    group = ncd.InProcessGroup(4)
    bns = [ncd.SyncBatchNorm(3, process_group=w) for w in group.workers]
    ys = group.run(lambda w, x: bns[w.rank](x), shards)
    return float(np.abs(np.concatenate(ys) - nc.BatchNorm1d(3)(np.concatenate(shards))).max())


def local_bn_vs_full_batch():
    """Each worker's own BatchNorm on its 2 samples against BatchNorm on the 8 together."""
    shards = _shards()
    local = np.concatenate([nc.BatchNorm1d(3)(x) for x in shards])
    return float(np.abs(local - nc.BatchNorm1d(3)(np.concatenate(shards))).max())


def _recalibration_case():
    """A BatchNorm whose input drifted during training (the mean moved from 0 to 3 over 50
    batches): its running mean lags; recalibrated on the final data, it does not."""
    rng = _rng(18)
    bn = nc.BatchNorm1d(1, momentum=0.1)
    for step in range(50):
        bn(rng.normal(3.0 * step / 49, 1.0, size=(16, 1)))
    final = [rng.normal(3.0, 1.0, size=(16, 1)) for _ in range(20)]
    lag = abs(bn.running_mean[0] - 3.0)
    nc.recalibrate_batchnorm(bn, final)
    return lag, abs(bn.running_mean[0] - np.concatenate(final).mean())


def running_mean_lag():
    return float(_recalibration_case()[0])


def recalibrated_error():
    return float(_recalibration_case()[1])


# --- folding ----------------------------------------------------------------------------------
def _trained_linear_bn(rng):
    lin, bn = nc.Linear(8, 4, rng=rng), nc.BatchNorm1d(4)
    bn.gamma.data[...], bn.beta.data[...] = rng.normal(size=4), rng.normal(size=4)
    for _ in range(20):
        bn(lin(rng.normal(1.0, 2.0, size=(32, 8))))
    return lin, bn.eval()


def fold_bn_error():
    """fold_batchnorm(linear, bn) against linear then bn in eval: the largest difference."""
    rng = _rng(19)
    lin, bn = _trained_linear_bn(rng)
    x = rng.normal(size=(16, 8))
    return float(np.abs(nc.fold_batchnorm(lin, bn)(x) - bn(lin(x))).max())


def fold_ln_affine_error():
    """LayerNorm's gamma and beta folded into the next Linear (fold_norm_affine): the largest
    difference from LayerNorm then Linear."""
    rng = _rng(20)
    ln, lin = nc.LayerNorm(8), nc.Linear(8, 4, rng=rng)
    ln.gamma.data[...], ln.beta.data[...] = rng.normal(size=8), rng.normal(size=8)
    x = rng.normal(size=(16, 8))
    plain = nc.LayerNorm(8, elementwise_affine=False)
    return float(np.abs(nc.fold_norm_affine(ln, lin)(plain(x)) - lin(ln(x))).max())


def ln_divisor_spread():
    """Over 16 input rows, the largest of LayerNorm's divisors sqrt(var + eps) over the
    smallest: it changes with every input, so no fixed weight can stand in for it."""
    x = _rng(21).normal(0.0, 1.0, size=(16, 8))
    divisor = np.sqrt(x.var(axis=1) + nc.LayerNorm(8).eps)
    return float(divisor.max() / divisor.min())


# --- RMSNorm ----------------------------------------------------------------------------------
def _rms_vs_ln(shift):
    x = _rng(22).normal(shift, 1.0, size=(4, 64))
    x = x - x.mean(axis=1, keepdims=True) + shift  # each row's mean exactly `shift`
    ln = nc.LayerNorm(64, elementwise_affine=False)
    rms = nc.RMSNorm(64, eps=1e-5, elementwise_affine=False)
    return float(np.abs(ln(x) - rms(x)).max()), float(rms(x).mean())


def rms_ln_gap_zero_mean():
    """RMSNorm against LayerNorm on rows of mean exactly 0: they agree up to rounding."""
    return _rms_vs_ln(0.0)[0]


def rms_output_mean_shifted():
    """RMSNorm's output mean on rows of mean 3 and std 1: it keeps most of the shift."""
    return _rms_vs_ln(3.0)[1]


def rms_params_512():
    return sum(p.data.size for p in nc.RMSNorm(512).parameters())


def ln_params_512():
    return sum(p.data.size for p in nc.LayerNorm(512).parameters())


def mean_square_shifted():
    """The mean square of rows of mean 3 and variance 1: 10, not the variance."""
    x = _rng(23).normal(size=(1, 10_000))
    x = (x - x.mean()) / x.std() + 3.0
    return float(np.mean(x ** 2))


# --- GroupNorm and InstanceNorm ----------------------------------------------------------------
def groupnorm_one_group_vs_layernorm():
    """GroupNorm(1, C) against LayerNorm over (C, L), without affine parameters."""
    x = _rng(24).normal(size=(2, 6, 5))
    gn = nc.GroupNorm(1, 6, affine=False)
    ln = nc.LayerNorm((6, 5), elementwise_affine=False)
    return float(np.abs(gn(x) - ln(x)).max())


def groupnorm_c_groups_vs_instancenorm():
    """GroupNorm(C, C) against InstanceNorm1d(C), without affine parameters."""
    x = _rng(25).normal(size=(2, 6, 5))
    return float(np.abs(nc.GroupNorm(6, 6, affine=False)(x) - nc.InstanceNorm1d(6)(x)).max())


# --- the running statistics are not parameters ------------------------------------------------
def bn_parameter_count():
    """BatchNorm1d(64)'s learned parameters: gamma and beta, 2 * 64."""
    return sum(p.data.size for p in nc.BatchNorm1d(64).parameters())


def bn_state_count():
    """BatchNorm1d(64)'s state dict entries' sizes: weight, bias, running_mean, running_var and
    num_batches_tracked."""
    return sum(np.size(v) for v in nc.BatchNorm1d(64).state_dict().values())


def backward_changes_running():
    """1 if a backward changed the running statistics, else 0."""
    rng = _rng(9)
    bn = nc.BatchNorm1d(3)
    bn(rng.standard_normal((8, 3)))
    before = bn.running_mean.copy(), bn.running_var.copy()
    bn.backward(rng.standard_normal((8, 3)))
    return int(not (np.array_equal(before[0], bn.running_mean)
                    and np.array_equal(before[1], bn.running_var)))


# --- scale invariance -------------------------------------------------------------------------
def scale_invariance_output_change():
    """Linear -> BatchNorm (training): the largest output change when the weights are x10."""
    rng = _rng(26)
    x = rng.normal(size=(16, 8))
    lin, bn = nc.Linear(8, 4, bias=False, rng=rng), nc.BatchNorm1d(4)
    before = bn(lin(x))
    lin.weight.data *= 10
    return float(np.abs(bn(lin(x)) - before).max())


def scale_invariance_gradient_ratio():
    """The weight gradient's norm with the weights x10, over it at x1: 1/10."""
    rng = _rng(27)
    x, dy = rng.normal(size=(16, 8)), rng.normal(size=(16, 4))
    lin, bn = nc.Linear(8, 4, bias=False, rng=rng), nc.BatchNorm1d(4)

    def grad_norm():
        lin.zero_grad()
        bn(lin(x))
        lin.backward(bn.backward(dy))
        return np.linalg.norm(lin.weight.grad)

    g1 = grad_norm()
    lin.weight.data *= 10
    return float(grad_norm() / g1)


# --- testing a hand-written BatchNorm ---------------------------------------------------------
def _writeup_bn_gaps():
    """W3's BatchNorm rule (momentum flipped, biased running variance) in NumPy against
    normcore's BatchNorm1d: the largest training-mode and eval-mode output differences after
    one training batch of 4."""
    rng = _rng(7)
    x = rng.normal(3.0, 2.0, size=(4, 3))
    ref, m, eps = nc.BatchNorm1d(3), 0.1, 1e-5
    mean, var = x.mean(axis=0), x.var(axis=0)
    train_gap = np.abs((x - mean) / np.sqrt(var + eps) - ref(x)).max()
    running_mean, running_var = (1 - m) * mean, m * 1.0 + (1 - m) * var
    test = rng.normal(3.0, 2.0, size=(5, 3))
    mine = (test - running_mean) / np.sqrt(running_var + eps)
    return float(train_gap), float(np.abs(mine - ref.eval()(test)).max())


def writeup_bn_train_gap():
    return _writeup_bn_gaps()[0]


def writeup_bn_eval_gap():
    return _writeup_bn_gaps()[1]


def small_momentum():
    """The smaller momentum running_noise_ratio compares with (a setting of the measure)."""
    return MOMENTA[1]


def small_feature_std():
    """The features' standard deviation the eps measures use (a setting of the measure)."""
    return SMALL_STD
