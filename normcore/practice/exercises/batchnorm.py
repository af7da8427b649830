"""BatchNorm in practice: folding it (and a norm's affine) into a Linear, and an MLP that
trains with it."""

import numpy as np

from .. import references
from ...i18n import N_, translator
from ..driver import ContractError
from ..probes import F32, F64
from .base import Exercise, Probe, _tol

_ = translator("practice")


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


