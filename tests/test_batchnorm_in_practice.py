"""BatchNorm after training: fold_batchnorm (exact, against linear -> bn.eval() and torch's fusion),
fold_norm_affine (a norm's gamma and beta into the next Linear, exact against norm -> linear and
torch's norms),
recalibrate_batchnorm (exact statistics of the concatenated batches, nothing else changed) and
freeze_batchnorm (evaluation mode that survives model.train(), gradients of the eval BatchNorm)."""

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import normcore as nc
import normcore.fast as fast

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def trained_bn(c, rng, affine=True, cls=nc.BatchNorm1d, dtype=np.float64):
    """A BatchNorm1d in evaluation mode with random running statistics, gamma and beta."""
    bn = cls(c, affine=affine, dtype=dtype, eps=float(rng.uniform(1e-5, 1e-1)))
    bn.running_mean[...] = rng.normal(0, 3, c)
    bn.running_var[...] = rng.uniform(0.1, 5, c)
    if affine:
        bn.weight.data[...] = rng.normal(0, 2, c)
        bn.bias.data[...] = rng.normal(0, 2, c)
    return bn.eval()


# --- fold_batchnorm ---------------------------------------------------------------------------
@settings(max_examples=60, **SETTINGS)
@given(n_in=st.integers(1, 7), n_out=st.integers(1, 7), bias=st.booleans(), affine=st.booleans(),
       rows=st.integers(0, 9), seed=st.integers(0, 2 ** 16))
def test_fold_equals_linear_then_bn_in_eval_to_1e_12(n_in, n_out, bias, affine, rows, seed):
    rng = np.random.default_rng(seed)
    linear = nc.Linear(n_in, n_out, bias=bias, init="torch", rng=rng)
    bn = trained_bn(n_out, rng, affine)
    x = rng.normal(size=(rows, n_in))
    expected = bn(linear(x))
    folded = nc.fold_batchnorm(linear, bn)
    y = folded(x)
    assert isinstance(folded, nc.Linear) and folded.bias is not None
    assert y.shape == expected.shape and y.dtype == np.float64
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(expected).max(initial=0)))


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 2e-2)])
def test_fold_keeps_the_linear_dtype(dtype, tol):
    rng = np.random.default_rng(1)
    linear = nc.Linear(6, 5, rng=rng, dtype=dtype)
    bn = trained_bn(5, rng, dtype=np.float64)
    folded = nc.fold_batchnorm(linear, bn)
    assert folded.weight.dtype == folded.bias.dtype == dtype
    x = rng.normal(size=(8, 6)).astype(dtype)
    expected = bn(linear(x).astype(np.float64))
    np.testing.assert_allclose(folded(x), expected, rtol=tol, atol=tol * np.abs(expected).max())


def test_fold_leaves_its_inputs_alone_and_shares_nothing():
    rng = np.random.default_rng(2)
    linear, bn = nc.Linear(4, 3, rng=rng), trained_bn(3, rng)
    before = {**{f"l.{k}": v for k, v in linear.state_dict().items()},
              **{f"b.{k}": v for k, v in bn.state_dict().items()}}
    folded = nc.fold_batchnorm(linear, bn)
    after = {**{f"l.{k}": v for k, v in linear.state_dict().items()},
             **{f"b.{k}": v for k, v in bn.state_dict().items()}}
    assert all(np.array_equal(before[k], after[k]) for k in before)
    theirs = [p.data for p in linear.parameters() + bn.parameters()] + [b for _, b in bn.named_buffers()]
    for mine in (folded.weight.data, folded.bias.data):
        assert not any(np.shares_memory(mine, a) for a in theirs)
    assert not bn.training


def test_fold_reads_a_missing_beta_as_zero_and_a_missing_gamma_as_one():
    rng = np.random.default_rng(3)
    linear, bn = nc.Linear(4, 3, rng=rng), trained_bn(3, rng)
    bn.bias = None  # a BatchNorm with a scale but no shift (bias=False)
    x = rng.normal(size=(5, 4))
    np.testing.assert_allclose(nc.fold_batchnorm(linear, bn)(x), bn(linear(x)), rtol=1e-12, atol=1e-12)


