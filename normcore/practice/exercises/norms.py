"""The exercises and the checks (probes) the grader runs on each.

A probe builds a layer with ``make(*args, **kwargs)`` (a ``Driver`` around the user's class,
normcore's layer, or a catalogued mutant), feeds it inputs drawn from its own seeded
generator, and records named observations with ``rec(label, value, tol, metric)``. Every
implementation sees exactly the same inputs, so observations can be compared one to one.
Parameters are random (never the initial ones and zeros) and upstream gradients are random
(never ones), in float64 unless the probe is about float32.
"""

from dataclasses import dataclass

import numpy as np

from ... import distributed, nn, norms
from .. import references
from ...i18n import N_, translator
from ..driver import ContractError
from ..probes import F32, F64, Tolerance

_ = translator("practice")
FRACTION = 0.03  # absolute tolerance of a fraction measured on 20 000 Bernoulli draws (about 6 sigma)


@dataclass(frozen=True)
class Probe:
    label: str
    run: callable  # run(rec, make, rng)


@dataclass(frozen=True)
class Exercise:
    name: str  # "batchnorm"
    class_name: str  # the class the skeleton defines (the function, for a function exercise)
    reference: type  # normcore's layer, the grader's reference
    summary: str
    probes: tuple
    example_args: tuple  # constructor arguments and an input shape for a quick first call
    example_shape: tuple
    difficulty: int = 2  # 1 easy, 2 medium, 3 hard: the order of the path through the exercises
    minutes: int = 30  # the time box an interview would give it
    example_extra: tuple = ()  # forward's arguments after the input (CrossEntropyLoss's targets)
    function: bool = False  # the candidate writes a function (class_name is its name), not a layer


DIFFICULTY = {1: N_("easy"), 2: N_("medium"), 3: N_("hard")}  # translated where shown


def _tol(x):
    """F64; or F32, grown with the input's magnitude M beyond 10: a float32 input of magnitude M
    is rounded by about M * 6e-8, which every correct formula inherits in its own way (x - max
    and x - logsumexp(x) differ by that much for logits around 100). A float64 input's
    tolerance carries the float32 one too (``probes.Tolerance``): an answer that computes in
    float32 inside is held to it."""
    float32 = F32 * max(1.0, float(np.abs(x).max(initial=0.0)) / 10.0)
    return float32 if x.dtype == np.float32 else Tolerance(F64, float32)


def _randomize(layer, rng, shape, params):
    for name in params:
        layer.set_param(name, rng.standard_normal(shape))


def _step(rec, layer, x, rng, params, prefix=""):
    """One forward and one backward with a random upstream gradient: rows forward, dx, dgamma,
    dbeta. A float32 input meets float32 parameters (``Driver.to_dtype``)."""
    layer.to_dtype(params, x.dtype)
    y = layer.forward(x)
    rec(prefix + "forward", y, _tol(x))
    if x.dtype != np.float64:
        rec(prefix + "output dtype", str(np.asarray(y).dtype), 0, "equal")
    dy = rng.standard_normal(x.shape).astype(x.dtype)
    layer.zero_grad(params)
    rec(prefix + "dx", layer.backward(dy), _tol(x))
    for name in params:
        rec(prefix + "d" + name, layer.grad(name), _tol(x))


def norm_probe(label, args, pshape, xshape, params, dtype=np.float64, scale=1.0, shift=0.0,
               edit=None, kwargs=None, evaluation=False):
    """A forward and backward of a norm built as ``make(*args, **kwargs)`` on a random input.

    ``edit(x)`` changes the input in place (e.g. makes a row constant); ``evaluation`` switches the
    layer to eval mode first (for the norms that behave the same in both modes).
    """
    def run(rec, make, rng):
        layer = make(*args, **(kwargs or {}))
        _randomize(layer, rng, pshape, params)
        x = rng.standard_normal(xshape) * scale + shift
        if edit is not None:
            edit(x)
        x = x.astype(dtype)
        if evaluation:
            layer.eval()
        _step(rec, layer, x, rng, params)
    return Probe(label, run)


def _two_backward_calls(rec, layer, rng, xshape, params):
    """One forward, two backward calls: records each parameter's gradient, which must be the sum."""
    layer.check_accumulates(params)
    layer.forward(rng.standard_normal(xshape))
    layer.zero_grad(params)
    layer.backward(rng.standard_normal(xshape))
    layer.backward(rng.standard_normal(xshape))
    for name in params:
        rec(f"d{name} after two backward calls", layer.grad(name), F64)


def accumulation_probe(args, pshape, xshape, params, kwargs=None):
    """Two backward calls after one forward: the parameter gradients must be their sum."""
    def run(rec, make, rng):
        layer = make(*args, **(kwargs or {}))
        _randomize(layer, rng, pshape, params)
        _two_backward_calls(rec, layer, rng, xshape, params)
    return Probe(f"gradients accumulate {xshape}", run)


def _lifted(index, by):
    """An edit that raises x[index] by ``by``."""
    def edit(x):
        x[index] += by
    return edit


def _constant(index, value=2.5):
    def edit(x):
        x[index] = value
    return edit


# --- BatchNorm1d ------------------------------------------------------------------------------
BN = ("gamma", "beta")
CHANNEL_MEANS = np.array([1.0, -2.0, 3.0])


def bn_running_probe(label, xshape, steps, kwargs=None, then_eval=False):
    """Several training steps on batches with per-channel means 1, -2, 3 and std 2: the running
    statistics after the first and the last step; then (optionally) evaluation and train() again."""
    def run(rec, make, rng):
        layer = make(3, **(kwargs or {}))
        _randomize(layer, rng, (3,), BN)
        loc = CHANNEL_MEANS.reshape((1, 3) + (1,) * (len(xshape) - 2))
        for step in range(1, steps + 1):
            layer.forward(rng.standard_normal(xshape) * 2 + loc)
            if step in (1, steps):
                rec(f"running_mean after {step} step{'s' * (step > 1)}", layer.running("mean"), F64)
                rec(f"running_var after {step} step{'s' * (step > 1)}", layer.running("var"), F64)
        if not then_eval:
            return
        x = rng.standard_normal(xshape) * 2 + loc
        layer.eval()
        _step(rec, layer, x, rng, BN, prefix="eval: ")
        rec("running_mean after the eval forward", layer.running("mean"), F64)
        rec("running_var after the eval forward", layer.running("var"), F64)
        layer.train()
        rec("train() again: forward", layer.forward(x), F64)
    return Probe(label, run)


BATCHNORM = Exercise(
    "batchnorm", "BatchNorm1d", norms.BatchNorm1d,
    N_("BatchNorm1d(num_features, eps, momentum): input (N, C) or (N, C, L); running statistics"),
    (
        norm_probe("train (8, 4)", (4,), (4,), (8, 4), BN, scale=2.0, shift=1.0),
        norm_probe("train (4, 3, 5), rank 3", (3,), (3,), (4, 3, 5), BN, scale=2.0, shift=1.0),
        norm_probe("train (8, 4) float32", (4,), (4,), (8, 4), BN, dtype=np.float32, scale=2.0),
        norm_probe("train batch of 2 (2, 4)", (4,), (4,), (2, 4), BN),
        norm_probe("train constant channel (6, 3)", (3,), (3,), (6, 3), BN, edit=_constant((slice(None), 1))),
        norm_probe("train small variance (8, 4)", (4,), (4,), (8, 4), BN, scale=3e-3),
        bn_running_probe("running stats (16, 3)", (16, 3), 5, then_eval=True),
        bn_running_probe("running stats (4, 3, 5)", (4, 3, 5), 3),
        bn_running_probe("running stats momentum=None", (8, 3), 3, kwargs={"momentum": None}),
        # another momentum than the default: a momentum written as a number in the code, or
        # flipped (0.7 instead of 0.3), shows here even when momentum=None is handled
        bn_running_probe("running stats momentum=0.3", (8, 3), 3, kwargs={"momentum": 0.3}),
        accumulation_probe((4,), (4,), (8, 4), BN),
    ),
    (4,), (5, 4), difficulty=3, minutes=40,
)

# A training-only BatchNorm (no running statistics, no evaluation mode: a common hand-written
# request) is graded on the rest; these observations are then "not written".
RUNNING_STATISTICS = ("batchnorm",)  # the exercises whose answer may leave them out
RUNNING_PROBE = "running stats"  # how the probes of the running statistics are labelled
RUNNING_ROWS = ("buffers", "state_dict keys", "buffers detached", "batches tracked")  # torch's


def is_running_statistics(probe, row):
    """Whether observation ``row`` of probe ``probe`` is about BatchNorm's running
    statistics or evaluation: a probe of the running statistics (its evaluation included), a
    running_mean or running_var, or the buffers that hold them (the PyTorch track)."""
    return (probe.startswith(RUNNING_PROBE) or row.startswith(("running_mean", "running_var"))
            or row in RUNNING_ROWS)


# --- LayerNorm and RMSNorm --------------------------------------------------------------------


def trailing_norm_probes(params, kwargs):
    """The probes LayerNorm and RMSNorm share: ranks 2 to 4, a multi-axis normalized_shape,
    float32, one sample, a constant row, a small-variance input, another eps, eval mode,
    accumulation."""
    return (
        norm_probe("(4, 6)", (6,), (6,), (4, 6), params, kwargs=kwargs),
        norm_probe("(2, 3, 5), rank 3", (5,), (5,), (2, 3, 5), params, kwargs=kwargs),
        norm_probe("(2, 3, 4, 5), rank 4", (5,), (5,), (2, 3, 4, 5), params, kwargs=kwargs),
        norm_probe("(2, 3, 4, 5), normalized_shape (4, 5)", ((4, 5),), (4, 5), (2, 3, 4, 5), params,
                   kwargs=kwargs),
        norm_probe("(4, 6) float32", (6,), (6,), (4, 6), params, dtype=np.float32, kwargs=kwargs),
        norm_probe("one sample (1, 6)", (6,), (6,), (1, 6), params, kwargs=kwargs),
        norm_probe("constant row (3, 6)", (6,), (6,), (3, 6), params, edit=_constant(1), kwargs=kwargs),
        norm_probe("small variance (4, 6)", (6,), (6,), (4, 6), params, scale=3e-3, shift=2e-3,
                   kwargs=kwargs),
        # another eps, comparable to the variance: the constructor's eps must be the one used
        norm_probe("eps=0.01 (4, 6)", (6,), (6,), (4, 6), params, scale=0.1, kwargs={**kwargs, "eps": 1e-2}),
        norm_probe("eval mode (4, 6)", (6,), (6,), (4, 6), params, kwargs=kwargs, evaluation=True),
        accumulation_probe((6,), (6,), (4, 6), params, kwargs=kwargs),
    )


LAYERNORM = Exercise(
    "layernorm", "LayerNorm", norms.LayerNorm,
    N_("LayerNorm(normalized_shape, eps): input (*, *normalized_shape)"),
    trailing_norm_probes(("gamma", "beta"), {"eps": 1e-5}),
    (6,), (4, 6), difficulty=2, minutes=25,
)

RMSNORM = Exercise(
    "rmsnorm", "RMSNorm", norms.RMSNorm,
    N_("RMSNorm(normalized_shape, eps=None): input (*, *normalized_shape); no beta"),
    trailing_norm_probes(("gamma",), {"eps": 1e-5}) + (
        norm_probe("default eps (4, 6)", (6,), (6,), (4, 6), ("gamma",), scale=1e-7),
        norm_probe("zero row (3, 6)", (6,), (6,), (3, 6), ("gamma",), edit=_constant(1, 0.0),
                   kwargs={"eps": 1e-5}),
    ),
    (6,), (4, 6), difficulty=1, minutes=20,
)

# --- DyT (Dynamic Tanh) ------------------------------------------------------------------------
DYT = ("alpha", "gamma", "beta")