def test_fold_takes_the_fast_tier_batchnorm():
    rng = np.random.default_rng(4)
    linear, bn = nc.Linear(4, 3, rng=rng), trained_bn(3, rng, cls=fast.BatchNorm1d)
    x = rng.normal(size=(5, 4))
    np.testing.assert_allclose(nc.fold_batchnorm(linear, bn)(x), bn(linear(x)), rtol=1e-12, atol=1e-12)


def _folded_as_torch_fuses(linear, bn):
    """(torch's Linear, torch's BatchNorm1d, torch's fuse_linear_bn_eval of the two) with the
    weights of ``linear`` and ``bn``, after checking that ``fold_batchnorm`` gives torch's fused
    weight and bias."""
    torch = pytest.importorskip("torch", reason="torch is the oracle of this test and is not installed")
    fusion = pytest.importorskip("torch.nn.utils.fusion", reason="this torch has no fuse_linear_bn_eval")
    t_linear = torch.nn.Linear(linear.in_features, linear.out_features, bias=linear.bias is not None).double()
    t_bn = torch.nn.BatchNorm1d(bn.num_features, eps=bn.eps).double()
    t_linear.load_state_dict({k: torch.from_numpy(v) for k, v in linear.state_dict().items()})
    t_bn.load_state_dict({k: torch.from_numpy(v) for k, v in bn.state_dict().items()})
    t_linear.eval(), t_bn.eval()
    fused = fusion.fuse_linear_bn_eval(t_linear, t_bn)
    folded = nc.fold_batchnorm(linear, bn)
    np.testing.assert_allclose(folded.weight.data, fused.weight.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(folded.bias.data, fused.bias.detach().numpy(), rtol=1e-12, atol=1e-14)
    return t_linear, t_bn, folded


@pytest.mark.parametrize("bias", [True, False])
def test_fold_matches_torch_fuse_linear_bn_eval(bias):
    rng = np.random.default_rng(5)
    _folded_as_torch_fuses(nc.Linear(6, 4, bias=bias, rng=rng), trained_bn(4, rng))


@pytest.mark.parametrize("bias", [True, False])
def test_a_batchnorm_of_one_feature_folds_broadcast_over_every_output(bias):
    """BatchNorm1d(1) after Linear(4, 3) normalises the Linear's output laid out (N, 1, 3), one
    channel: its one scale and shift apply to every output feature, and the fold broadcasts
    them (as torch's fuse_linear_bn_eval). On (N, 3) the pair is no model, in torch as here."""
    rng = np.random.default_rng(7)
    linear, bn = nc.Linear(4, 3, bias=bias, rng=rng), trained_bn(1, rng)
    folded = nc.fold_batchnorm(linear, bn)
    x = rng.standard_normal((5, 1, 4))
    assert folded.weight.shape == (3, 4) and folded.bias.shape == (3,)
    np.testing.assert_allclose(folded(x), bn(linear(x)), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="1 channels"):
        bn(linear(x[:, 0]))


def test_a_batchnorm_of_one_feature_folds_as_torch_fuses_it():
    rng = np.random.default_rng(8)
    t_linear, t_bn, folded = _folded_as_torch_fuses(nc.Linear(4, 3, rng=rng), trained_bn(1, rng))
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((5, 1, 4))
    expected = t_bn(t_linear(torch.from_numpy(x))).detach().numpy()
    np.testing.assert_allclose(folded(x), expected, rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 1"):
        t_bn(t_linear(torch.from_numpy(x[:, 0])))


def test_fold_refuses_what_does_not_fold():
    rng = np.random.default_rng(6)
    linear = nc.Linear(4, 3, rng=rng)
    with pytest.raises(ValueError, match="training mode"):
        nc.fold_batchnorm(linear, nc.BatchNorm1d(3))
    with pytest.raises(ValueError, match="track_running_stats=False"):
        nc.fold_batchnorm(linear, nc.BatchNorm1d(3, track_running_stats=False).eval())
    with pytest.raises(ValueError, match="out_features=3 .* num_features=5; expected them equal, or num_features=1"):
        nc.fold_batchnorm(linear, trained_bn(5, rng))
    with pytest.raises(TypeError, match="LayerNorm cannot be folded.*per sample.*fold_norm_affine"):
        nc.fold_batchnorm(linear, nc.LayerNorm(3).eval())
    with pytest.raises(TypeError, match="RMSNorm cannot be folded"):
        nc.fold_batchnorm(linear, nc.RMSNorm(3).eval())
    with pytest.raises(TypeError, match="expects a BatchNorm1d"):
        nc.fold_batchnorm(linear, nc.BatchNorm2d(3).eval())
    with pytest.raises(TypeError, match="expects a Linear"):
        nc.fold_batchnorm(nc.ReLU(), trained_bn(3, rng))


# --- fold_norm_affine -------------------------------------------------------------------------
KINDS = ("layernorm", "layernorm-no-bias", "rmsnorm", "dyt", "groupnorm", "batchnorm-eval", "batchnorm-train")


def affine_norm(kind, n, rng, tier=nc, dtype=np.float64):
    """A norm of ``kind`` over n features with random gamma, beta (and DyT's alpha, BatchNorm's
    running statistics)."""
    if kind.startswith("layernorm"):
        norm = tier.LayerNorm(n, eps=1e-3, bias=kind == "layernorm", dtype=dtype)
    elif kind == "rmsnorm":
        norm = tier.RMSNorm(n, eps=1e-4, dtype=dtype)
    elif kind == "dyt":
        norm = nc.DyT(n, alpha_init=float(rng.uniform(0.2, 2)), dtype=dtype)
    elif kind == "groupnorm":
        norm = tier.GroupNorm(next(g for g in (3, 2, 1) if n % g == 0), n, dtype=dtype)
    else:
        norm = trained_bn(n, rng, cls=tier.BatchNorm1d, dtype=dtype)
        norm.train(kind == "batchnorm-train")
    for p in norm.parameters():
        if p is not getattr(norm, "alpha", None):
            p.data[...] = rng.normal(0, 2, p.shape)
    return norm


def bare(norm):
    """The same norm without its affine, built as fold_norm_affine's docstring says."""
    n = nc.nn.batchnorm_in_practice._features(norm)
    if isinstance(norm, nc.LayerNorm):
        return nc.LayerNorm(n, eps=norm.eps, elementwise_affine=False)
    if isinstance(norm, nc.RMSNorm):
        return nc.RMSNorm(n, eps=norm.eps, elementwise_affine=False)
    if isinstance(norm, nc.DyT):
        return nc.DyT(n, alpha_init=float(norm.alpha.data[0]), elementwise_affine=False)
    if isinstance(norm, nc.GroupNorm):
        return nc.GroupNorm(norm.num_groups, n, eps=norm.eps, affine=False)
    bn = nc.BatchNorm1d(n, eps=norm.eps, momentum=norm.momentum, affine=False)
    bn.load_state_dict({k: v for k, v in norm.state_dict().items() if k not in ("weight", "bias")})
    return bn.train(norm.training)


def assert_close(y, expected, tol=1e-12):
    np.testing.assert_allclose(y, expected, rtol=tol, atol=tol * max(1.0, np.abs(expected).max(initial=0)))


@settings(max_examples=80, **SETTINGS)
@given(kind=st.sampled_from(KINDS), fast_tier=st.booleans(), n_in=st.integers(1, 7), n_out=st.integers(1, 7),
       bias=st.booleans(), lead=st.sampled_from([(2,), (5,), (2, 3), (3, 1, 2)]),
       layout=st.sampled_from(["C", "F", "strided"]), seed=st.integers(0, 2 ** 16))
def test_fold_norm_affine_equals_norm_then_linear_to_1e_12(kind, fast_tier, n_in, n_out, bias, lead, layout, seed):
    rng = np.random.default_rng(seed)
    tier = fast if fast_tier and kind not in ("dyt",) else nc
    if kind in ("groupnorm", "batchnorm-eval", "batchnorm-train"):
        lead = lead[:1]                                     # a Linear reads their channels only in (N, C)
    norm, linear = affine_norm(kind, n_in, rng, tier), nc.Linear(n_in, n_out, bias=bias, init="torch", rng=rng)
    x = rng.normal(0, 3, size=lead + (2 * n_in,))
    x = {"C": x[..., :n_in], "F": np.asfortranarray(x[..., :n_in]), "strided": x[..., ::2]}[layout]
    expected = linear(norm(x))
    folded = nc.fold_norm_affine(norm, linear)
    y = folded(bare(norm)(x))
    assert isinstance(folded, nc.Linear) and (folded.bias is not None) == (bias or norm.bias is not None)
    assert y.shape == expected.shape and y.dtype == np.float64
    assert_close(y, expected)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 2e-2)])
@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_fold_norm_affine_keeps_the_dtype(kind, dtype, tol):
    rng = np.random.default_rng(11)
    norm, linear = affine_norm(kind, 6, rng, dtype=dtype), nc.Linear(6, 5, rng=rng, dtype=dtype)
    folded = nc.fold_norm_affine(norm, linear)
    assert folded.weight.dtype == folded.bias.dtype == dtype
    x = rng.normal(size=(8, 6)).astype(dtype)
    x_hat = bare(norm)(x.astype(np.float64))
    w, b = (p.data.astype(np.float64) for p in linear.parameters())
    gamma = norm.weight.data.astype(np.float64)
    beta = 0.0 if norm.bias is None else norm.bias.data.astype(np.float64)
    expected = (x_hat * gamma + beta) @ w.T + b
    np.testing.assert_allclose(folded(x_hat.astype(dtype)), expected, rtol=tol, atol=tol * np.abs(expected).max())


def test_fold_norm_affine_leaves_its_inputs_alone_and_shares_nothing():
    rng = np.random.default_rng(12)
    norm, linear = affine_norm("layernorm", 4, rng), nc.Linear(4, 3, rng=rng)
    before = {**{f"l.{k}": v for k, v in linear.state_dict().items()},
              **{f"n.{k}": v for k, v in norm.state_dict().items()}}
    folded = nc.fold_norm_affine(norm, linear)
    after = {**{f"l.{k}": v for k, v in linear.state_dict().items()},
             **{f"n.{k}": v for k, v in norm.state_dict().items()}}
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    theirs = [p.data for p in linear.parameters() + norm.parameters()]
    for mine in (folded.weight.data, folded.bias.data):
        assert not any(np.shares_memory(mine, a) for a in theirs)
    folded.weight.data[...] = 0  # the result is the caller's to change
    assert np.array_equal(linear.weight.data, before["l.weight"])