def _dyt_layer(make, rng, normalized_shape, alpha, kwargs=None):
    """DyT(normalized_shape, alpha_init=alpha) with random gamma and beta."""
    layer = make(normalized_shape, alpha_init=alpha, **(kwargs or {}))
    _randomize(layer, rng, tuple(normalized_shape), ("gamma", "beta"))
    return layer


def dyt_probe(label, normalized_shape, xshape, alpha=(0.3, 1.5), dtype=np.float64, scale=1.0):
    """A forward and backward of DyT(normalized_shape, alpha_init=alpha) on a random input:
    alpha drawn uniformly from the range ``alpha`` (a negative range for a negative alpha),
    gamma and beta random, x standard normal times ``scale``. alpha * x decides the regime:
    |alpha * x| above about 3 saturates tanh (t = +-1, slope near 0), below 0.1 it is nearly
    linear (t = alpha * x)."""
    def run(rec, make, rng):
        layer = _dyt_layer(make, rng, normalized_shape, float(rng.uniform(*alpha)))
        x = (rng.standard_normal(xshape) * scale).astype(dtype)
        _step(rec, layer, x, rng, DYT)
    return Probe(label, run)


def dyt_assigned_alpha(rec, make, rng):
    """The default alpha_init (0.5), then alpha assigned through alpha.data as an optimizer
    would: the forward must read the Parameter, not a copy of alpha_init. One channel, so
    that an alpha of any shape with one value can be assigned."""
    layer = make(1)
    _randomize(layer, rng, (1,), ("gamma", "beta"))
    x = rng.standard_normal((5, 1)) * 2.0
    rec("forward with the default alpha_init", layer.forward(x), F64)
    layer.set_param("alpha", rng.uniform(1.0, 2.0, 1))
    _step(rec, layer, x, rng, DYT, prefix="alpha assigned: ")


def dyt_accumulation(rec, make, rng):
    """Two backward calls after one forward: every parameter gradient must be their sum."""
    layer = _dyt_layer(make, rng, (6,), float(rng.uniform(0.3, 1.5)))
    _two_backward_calls(rec, layer, rng, (4, 6), DYT)


DYT_EXERCISE = Exercise(
    "dyt", "DyT", norms.DyT,
    N_("DyT(normalized_shape, alpha_init=0.5): y = gamma * tanh(alpha * x) + beta, input "
       "(*, *normalized_shape); alpha one scalar of shape (1,)"),
    (
        dyt_probe("(4, 6)", (6,), (4, 6)),
        dyt_probe("(2, 3, 5), rank 3", (5,), (2, 3, 5)),
        dyt_probe("(2, 3, 4, 5), normalized_shape (4, 5)", (4, 5), (2, 3, 4, 5)),
        dyt_probe("(4, 6) float32", (6,), (4, 6), dtype=np.float32),
        dyt_probe("one sample (1, 6)", (6,), (1, 6)),
        dyt_probe("one channel (5, 1)", (1,), (5, 1)),
        dyt_probe("tanh saturated, alpha ~ 3 (4, 6)", (6,), (4, 6), alpha=(2.5, 4.0), scale=3.0),
        dyt_probe("tanh nearly linear, alpha ~ 0.05 (4, 6)", (6,), (4, 6), alpha=(0.03, 0.08)),
        dyt_probe("negative alpha (3, 2, 4)", (4,), (3, 2, 4), alpha=(-1.5, -0.3), scale=2.0),
        Probe("default alpha_init, then alpha assigned (5, 1)", dyt_assigned_alpha),
        Probe("gradients accumulate (4, 6)", dyt_accumulation),
    ),
    (6,), (4, 6), difficulty=1, minutes=15,
)

# --- fold_batchnorm (a function: make(...) returns a Driver around what it returned) ----------
def _folded(driver, name="fold_batchnorm"):
    """(W', b') as the candidate's fold function ``name`` returned them."""
    result = driver.layer
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ContractError(_("expected {name} to return (W_folded, b_folded), got "
                              "{type}").format(name=name, type=type(result).__name__))
    return np.asarray(result[0]), np.asarray(result[1])


def fold_probe(label, n, dtype=np.float64, var=(0.5, 2.0), eps=1e-5, mean_scale=2.0, bias=True):
    """fold_batchnorm on a random square Linear (n, n) and BatchNorm1d(n): running_var drawn
    uniformly from ``var``, running_mean with standard deviation ``mean_scale``, gamma, beta and
    b random (b = 0 for a Linear without bias). Records W', b', the folded layer's output on
    a random x, and whether the inputs were left unchanged. W is square so that a scale put on
    the columns instead of the rows gives numbers rather than a shape error."""
    def run(rec, make, rng):
        W = rng.standard_normal((n, n))
        b = rng.standard_normal(n) if bias else np.zeros(n)
        mean = rng.standard_normal(n) * mean_scale
        running_var = rng.uniform(*var, n)
        gamma, beta = rng.standard_normal(n), rng.standard_normal(n)
        args = tuple(a.astype(dtype) for a in (W, b, mean, running_var, gamma, beta))
        _record_fold(rec, rng, args, lambda: _folded(make(*args, eps)), "output x @ W'.T + b'")
    return Probe(label, run)


def _record_fold(rec, rng, args, fold, output_label):
    """What a fold probe records: W' and b' (with their dtype when not float64), the folded
    Linear's output on a random (3, n) input, and whether ``fold()`` left ``args`` unchanged.
    The input is drawn after the fold, from the probe's ``rng``."""
    dtype, n = args[0].dtype, args[-1].shape[0]
    kept = tuple(a.copy() for a in args)
    W2, b2 = fold()
    tol = F32 if dtype == np.float32 else F64
    rec("W' (folded weight)", W2, tol)
    rec("b' (folded bias)", b2, tol)
    if dtype != np.float64:
        rec("W' dtype", str(W2.dtype), 0, "equal")
        rec("b' dtype", str(b2.dtype), 0, "equal")
    x = rng.standard_normal((3, n)).astype(dtype)
    rec(output_label, x @ W2.T + b2, tol)
    rec("inputs left unchanged", float(all(np.array_equal(a, k) for a, k in zip(args, kept))), 0, "abs")


FOLD_BATCHNORM = Exercise(
    "fold_batchnorm", "fold_batchnorm", references.fold_batchnorm,
    N_("fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps) -> (W', b'): a Linear "
       "followed by a BatchNorm1d in evaluation, as one Linear"),
    (
        fold_probe("(4, 4)", 4),
        fold_probe("running_var near eps (3, 3)", 3, var=(1e-6, 1e-5)),
        fold_probe("eps = 0.1 (5, 5)", 5, eps=0.1),
        fold_probe("running_mean ~ 100 (4, 4)", 4, mean_scale=100.0),
        fold_probe("no bias, b = 0 (4, 4)", 4, bias=False),
        fold_probe("float32 (4, 4)", 4, dtype=np.float32),
    ),
    (np.eye(2), np.zeros(2), np.zeros(2), np.ones(2), np.ones(2), np.zeros(2), 1e-5), (2, 2),
    difficulty=1, minutes=15, function=True,
)

# --- fold_norm_affine (a function, like fold_batchnorm) ----------------------------------------
def fold_affine_probe(label, n, dtype=np.float64, beta_scale=1.0, bias=True):
    """fold_norm_affine on a random norm affine (gamma, beta) over n features and a random
    square Linear (n, n): beta with standard deviation ``beta_scale`` (0: RMSNorm's, none),
    b = 0 for a Linear without bias. Records W', b', the folded layer's output on a random
    x_hat, and whether the inputs were left unchanged. W is square so that gamma put on the
    rows, or beta not mapped through W, gives numbers rather than a shape error."""
    def run(rec, make, rng):
        gamma, beta = rng.standard_normal(n), rng.standard_normal(n) * beta_scale
        W = rng.standard_normal((n, n))
        b = rng.standard_normal(n) if bias else np.zeros(n)
        args = tuple(a.astype(dtype) for a in (gamma, beta, W, b))
        _record_fold(rec, rng, args, lambda: _folded(make(*args), "fold_norm_affine"),
                     "output x_hat @ W'.T + b'")
    return Probe(label, run)


FOLD_NORM_AFFINE = Exercise(
    "fold_norm_affine", "fold_norm_affine", references.fold_norm_affine,
    N_("fold_norm_affine(gamma, beta, W, b) -> (W', b'): a norm's gamma and beta folded into the "
       "Linear after it"),
    (
        fold_affine_probe("(4, 4)", 4),
        fold_affine_probe("beta = 0 (3, 3)", 3, beta_scale=0.0),
        fold_affine_probe("no bias, b = 0 (4, 4)", 4, bias=False),
        fold_affine_probe("beta ~ 100 (5, 5)", 5, beta_scale=100.0),
        fold_affine_probe("float32 (4, 4)", 4, dtype=np.float32),
    ),
    (np.ones(2), np.zeros(2), np.eye(2), np.zeros(2)), (2, 2),
    difficulty=1, minutes=15, function=True,
)

# --- sync_batchnorm -----------------------------------------------------------------------------
SYNC_C = 3  # channels
SYNC = ("gamma", "beta")


def _workers(make, rng, k):
    """An InProcessGroup of k workers and one replica of the layer per worker, every replica
    with the same random gamma and beta."""
    group = distributed.InProcessGroup(k, timeout=10.0)
    layers = [make(SYNC_C, process_group=w) for w in group.workers]
    for name in SYNC:
        value = rng.standard_normal(SYNC_C)
        for layer in layers:
            layer.set_param(name, value)
    return group, layers


def _shards(rng, sizes, offset):
    """Worker k's shard: sizes[k] rows, standard deviation 2 around offset + 1.5 k (the workers'
    means differ, so the spread between them is part of the variance)."""
    return [rng.standard_normal((n, SYNC_C)) * 2.0 + offset + 1.5 * k for k, n in enumerate(sizes)]


def _each(group, layers, method, arrays):
    """layers[k].<method>(arrays[k]) on every worker together; the results concatenated."""
    out = group.run(lambda w, a: getattr(layers[w.rank], method)(a), arrays)
    return np.concatenate([np.asarray(o, dtype=np.float64).reshape(-1, SYNC_C) for o in out])


def _stacked(layers, method, name):
    """layer.<method>(name) of every worker's layer, one row per worker: (K, C)."""
    return np.stack([np.asarray(getattr(layer, method)(name), dtype=np.float64) for layer in layers])


def sync_probe(label, sizes, offset=0.0, steps=1, then_eval=False):
    """K = len(sizes) workers, shards of sizes[k] rows: ``steps`` training forwards, then one
    backward with a random dy. Records the concatenated forward and dx, each worker's local
    dgamma and dbeta, and each worker's running statistics; with ``then_eval`` the evaluation
    forward too."""
    def run(rec, make, rng):
        group, layers = _workers(make, rng, len(sizes))
        for _ in range(steps):
            xs = _shards(rng, sizes, offset)
            y = _each(group, layers, "forward", xs)
        rec("forward (the shards concatenated)", y, F64)
        dys = [rng.standard_normal(x.shape) for x in xs]
        for layer in layers:
            layer.zero_grad(SYNC)
        rec("dx (the shards concatenated)", _each(group, layers, "backward", dys), F64)
        for name in SYNC:
            rec(f"d{name} of each worker (its local share)", _stacked(layers, "grad", name), F64)
        for stat in ("mean", "var"):
            rec(f"running_{stat} of each worker", _stacked(layers, "running", stat), F64)
        if then_eval:
            for layer in layers:
                layer.eval()
            rec("eval: forward", _each(group, layers, "forward", _shards(rng, sizes, offset)), F64)
    return Probe(label, run)