def test_fold_norm_affine_of_a_bias_free_pair_stays_bias_free_and_scales_columns():
    rng = np.random.default_rng(13)
    norm, linear = affine_norm("rmsnorm", 4, rng), nc.Linear(4, 3, bias=False, rng=rng)
    folded = nc.fold_norm_affine(norm, linear)
    assert folded.bias is None
    np.testing.assert_array_equal(folded.weight.data, linear.weight.data * norm.weight.data[None, :])


@pytest.mark.parametrize("kind", ["layernorm", "layernorm-no-bias", "rmsnorm", "groupnorm"])
def test_fold_norm_affine_matches_torch_norm_then_linear(kind):
    torch = pytest.importorskip("torch", reason="torch is the oracle of this test and is not installed")
    rng = np.random.default_rng(14)
    norm, linear = affine_norm(kind, 6, rng), nc.Linear(6, 4, init="torch", rng=rng)
    if kind.startswith("layernorm"):
        t_norm = torch.nn.LayerNorm(6, eps=norm.eps, bias=norm.bias is not None)
    elif kind == "rmsnorm":
        t_norm = torch.nn.RMSNorm(6, eps=norm.eps)
    else:
        t_norm = torch.nn.GroupNorm(norm.num_groups, 6, eps=norm.eps)
    t_linear = torch.nn.Linear(6, 4)
    for t, mine in ((t_norm, norm), (t_linear, linear)):
        t.double().load_state_dict({k: torch.from_numpy(v) for k, v in mine.state_dict().items()})
    x = rng.normal(0, 3, size=(7, 6))
    with torch.no_grad():
        expected = t_linear(t_norm(torch.from_numpy(x))).numpy()
    assert_close(nc.fold_norm_affine(norm, linear)(bare(norm)(x)), expected)