def sync_accumulation(rec, make, rng):
    """Two backward calls after one forward: each worker's gradients must be their sum."""
    sizes = (3, 5)
    group, layers = _workers(make, rng, len(sizes))
    layers[0].check_accumulates(SYNC)
    xs = _shards(rng, sizes, 0.0)
    _each(group, layers, "forward", xs)
    for layer in layers:
        layer.zero_grad(SYNC)
    for _ in range(2):
        _each(group, layers, "backward", [rng.standard_normal(x.shape) for x in xs])
    for name in SYNC:
        rec(f"d{name} of each worker after two backward calls", _stacked(layers, "grad", name), F64)


SYNC_BATCHNORM = Exercise(
    "sync_batchnorm", "SyncBatchNorm", references.SyncBatchNorm,
    N_("SyncBatchNorm(num_features, process_group, eps, momentum): BatchNorm1d over shards (n_k, C) "
       "on K workers, with process_group.all_reduce (sum); local gamma/beta gradients"),
    (
        sync_probe("K=2, shards 4 + 4", (4, 4)),
        sync_probe("K=3, uneven shards 2 + 5 + 3", (2, 5, 3)),
        sync_probe("K=3, worker 1 empty: 4 + 0 + 3", (4, 0, 3)),
        sync_probe("K=4, shards of 2", (2, 2, 2, 2)),
        sync_probe("K=2, shards 3 + 5, mean ~ 1e5", (3, 5), offset=1e5),
        sync_probe("running stats, 3 steps, then eval: 2 + 6 + 4", (2, 6, 4), steps=3, then_eval=True),
        Probe("gradients accumulate, K=2, 3 + 5", sync_accumulation),
    ),
    (SYNC_C, None), (4, SYNC_C), difficulty=3, minutes=45,
)

# --- GroupNorm --------------------------------------------------------------------------------
GN = ("gamma", "beta")
GROUPNORM = Exercise(
    "groupnorm", "GroupNorm", norms.GroupNorm,
    N_("GroupNorm(num_groups, num_channels, eps): input (N, C, *spatial)"),
    (
        norm_probe("(3, 6), G=3", (3, 6), (6,), (3, 6), GN),
        norm_probe("(2, 6, 5), G=2, rank 3", (2, 6), (6,), (2, 6, 5), GN),
        norm_probe("(2, 6, 3, 2), G=3, rank 4", (3, 6), (6,), (2, 6, 3, 2), GN),
        norm_probe("(2, 4, 3), G=1", (1, 4), (4,), (2, 4, 3), GN),
        norm_probe("(2, 4, 3), G=C=4", (4, 4), (4,), (2, 4, 3), GN),
        norm_probe("(2, 6, 5) float32", (2, 6), (6,), (2, 6, 5), GN, dtype=np.float32),
        norm_probe("constant group (2, 4, 3), G=2", (2, 4), (4,), (2, 4, 3), GN,
                   edit=_constant((0, slice(0, 2)))),
        norm_probe("small variance (2, 6, 5), G=2", (2, 6), (6,), (2, 6, 5), GN, scale=3e-3),
        accumulation_probe((2, 6), (6,), (2, 6, 5), GN),
    ),
    (2, 6), (3, 6, 2), difficulty=3, minutes=35,
)

# --- Dropout ----------------------------------------------------------------------------------
P = 0.3  # not 0.5, so that p and 1 - p can be told apart
SHAPE = (200, 100)


def _factor(out, inp):
    """The median of out / inp over the nonzero outputs (nan when every output is zero)."""
    out, inp = np.asarray(out, dtype=np.float64), np.asarray(inp, dtype=np.float64)
    kept = out != 0
    return float(np.median(out[kept] / inp[kept])) if kept.any() else float("nan")


def dropout_train(rec, make, rng):
    layer = make(P, rng=0)
    x = rng.standard_normal(SHAPE)
    y = np.asarray(layer.forward(x))
    dropped = y == 0
    rec("fraction of units dropped", dropped.mean(), FRACTION, "abs")
    rec("fraction of columns dropped in every row", dropped.all(axis=0).mean(), FRACTION, "abs")
    rec("factor on the kept units", _factor(y, x), F64)
    dy = rng.standard_normal(SHAPE)
    dx = np.asarray(layer.backward(dy))
    rec("gradients masked unlike the forward (fraction)", ((dx == 0) != dropped).mean(), FRACTION, "abs")
    rec("factor on the kept gradients", _factor(dx, dy), F64)


def dropout_eval(after_training=False):
    """Evaluation: the output is the input and dx is dy. ``after_training``: a training forward
    first, whose mask the evaluation's backward must not reuse."""
    def run(rec, make, rng):
        layer = make(P, rng=0)
        if after_training:
            layer.forward(rng.standard_normal(SHAPE))
        layer.eval()
        x = rng.standard_normal(SHAPE)
        y = np.asarray(layer.forward(x))
        rec("fraction of units dropped", (y == 0).mean(), FRACTION, "abs")
        rec("output / input", _factor(y, x), F64)
        dy = rng.standard_normal(SHAPE)
        rec("dx / dy", _factor(layer.backward(dy), dy), F64)
    return Probe(f"eval p={P} {SHAPE}" + (", after a training forward" if after_training else ""), run)


def dropout_float32(rec, make, rng):
    x = rng.standard_normal(SHAPE).astype(np.float32)
    y = make(P, rng=0).forward(x)
    rec("output dtype", str(np.asarray(y).dtype), 0, "equal")
    rec("factor on the kept units", _factor(y, x), F32)


def dropout_extreme(p):
    def run(rec, make, rng):
        layer = make(p, rng=0)
        x = rng.standard_normal((4, 5))
        rec("forward", layer.forward(x), F64)
        rec("dx", layer.backward(rng.standard_normal((4, 5))), F64)
    return Probe(f"p={p:g} (4, 5)", run)


def dropout_seeded(rec, make, rng):
    x = rng.standard_normal((20, 10))
    y1, y2 = (np.asarray(make(P, rng=7).forward(x)) for _ in range(2))
    rec("two layers with rng=7 drop the same units", float(np.array_equal(y1 == 0, y2 == 0)), 0, "abs")