def test_fold_norm_affine_refuses_what_does_not_fold_and_changes_nothing():
    rng = np.random.default_rng(15)
    linear = nc.Linear(4, 3, rng=rng)
    state = {k: v.copy() for k, v in linear.state_dict().items()}
    refusals = [
        (nc.LayerNorm(4, elementwise_affine=False), ValueError, "LayerNorm has no affine.*nothing to fold"),
        (nc.RMSNorm(4, elementwise_affine=False), ValueError, "nothing to fold"),
        (nc.DyT(4, elementwise_affine=False), ValueError, "nothing to fold"),
        (nc.BatchNorm1d(4, affine=False), ValueError, "nothing to fold"),
        (nc.LayerNorm((2, 4)), ValueError, r"normalized_shape=\(2, 4\), over 2 axes.*\(in_features,\)"),
        (nc.LayerNorm(5), ValueError, "5 features but the Linear has in_features=4"),
        (nc.GroupNorm(1, 3), ValueError, "3 features but the Linear has in_features=4"),
        (nc.LayerNorm(4, dtype=np.float32), TypeError, "float32 but the Linear's weight is float64"),
        (nc.BatchNorm2d(4), TypeError, "expects as its first argument a norm whose affine.*got BatchNorm2d"),
        (nc.InstanceNorm1d(4, affine=True), TypeError, "got InstanceNorm1d"),
        (nc.Linear(4, 4), TypeError, "got Linear"),
    ]
    for norm, error, message in refusals:
        norm_state = {k: v.copy() for k, v in norm.state_dict().items()}
        with pytest.raises(error, match=message):
            nc.fold_norm_affine(norm, linear)
        assert all(np.array_equal(v, norm.state_dict()[k]) for k, v in norm_state.items())
    with pytest.raises(TypeError, match="expects a Linear as its second argument, got ReLU"):
        nc.fold_norm_affine(nc.LayerNorm(4), nc.ReLU())
    assert all(np.array_equal(v, linear.state_dict()[k]) for k, v in state.items())


# --- recalibrate_batchnorm ------------------------------------------------------------------
def two_bn_model(rng, cls=nc.BatchNorm1d):
    model = nc.Sequential(nc.Linear(5, 6, init="torch", rng=rng), cls(6), nc.ReLU(),
                          nc.Linear(6, 4, init="torch", rng=rng), cls(4))
    for bn in (model[1], model[4]):
        bn.weight.data[...] = rng.normal(1, 0.5, bn.num_features)
        bn.bias.data[...] = rng.normal(0, 0.5, bn.num_features)
    return model


def numpy_calibration(model, batches):
    """What recalibration must give, in plain NumPy: each BatchNorm's input, batch by batch, with
    the earlier BatchNorm normalising by the batch's (biased) statistics; then the mean and the
    unbiased variance of the concatenation."""
    lin1, bn1, _, lin2, bn2 = model
    batches = [b for b in batches if len(b)]  # an empty batch adds nothing
    z1 = [b @ lin1.weight.data.T + lin1.bias.data for b in batches]
    h = [np.maximum((z - z.mean(0)) / np.sqrt(z.var(0) + bn1.eps) * bn1.weight.data + bn1.bias.data, 0) for z in z1]
    z2 = [a @ lin2.weight.data.T + lin2.bias.data for a in h]
    return [(np.concatenate(z).mean(0), np.concatenate(z).var(0, ddof=1)) for z in (z1, z2)]