DROPOUT = Exercise(
    "dropout", "Dropout", nn.Dropout,
    N_("Dropout(p, rng): inverted dropout; the grader checks fractions, factors and masks"),
    (
        Probe(f"train p={P} {SHAPE}", dropout_train),
        dropout_eval(),
        dropout_eval(after_training=True),
        Probe(f"train float32 p={P}", dropout_float32),
        dropout_extreme(0.0),
        dropout_extreme(1.0),
        Probe("seeded rng", dropout_seeded),
    ),
    (P,), (4, 6), difficulty=1, minutes=15,
)

# --- Softmax ----------------------------------------------------------------------------------
# The probes Softmax and LogSoftmax share: ranks 1 to 3, every axis, float32, large logits.
AXIS_PROBES = (
        norm_probe("(4, 6), axis=-1", (-1,), None, (4, 6), ()),
        norm_probe("(6,), rank 1", (-1,), None, (6,), ()),
        norm_probe("(2, 3, 5), axis=1", (1,), None, (2, 3, 5), ()),
        norm_probe("(3, 4, 2), axis=0", (0,), None, (3, 4, 2), ()),
        norm_probe("(2, 5, 3), axis=-2", (-2,), None, (2, 5, 3), ()),
        norm_probe("(4, 6) float32", (-1,), None, (4, 6), (), dtype=np.float32),
        norm_probe("logits around 1000 (3, 5)", (-1,), None, (3, 5), (), scale=3.0, shift=1000.0),
        norm_probe("logits around 100, float32 (3, 5)", (-1,), None, (3, 5), (), dtype=np.float32,
                   scale=3.0, shift=100.0),
        # two logits per row far above the rest: only the max shift keeps exp finite (a shift
        # by the mean or the min overflows, beyond 89 in float32 and 709 in float64), and the
        # two leaders keep the softmax and its gradient away from 0
        norm_probe("two logits + 200, float32 (3, 5)", (-1,), None, (3, 5), (), dtype=np.float32,
                   edit=_lifted((..., [1, 3]), 200.0)),
        norm_probe("two logits + 2000 (3, 5)", (-1,), None, (3, 5), (), edit=_lifted((..., [1, 3]), 2000.0)),
)

SOFTMAX = Exercise(
    "softmax", "Softmax", nn.Softmax,
    N_("Softmax(axis=-1): any shape, forward and backward along the axis; no parameters"),
    AXIS_PROBES + (
        norm_probe("peaked (4, 6), logits * 20", (-1,), None, (4, 6), (), scale=20.0),
    ),
    (-1,), (4, 6), difficulty=1, minutes=15,
)