@pytest.mark.parametrize("cls", [nc.BatchNorm1d, fast.BatchNorm1d])
@pytest.mark.parametrize("training", [True, False])
def test_recalibration_gives_the_statistics_of_the_concatenated_batches(cls, training):
    rng = np.random.default_rng(7)
    model = two_bn_model(rng, cls).train(training)
    batches = [rng.normal(2, 3, (k, 5)) for k in (7, 2, 12, 0, 4)]
    for b in batches[:3]:
        model(b)  # running statistics that are not the answer
    expected = numpy_calibration(model, batches)
    assert nc.recalibrate_batchnorm(model, batches) is model
    for bn, (mean, var) in zip((model[1], model[4]), expected):
        np.testing.assert_allclose(bn.running_mean, mean, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(bn.running_var, var, rtol=1e-12, atol=1e-12)
        assert bn.num_batches_tracked == len(batches)


def test_recalibration_changes_nothing_but_the_running_statistics():
    rng = np.random.default_rng(8)
    model = nc.Sequential(*two_bn_model(rng), nc.Dropout(0.5, rng=3))
    model[1].momentum = None
    nc.freeze_batchnorm(model[4])  # one frozen BatchNorm among them
    model.train()
    x = rng.normal(size=(6, 5))
    model(x)
    modes = {name: m.training for name, m in model.named_modules()}
    caches = {name: m.__dict__.get("_cache") for name, m in model.named_modules()}
    before, rng_state = model.state_dict(), copy.deepcopy(model[5].rng.bit_generator.state)
    grads = [p.grad.copy() for p in model.parameters()]
    nc.recalibrate_batchnorm(model, [rng.normal(size=(9, 5)), rng.normal(size=(3, 5))])
    after = model.state_dict()
    stats = ("running_mean", "running_var", "num_batches_tracked")
    assert all(np.array_equal(before[k], after[k]) for k in before if not k.endswith(stats))
    assert all(not np.array_equal(before[k], after[k]) for k in before if k.endswith(stats[:2]))
    assert {name: m.training for name, m in model.named_modules()} == modes
    assert all(m.__dict__.get("_cache") is caches[name] for name, m in model.named_modules())
    assert "forward" not in model[1].__dict__ and model[1].track_running_stats and model[1].momentum is None
    assert model[5].rng.bit_generator.state == rng_state
    assert all(np.array_equal(g, p.grad) for g, p in zip(grads, model.parameters()))
    model.backward(np.ones((6, 4)))  # the caches of the last forward still serve its backward


def test_recalibration_is_stable_far_from_zero_and_works_for_batchnorm2d():
    rng = np.random.default_rng(9)
    bn = nc.BatchNorm2d(3)
    batches = [1e6 + rng.normal(size=(k, 3, 2, 2)) for k in (1, 4, 2)]
    nc.recalibrate_batchnorm(bn, batches)
    pooled = np.concatenate(batches).transpose(1, 0, 2, 3).reshape(3, -1)
    np.testing.assert_allclose(bn.running_mean, pooled.mean(1), rtol=1e-14)
    np.testing.assert_allclose(bn.running_var, pooled.var(1, ddof=1), rtol=1e-9)
    assert bn.training


def test_recalibration_weighs_samples_where_momentum_none_weighs_batches():
    """With equal batch sizes the means agree; momentum=None's variance (the mean of the batches'
    unbiased variances) misses the spread of the batch means, which recalibration includes."""
    rng = np.random.default_rng(10)
    batches = [rng.normal(loc, 1, (8, 2)) for loc in (-1.0, 0.0, 3.0)]
    cumulative = nc.BatchNorm1d(2, momentum=None)
    for b in batches:
        cumulative(b)
    recalibrated = nc.recalibrate_batchnorm(nc.BatchNorm1d(2), batches)
    np.testing.assert_allclose(recalibrated.running_mean, cumulative.running_mean, rtol=1e-12)
    np.testing.assert_allclose(cumulative.running_var, np.mean([b.var(0, ddof=1) for b in batches], 0), rtol=1e-12)
    assert np.all(recalibrated.running_var > 2 * cumulative.running_var)


def test_recalibration_errors_change_nothing():
    rng = np.random.default_rng(11)
    model = two_bn_model(rng)
    before = model.state_dict()
    with pytest.raises(ValueError, match="at least one batch"):
        nc.recalibrate_batchnorm(model, [])
    with pytest.raises(ValueError, match="batch 1 was rejected"):
        nc.recalibrate_batchnorm(model, [rng.normal(size=(4, 5)), rng.normal(size=(4, 6))])
    with pytest.raises(ValueError, match="batch 0 was rejected: Expected more than 1 value per channel"):
        nc.recalibrate_batchnorm(model, [np.zeros((1, 5)), np.zeros((3, 5))])  # batch statistics, as in training
    with pytest.raises(ValueError, match="received 0 value.* at least 2"):
        nc.recalibrate_batchnorm(nc.BatchNorm1d(5), [np.zeros((0, 5)), np.zeros((0, 5))])
    with pytest.raises(ValueError, match="no BatchNorm with running statistics"):
        nc.recalibrate_batchnorm(nc.Sequential(nc.Linear(2, 2), nc.BatchNorm1d(2, track_running_stats=False)),
                                 [np.zeros((3, 2))])
    with pytest.raises(TypeError, match="expects a Module"):
        nc.recalibrate_batchnorm("model", [np.zeros((3, 2))])
    after = model.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert model.training and "forward" not in model[1].__dict__ and model[1].track_running_stats


@pytest.mark.parametrize("batches", [None, 3, np.zeros((4, 5)), "batches", object()],
                         ids=["None", "int", "one array", "str", "object"])
def test_recalibration_without_an_iterable_of_batches_says_what_was_expected_and_changes_nothing(batches):
    model = two_bn_model(np.random.default_rng(13))
    model(np.random.default_rng(14).normal(size=(6, 5)))  # running statistics to keep
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(TypeError, match=r"expects an iterable of batches \(a list of arrays.*one batch x is "
                                        r"passed as \[x\]"):
        nc.recalibrate_batchnorm(model, batches)
    with pytest.raises(ValueError, match="at least one batch, got none"):
        nc.recalibrate_batchnorm(model, (b for b in []))
    assert all(np.array_equal(v, model.state_dict()[k]) for k, v in before.items())


def sync_replicas(group, protocol="allreduce"):
    """One two_bn_model per worker of ``group``, its BatchNorms SyncBatchNorms, every replica with
    the same weights; and the plain model with the same weights."""
    from normcore.distributed import SyncBatchNorm
    replicas = [two_bn_model(np.random.default_rng(15),
                             lambda c, w=w: SyncBatchNorm(c, process_group=w, protocol=protocol))
                for w in group.workers]
    return replicas, two_bn_model(np.random.default_rng(15))


@pytest.mark.parametrize("protocol", ["allreduce", "gather"])
def test_recalibrating_syncbatchnorm_replicas_gives_every_replica_the_statistics_of_all_workers(protocol):
    """Each worker passes its own batches (one of them empty); every replica ends with the running
    statistics of a plain BatchNorm model recalibrated on the workers' batches concatenated."""
    from normcore.distributed import InProcessGroup
    group = InProcessGroup(2)
    replicas, plain = sync_replicas(group, protocol)
    rng = np.random.default_rng(16)
    batches = [[rng.normal(2 + 3 * k, 3, (n, 5)) for n in sizes] for k, sizes in enumerate([(7, 0, 4), (2, 5, 3)])]
    group.run(lambda w, mine: nc.recalibrate_batchnorm(replicas[w.rank], mine), batches)
    nc.recalibrate_batchnorm(plain, [np.concatenate(step) for step in zip(*batches)])
    for model in replicas:
        for k in (1, 4):
            assert nc.rel_error(model[k].running_mean, plain[k].running_mean) < 1e-12
            assert nc.rel_error(model[k].running_var, plain[k].running_var) < 1e-12
            assert model[k].num_batches_tracked == plain[k].num_batches_tracked == 3
            assert np.array_equal(model[k].running_var, replicas[0][k].running_var)  # the same bits
            assert model[k].training and model[k].track_running_stats and "forward" not in model[k].__dict__


def test_syncbatchnorm_replicas_with_different_numbers_of_batches_all_raise_the_same_error():
    from normcore.distributed import InProcessGroup
    group = InProcessGroup(2)
    replicas, _ = sync_replicas(group)
    before = [copy.deepcopy(m.state_dict()) for m in replicas]
    rng = np.random.default_rng(17)

    def attempt(worker, mine):
        try:
            nc.recalibrate_batchnorm(replicas[worker.rank], mine)
        except ValueError as e:
            return str(e)
    raised = group.run(attempt, [[rng.normal(size=(3, 5))] * 2, [rng.normal(size=(3, 5))] * 3])
    assert raised[0] is not None and raised[0] == raised[1]
    assert "different numbers of batches ({0: 2, 1: 3}" in raised[0]
    for model, state in zip(replicas, before):
        assert all(np.array_equal(v, model.state_dict()[k]) for k, v in state.items())


# --- freeze_batchnorm -------------------------------------------------------------------------
def test_frozen_batchnorm_stays_in_eval_and_its_statistics_do_not_move():
    rng = np.random.default_rng(12)
    model = two_bn_model(rng)
    frozen = nc.freeze_batchnorm(model)
    assert frozen == [model[1], model[4]]
    model.train()
    assert model.training and model[0].training and not model[1].training and not model[4].training
    before = model.state_dict()
    x = rng.normal(size=(6, 5))
    y = model(x)
    after = model.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    reference = copy.deepcopy(model)
    for bn in (reference[1], reference[4]):
        bn.frozen = False
    np.testing.assert_array_equal(y, reference.eval()(x))
    nc.freeze_batchnorm(model, frozen=False)
    assert model[1].training and model[4].training
    model(x)
    assert model[1].num_batches_tracked == 1


@pytest.mark.parametrize("training", [False, True], ids=["eval", "train"])
def test_unfreezing_leaves_each_batchnorm_in_the_models_mode(training):
    """frozen=False returns each BatchNorm to the model's current mode: a model in evaluation
    stays in evaluation (a forward then moves no running statistic), one in training trains."""
    rng = np.random.default_rng(14)
    model = two_bn_model(rng)
    nc.freeze_batchnorm(model)
    model.train(training)
    nc.freeze_batchnorm(model, frozen=False)
    assert [model[1].training, model[4].training] == [training, training]
    assert not model[1].frozen and not model[4].frozen
    before = model.state_dict()
    model(rng.normal(size=(6, 5)))
    assert (model[1].num_batches_tracked == before["1.num_batches_tracked"]) is not training


def test_frozen_batchnorm_backward_is_the_eval_backward():
    rng = np.random.default_rng(13)
    model = two_bn_model(rng)
    model[1].running_mean[...] = rng.normal(size=6)
    model[1].running_var[...] = rng.uniform(0.5, 2, 6)
    nc.freeze_batchnorm(model)
    model.train()
    x = rng.normal(size=(5, 5))
    report = nc.gradcheck(model, x)
    assert report.passed, report
    dy = rng.normal(size=(5, 4))
    model(x)
    dx = model.backward(dy)
    eval_model = copy.deepcopy(model)
    for bn in (eval_model[1], eval_model[4]):
        bn.frozen = False
    eval_model.eval()
    eval_model(x)
    np.testing.assert_allclose(dx, eval_model.backward(dy), rtol=1e-12, atol=1e-14)
    assert np.abs(model[1].weight.grad).max() > 0  # gamma still learns


def test_freeze_refuses_a_batchnorm_without_running_statistics():
    model = nc.Sequential(nc.Linear(2, 2), nc.BatchNorm1d(2, track_running_stats=False))
    with pytest.raises(ValueError, match="track_running_stats=False"):
        nc.freeze_batchnorm(model)
    assert not model[1].frozen and model[1].training
    with pytest.raises(TypeError, match="True or False"):
        nc.freeze_batchnorm(model, frozen="yes")