# --- CrossEntropyLoss -------------------------------------------------------------------------
def ce_probe(label, n, c, dtype=np.float64, scale=1.0, shift=0.0, wrong_by=0.0):
    """The loss and dlogits of CrossEntropyLoss() on logits (n, c) and random integer targets,
    with a random scalar upstream gradient; ``wrong_by`` lowers the target's logit in the first
    half of the rows, making those predictions confident and wrong."""
    def run(rec, make, rng):
        layer = make()
        logits = rng.standard_normal((n, c)) * scale + shift
        targets = rng.integers(0, c, n)
        logits[np.arange(n // 2), targets[:n // 2]] -= wrong_by
        logits = logits.astype(dtype)
        loss, kept = layer.forward_input_kept(logits, targets)
        rec("loss", loss, _tol(logits))
        rec("logits unchanged by forward", float(kept), 0, "abs")
        if dtype != np.float64:
            rec("output dtype", str(np.asarray(layer.forward(logits, targets)).dtype), 0, "equal")
        rec("dlogits", layer.backward(float(rng.uniform(0.5, 2.0))), _tol(logits))
    return Probe(label, run)


CROSS_ENTROPY = Exercise(
    "cross_entropy", "CrossEntropyLoss", nn.CrossEntropyLoss,
    N_("CrossEntropyLoss(): logits (N, C), integer targets (N,), mean; backward(dloss) -> dlogits"),
    (
        ce_probe("(8, 5)", 8, 5),
        ce_probe("one sample (1, 3)", 1, 3),
        ce_probe("(16, 10)", 16, 10, scale=3.0),
        ce_probe("(8, 5) float32", 8, 5, dtype=np.float32),
        ce_probe("logits around 1000 (6, 4)", 6, 4, scale=3.0, shift=1000.0),
        ce_probe("confident and wrong (6, 4)", 6, 4, wrong_by=800.0),
    ),
    (), (4, 3), difficulty=2, minutes=20, example_extra=(np.array([0, 2, 1, 0]),),
)


# --- LogSoftmax -------------------------------------------------------------------------------
def _lowered(index, by):
    """An edit that lowers x[index] by ``by``: a confidently wrong entry, whose probability
    exp(-by) underflows to 0 in float64 when by is 800."""
    def edit(x):
        x[index] -= by
    return edit


LOG_SOFTMAX = Exercise(
    "log_softmax", "LogSoftmax", nn.LogSoftmax,
    N_("LogSoftmax(axis=-1): any shape, forward and backward along the axis; no parameters"),
    AXIS_PROBES + (
        norm_probe("confidently wrong (3, 5), one logit - 800", (-1,), None, (3, 5), (),
                   edit=_lowered((0, 2), 800.0)),
    ),
    (-1,), (4, 6), difficulty=1, minutes=15,
)

# --- attention --------------------------------------------------------------------------------
ATT = ("wq", "wk", "wv", "wo")


def attention_probe(label, d_model, n_heads, xshape, causal, dtype=np.float64, scale=1.0):
    """A forward and backward of MultiheadSelfAttention(d_model, n_heads, causal=causal) with
    random (C, C) weights. x is drawn with standard deviation scale / sqrt(C), so that the
    scores have a standard deviation of about scale**2 (1 for ordinary scores)."""
    return norm_probe(label, (d_model, n_heads), (d_model, d_model), xshape, ATT, dtype=dtype,
                      scale=scale / np.sqrt(d_model), kwargs={"causal": causal})


ATTENTION = Exercise(
    "attention", "MultiheadSelfAttention", references.MultiheadSelfAttention,
    N_("MultiheadSelfAttention(d_model, n_heads, causal): x (B, T, C); wq, wk, wv, wo"),
    (
        attention_probe("(2, 5, 8), H=2", 8, 2, (2, 5, 8), False),
        attention_probe("(2, 5, 8), H=2, causal", 8, 2, (2, 5, 8), True),
        attention_probe("(2, 4, 6), H=3, causal", 6, 3, (2, 4, 6), True),
        attention_probe("(2, 4, 6), H=1", 6, 1, (2, 4, 6), False),
        attention_probe("(2, 4, 6), H=1, causal", 6, 1, (2, 4, 6), True),
        attention_probe("(2, 3, 4), H=C=4, causal", 4, 4, (2, 3, 4), True),
        attention_probe("(2, 5, 8) float32, H=2, causal", 8, 2, (2, 5, 8), True, dtype=np.float32),
        attention_probe("one position (2, 1, 8), H=2, causal", 8, 2, (2, 1, 8), True),
        attention_probe("scores ~ 150, float32 (2, 4, 8), H=4, causal", 8, 4, (2, 4, 8), True,
                        dtype=np.float32, scale=12.0),
        attention_probe("scores ~ 1000 (2, 4, 8), H=2", 8, 2, (2, 4, 8), False, scale=32.0),
        accumulation_probe((8, 2), (8, 8), (2, 4, 8), ATT, kwargs={"causal": True}),
    ),
    (4, 2), (2, 3, 4), difficulty=3, minutes=45,
)

# --- qk_norm ----------------------------------------------------------------------------------
QK = ("wq", "wk", "wv", "wo", "gamma_q", "gamma_k")


def _qk_layer(make, rng, d_model, n_heads, causal):
    """QKNormSelfAttention(d_model, n_heads, causal=causal) with random (C, C) weights and
    random QK-norm weights (D,), never the initial ones."""
    layer = make(d_model, n_heads, causal=causal)
    for name in QK:
        shape = (d_model // n_heads,) if name.startswith("gamma") else (d_model, d_model)
        layer.set_param(name, rng.standard_normal(shape))
    return layer


def qk_norm_probe(label, d_model, n_heads, xshape, causal, dtype=np.float64, scale=1.0):
    """A forward and backward of QKNormSelfAttention; x is drawn with standard deviation
    scale / sqrt(C). A tiny ``scale`` makes q and k so small that eps matters in the RMS: the
    norm of q and the norm of q / sqrt(D) then differ."""
    def run(rec, make, rng):
        layer = _qk_layer(make, rng, d_model, n_heads, causal)
        x = (rng.standard_normal(xshape) * scale / np.sqrt(d_model)).astype(dtype)
        _step(rec, layer, x, rng, QK)
    return Probe(label, run)


def qk_norm_accumulation(rec, make, rng):
    layer = _qk_layer(make, rng, 8, 2, True)
    _two_backward_calls(rec, layer, rng, (2, 4, 8), QK)


QK_NORM = Exercise(
    "qk_norm", "QKNormSelfAttention", references.QKNormSelfAttention,
    N_("QKNormSelfAttention(d_model, n_heads, causal): self-attention, RMSNorm on each head's q and "
       "k; wq, wk, wv, wo, gamma_q, gamma_k"),
    (
        qk_norm_probe("(2, 5, 8), H=2", 8, 2, (2, 5, 8), False),
        qk_norm_probe("(2, 5, 8), H=2, causal", 8, 2, (2, 5, 8), True),
        qk_norm_probe("(2, 4, 12), H=3, causal", 12, 3, (2, 4, 12), True),
        qk_norm_probe("(2, 4, 6), H=1", 6, 1, (2, 4, 6), False),
        qk_norm_probe("(2, 5, 8) float32, H=4, causal", 8, 4, (2, 5, 8), True, dtype=np.float32),
        qk_norm_probe("one position (2, 1, 8), H=2", 8, 2, (2, 1, 8), False),
        qk_norm_probe("large x, scale ~ 30 (2, 4, 8), H=2", 8, 2, (2, 4, 8), False, scale=30.0),
        qk_norm_probe("q and k near 0, eps matters (2, 4, 8), H=2", 8, 2, (2, 4, 8), False,
                      scale=3e-8),
        Probe("gradients accumulate (2, 4, 8), H=2, causal", qk_norm_accumulation),
    ),
    (4, 2), (2, 3, 4), difficulty=3, minutes=50,  # the attention exercise and two RMSNorms
)

# --- mlp_with_batchnorm -----------------------------------------------------------------------
MLP = ("w1", "b1", "gamma", "beta", "w2", "b2")
ZERO_ROUNDING = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-6}  # |db1|: 0 up to rounding


def _mlp_params(layer, rng, n_in, n_hidden, n_classes, logit_shift=0.0):
    """Random parameters; ``logit_shift`` is added to b2, and so to every logit."""
    shapes = {"w1": (n_in, n_hidden), "b1": (n_hidden,), "gamma": (n_hidden,), "beta": (n_hidden,),
              "w2": (n_hidden, n_classes), "b2": (n_classes,)}
    for name in MLP:
        layer.set_param(name, rng.standard_normal(shapes[name]) + (logit_shift if name == "b2" else 0.0))


def _rec_mlp_grads(rec, layer, dtype, suffix=""):
    """dw1 .. db2 as the layer stored them; db1 (b1 feeds the BatchNorm, which takes any shift
    of h away) is zero up to rounding, so it is compared absolutely."""
    for name in MLP:
        if name == "b1":
            rec("db1" + suffix, layer.grad(name), ZERO_ROUNDING[np.dtype(dtype)], "abs")
        else:
            rec("d" + name + suffix, layer.grad(name), F32 if dtype == np.float32 else F64)


def mlp_probe(label, n, sizes=(5, 6, 4), dtype=np.float64, logit_shift=0.0):
    """The loss, dx and every parameter gradient of MLPWithBatchNorm(*sizes) on a random batch
    of n rows with random integer targets, random parameters and a random scalar upstream
    gradient; ``logit_shift`` (on b2) moves every logit, which the softmax must not notice."""
    def run(rec, make, rng):
        layer = make(*sizes)
        _mlp_params(layer, rng, *sizes, logit_shift=logit_shift)
        x = rng.standard_normal((n, sizes[0])).astype(dtype)
        layer.to_dtype(MLP, x.dtype)
        targets = rng.integers(0, sizes[2], n)
        loss = layer.forward(x, targets)
        rec("loss", loss, _tol(x))
        if dtype != np.float64:
            rec("output dtype", str(np.asarray(loss).dtype), 0, "equal")
        layer.zero_grad(MLP)
        rec("dx", layer.backward(float(rng.uniform(0.5, 2.0))), _tol(x))
        _rec_mlp_grads(rec, layer, dtype)
    return Probe(label, run)


def mlp_accumulation_probe(n, sizes=(5, 6, 4)):
    """Two backward calls (two random scalar upstream gradients) after one forward: every
    parameter gradient must be their sum."""
    def run(rec, make, rng):
        layer = make(*sizes)
        _mlp_params(layer, rng, *sizes)
        layer.check_accumulates(MLP)
        layer.forward(rng.standard_normal((n, sizes[0])), rng.integers(0, sizes[2], n))
        layer.zero_grad(MLP)
        layer.backward(float(rng.uniform(0.5, 2.0)))
        layer.backward(float(rng.uniform(0.5, 2.0)))
        _rec_mlp_grads(rec, layer, np.float64, " after two backward calls")
    return Probe(f"gradients accumulate ({n}, {sizes[0]})", run)


MLP_WITH_BATCHNORM = Exercise(
    "mlp_with_batchnorm", "MLPWithBatchNorm", references.MLPWithBatchNorm,
    N_("MLPWithBatchNorm(n_in, n_hidden, n_classes): Linear, BatchNorm (training), tanh, Linear, "
       "mean cross-entropy; every gradient by hand"),
    (
        mlp_probe("(8, 5) -> 6 -> 4 classes", 8),
        mlp_probe("batch of 2 (2, 5) -> 6 -> 4", 2),
        mlp_probe("(8, 5) -> 6 -> 4 float32", 8, dtype=np.float32),
        mlp_probe("logits around 1000 (8, 5) -> 6 -> 4", 8, logit_shift=1000.0),
        mlp_accumulation_probe(8),
    ),
    (5, 6, 4), (4, 5), difficulty=3, minutes=45, example_extra=(np.array([0, 2, 1, 3]),),
)


# --- TransformerBlock (a residual feed-forward block, Pre-Norm or Post-Norm) ------------------
BLOCK = ("gamma", "beta", "w1", "b1", "w2", "b2")
POSITION_NAMES = {"pre": "Pre-Norm", "post": "Post-Norm"}


def _block_shapes(c, d_ff):
    return {"gamma": (c,), "beta": (c,), "w1": (c, d_ff), "b1": (d_ff,), "w2": (d_ff, c), "b2": (c,)}


def _block(make, rng, position, c, d_ff):
    layer = make(c, d_ff, position=position)
    for name, shape in _block_shapes(c, d_ff).items():
        layer.set_param(name, rng.standard_normal(shape))
    return layer


def block_probe(label, position, xshape, d_ff=6, dtype=np.float64, edit=None):
    """A forward and a backward of TransformerBlock(C, d_ff, position), every parameter random."""
    def run(rec, make, rng):
        layer = _block(make, rng, position, xshape[-1], d_ff)
        x = rng.standard_normal(xshape)
        if edit is not None:
            edit(x)
        _step(rec, layer, x.astype(dtype), rng, BLOCK)
    return Probe(f"{POSITION_NAMES[position]} {label}", run)


def block_accumulation_probe(position, xshape, d_ff=6):
    """Two backward calls after one forward: every parameter gradient must be their sum."""
    def run(rec, make, rng):
        layer = _block(make, rng, position, xshape[-1], d_ff)
        _two_backward_calls(rec, layer, rng, xshape, BLOCK)
    return Probe(f"{POSITION_NAMES[position]} gradients accumulate {xshape}", run)


TRANSFORMER_BLOCK = Exercise(
    "transformer_block", "TransformerBlock", references.FeedForwardBlock,
    N_("TransformerBlock(d_model, d_ff, position): x + F(LN(x)) or LN(x + F(x)), F a ReLU "
       "feed-forward; both positions graded"),
    tuple(probe for position in ("pre", "post") for probe in (
        block_probe("(2, 3, 4), d_ff 6", position, (2, 3, 4)),
        block_probe("rank 2 (5, 4), d_ff 3", position, (5, 4), d_ff=3),
        block_probe("(2, 3, 4) float32", position, (2, 3, 4), dtype=np.float32),
        block_probe("constant row (2, 3, 4)", position, (2, 3, 4), edit=_constant((0, 1))),
        block_accumulation_probe(position, (2, 3, 4)),
    )),
    (4, 6), (2, 3, 4), difficulty=3, minutes=40,
)

EXERCISES = {e.name: e for e in (BATCHNORM, LAYERNORM, RMSNORM, GROUPNORM, DROPOUT, SOFTMAX,
                                 LOG_SOFTMAX, DYT_EXERCISE, FOLD_BATCHNORM, FOLD_NORM_AFFINE,
                                 CROSS_ENTROPY, ATTENTION, QK_NORM, TRANSFORMER_BLOCK,
                                 MLP_WITH_BATCHNORM, SYNC_BATCHNORM)}


def path():
    """The exercises from easy to hard (then by time box): the order to practise them in."""
    return sorted(EXERCISES.values(), key=lambda e: (e.difficulty, e.minutes))
