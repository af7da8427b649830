"""Measure the NumPy-track ports of tests/practice_real4/ against PyTorch, before any grading.

Not a test and independent of normcore.practice: it loads each port (np_*.py), builds the
PyTorch computation the exercise names with the same random parameters, runs forward (and
backward) on the inputs the exercise cares about, and prints the max relative error of every
probe (float64 unless the probe says float32). The labels in MANIFEST.toml are read off
these numbers and the code.

    python tests/practice_real4/labelling/label_numpy.py [np_file.py ...]

Each port says which exercise it answers on a line "# exercise: NAME" near its top.
"""

import importlib.util
import re
import sys
import traceback
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

HERE = Path(__file__).parents[1]  # the corpus, beside this folder
torch.set_default_dtype(torch.float64)


def rel(a, b):
    """max |a - b| / max |b| (inf when shapes differ or a is not finite where b is)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:  # the same values in another shape are compared as values
        if a.size != b.size:
            return float("inf")
        a = a.reshape(b.shape)
    d = np.abs(a - b)
    if not np.all(np.isfinite(a)):
        return float("inf")
    return float(np.max(d) / max(np.max(np.abs(b)), 1e-300)) if d.size else 0.0


def T(a, grad=False):
    t = torch.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(grad)


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Probes:
    """Collects (probe name -> max relative error or note) for one file."""

    def __init__(self):
        self.rows = []

    def run(self, name, fn):
        try:
            out = fn()
        except Exception as exc:  # a port that raises is a finding, not a crash of this script
            out = f"ERROR {type(exc).__name__}: {str(exc)[:70]}"
        if isinstance(out, dict):
            for k, v in out.items():
                self.rows.append((f"{name}/{k}", v))
        else:
            self.rows.append((name, out))

    def print(self):
        worst = 0.0
        for name, v in self.rows:
            if isinstance(v, float):
                worst = max(worst, v)
                print(f"    {name:34s} {v:.3g}")
            else:
                print(f"    {name:34s} {v}")
        print(f"    {'WORST (numbers)':34s} {worst:.3g}")


def setp(param, value):
    param.data = np.array(value)
    param.grad = np.zeros_like(param.data)


def zero(*params):
    for p in params:
        p.grad = np.zeros_like(p.data)


# ----------------------------------------------------------------------------- batchnorm

def probe_batchnorm(mod, P):
    Cls = mod.BatchNorm1d
    rng = np.random.default_rng(1)

    def case(shape, momentum=0.1, eps=1e-5, steps=3, const=False, dtype=np.float64, scale=1.0):
        C = shape[1]
        bn = Cls(C, eps=eps, momentum=momentum)
        g, b = rng.normal(size=C) + 1, rng.normal(size=C)
        setp(bn.gamma, g.astype(dtype)), setp(bn.beta, b.astype(dtype))
        if dtype != np.float64:  # as module.to(float32): the buffers follow the parameters
            try:
                bn.running_mean = np.asarray(bn.running_mean).astype(dtype)
                bn.running_var = np.asarray(bn.running_var).astype(dtype)
            except AttributeError:  # read-only properties over the port's own buffers
                pass
        ref = torch.nn.BatchNorm1d(C, eps=eps, momentum=momentum)
        with torch.no_grad():
            ref.weight.copy_(T(g)), ref.bias.copy_(T(b))
        out = {}
        for _step in range(steps):
            x = (rng.normal(size=shape) * scale + 2).astype(dtype)
            if const:
                x[:, 0] = 3.0
            dy = rng.normal(size=shape).astype(dtype)
            zero(bn.gamma, bn.beta)
            y = bn.forward(x.copy())
            dx = bn.backward(dy.copy())
            xt = T(x, True)
            ref.weight.grad = None
            ref.bias.grad = None
            yt = ref(xt)
            yt.backward(T(dy))
            for k, a, r in (("y", y, yt), ("dx", dx, xt.grad), ("dgamma", bn.gamma.grad, ref.weight.grad),
                            ("dbeta", bn.beta.grad, ref.bias.grad),
                            ("running_mean", bn.running_mean, ref.running_mean),
                            ("running_var", bn.running_var, ref.running_var)):
                out[k] = max(out.get(k, 0.0), rel(a, r.detach().numpy()))
        bn.eval()
        ref.eval()
        x = (rng.normal(size=(3,) + tuple(shape[1:])) + 2).astype(dtype)
        dy = rng.normal(size=x.shape).astype(dtype)
        zero(bn.gamma, bn.beta)
        y = bn.forward(x.copy())
        dx = bn.backward(dy.copy())
        xt = T(x, True)
        yt = ref(xt)
        yt.backward(T(dy))
        out["running_shape_kept"] = 0.0 if np.shape(bn.running_mean) == (C,) else float("inf")
        out["eval_y"] = rel(y, yt.detach().numpy())
        out["eval_dx"] = rel(dx, xt.grad.numpy())
        if dtype != np.float64:
            out["dtype_kept"] = 0.0 if np.asarray(y).dtype == dtype else float("inf")
        return out

    P.run("(8,4)", lambda: case((8, 4)))
    P.run("(6,4,5)", lambda: case((6, 4, 5)))
    P.run("batch2", lambda: case((2, 4)))
    P.run("momentum0.3", lambda: case((8, 4), momentum=0.3))
    P.run("momentumNone", lambda: case((8, 4), momentum=None))
    P.run("eps1e-3_tinyvar", lambda: case((8, 4), eps=1e-3, scale=1e-2))
    P.run("const_channel", lambda: case((8, 4), const=True))
    P.run("float32", lambda: case((8, 4), dtype=np.float32, steps=1))


# ----------------------------------------------------------------------------- norms over trailing axes

def _trailing(mod, P, Cls, kind):
    rng = np.random.default_rng(2)

    def case(shape, ns, eps=1e-5, const=False, scale=1.0, dtype=np.float64):
        layer = Cls(ns, eps=eps) if eps != "none" else Cls(ns)
        g = rng.normal(size=ns) + 1
        setp(layer.gamma, g.astype(dtype))
        params = [layer.gamma]
        b = None
        if kind == "layernorm":
            b = rng.normal(size=ns)
            setp(layer.beta, b.astype(dtype))
            params.append(layer.beta)
        x = (rng.normal(size=shape) * scale + 0.5).astype(dtype)
        if const:
            x[0] = 2.0
        dy = rng.normal(size=shape).astype(dtype)
        out = {}
        for _rep in range(2):  # twice: accumulation of parameter gradients
            y = layer.forward(x.copy())
            dx = layer.backward(dy.copy())
        xt, gt = T(x, True), T(g, True)
        bt = T(b, True) if b is not None else None
        nsx = tuple(np.atleast_1d(ns))
        if kind == "layernorm":
            yt = F.layer_norm(xt, nsx, gt, bt, eps)
        else:
            yt = F.rms_norm(xt, nsx, gt, None if eps == "none" else eps)
        yt.backward(T(dy))
        out["y"] = rel(y, yt.detach().numpy())
        out["dx"] = rel(dx, xt.grad.numpy())
        out["dgamma_x2"] = rel(layer.gamma.grad, 2 * gt.grad.numpy())
        if bt is not None:
            out["dbeta_x2"] = rel(layer.beta.grad, 2 * bt.grad.numpy())
        if dtype != np.float64:
            out["dtype_kept"] = 0.0 if np.asarray(y).dtype == dtype else float("inf")
        return out

    eps = 1e-5 if kind == "layernorm" else "none"
    P.run("(4,6)", lambda: case((4, 6), 6, eps))
    P.run("(2,3,6)", lambda: case((2, 3, 6), 6, eps))
    P.run("(2,3,4)ns(3,4)", lambda: case((2, 3, 4), (3, 4), eps))
    P.run("(1,6)", lambda: case((1, 6), 6, eps))
    P.run("eps1e-3", lambda: case((4, 6), 6, 1e-3))
    P.run("tinyvar", lambda: case((4, 6), 6, eps, scale=1e-4))
    P.run("const_row", lambda: case((4, 6), 6, eps, const=True))
    P.run("float32", lambda: case((4, 6), 6, eps, dtype=np.float32))


def probe_layernorm(mod, P):
    _trailing(mod, P, mod.LayerNorm, "layernorm")


def probe_rmsnorm(mod, P):
    _trailing(mod, P, mod.RMSNorm, "rmsnorm")


# ----------------------------------------------------------------------------- groupnorm

def probe_groupnorm(mod, P):
    rng = np.random.default_rng(3)

    def case(shape, G, eps=1e-5, scale=1.0):
        C = shape[1]
        gn = mod.GroupNorm(G, C, eps=eps)
        g, b = rng.normal(size=C) + 1, rng.normal(size=C)
        setp(gn.gamma, g), setp(gn.beta, b)
        x = rng.normal(size=shape) * scale + 1
        dy = rng.normal(size=shape)
        y = gn.forward(x.copy())
        dx = gn.backward(dy.copy())
        xt, gt, bt = T(x, True), T(g, True), T(b, True)
        yt = F.group_norm(xt, G, gt, bt, eps)
        yt.backward(T(dy))
        return {"y": rel(y, yt.detach().numpy()), "dx": rel(dx, xt.grad.numpy()),
                "dgamma": rel(gn.gamma.grad, gt.grad.numpy()), "dbeta": rel(gn.beta.grad, bt.grad.numpy())}

    P.run("(2,6,5)G3", lambda: case((2, 6, 5), 3))
    P.run("(2,6,5)G1", lambda: case((2, 6, 5), 1))
    P.run("(2,6,5)G6", lambda: case((2, 6, 5), 6))
    P.run("(3,4)G2", lambda: case((3, 4), 2))
    P.run("(2,4,3,3)G2", lambda: case((2, 4, 3, 3), 2))
    P.run("eps1e-3_tiny", lambda: case((2, 6, 5), 3, 1e-3, 1e-2))

    def f32():
        gn = mod.GroupNorm(3, 6)
        setp(gn.gamma, np.ones(6, np.float32)), setp(gn.beta, np.zeros(6, np.float32))
        y = gn.forward(rng.normal(size=(2, 6, 5)).astype(np.float32))
        return {"dtype_kept": 0.0 if np.asarray(y).dtype == np.float32 else float("inf")}
    P.run("float32", f32)


# ----------------------------------------------------------------------------- dropout

def probe_dropout(mod, P):
    def layer_and_input(p, shape=(400, 50)):
        d = mod.Dropout(p, rng=0)
        x = np.random.default_rng(4).normal(size=shape) + 3.0
        return d, x

    def stats(p):
        d, x = layer_and_input(p)
        y = d.forward(x.copy())
        dy = np.ones_like(x)
        dx = d.backward(dy.copy())
        kept = y != 0
        out = {"frac_dropped": f"{1 - kept.mean():.3f} (p={p})"}
        if kept.any():
            out["kept_scale"] = f"{np.unique(np.round(y[kept] / x[kept], 6))[:3]} (want {1 / (1 - p):.6g})"
        out["dx_zero_where_y_zero"] = str(bool(np.array_equal(dx == 0, ~kept)))
        nz = dx[dx != 0]
        out["dx_scale"] = f"{np.unique(np.round(nz, 6))[:3]}" if nz.size else "all zero"
        return out

    def eval_stats(p):
        d, x = layer_and_input(p)
        d.forward(x.copy())  # a training step first: its mask must not leak into evaluation
        d.eval()
        dy = np.ones_like(x)
        ye = d.forward(x.copy())
        out = {"eval_identity": str(bool(np.array_equal(ye, x)))}
        dxe = d.backward(dy.copy())
        out["eval_backward_is_dy"] = str(bool(np.array_equal(dxe, dy)))
        return out

    P.run("eval p=0.3", lambda: eval_stats(0.3))

    def fresh_eval():
        d, x = layer_and_input(0.3)
        d.eval()
        y = d.forward(x.copy())
        dx = d.backward(np.ones_like(x))
        return {"fresh_eval_identity": str(bool(np.array_equal(y, x))),
                "fresh_eval_backward_is_dy": str(bool(np.array_equal(dx, np.ones_like(x))))}
    P.run("fresh eval p=0.3", fresh_eval)
    P.run("p=0.3", lambda: stats(0.3))
    P.run("p=0.0", lambda: stats(0.0))
    P.run("p=1.0", lambda: {"y_all_zero_finite": str(bool(np.all(
        mod.Dropout(1.0, rng=0).forward(np.ones((4, 5))) == 0)))})

    def seeded():
        x = np.ones((20, 20))
        a = mod.Dropout(0.5, rng=7).forward(x)
        b = mod.Dropout(0.5, rng=7).forward(x)
        return str(bool(np.array_equal(a, b)))
    P.run("seeded_same_mask", seeded)

    def batch_shared():
        y = mod.Dropout(0.5, rng=1).forward(np.ones((50, 40)))
        return str(bool(np.all((y == 0).all(0) | (y != 0).all(0))))
    P.run("mask_shared_over_batch", batch_shared)

    def f32():
        y = mod.Dropout(0.3, rng=0).forward(np.ones((10, 10), np.float32))
        return str(np.asarray(y).dtype)
    P.run("float32_dtype", f32)


# ----------------------------------------------------------------------------- softmax family

def probe_softmax(mod, P, log=False):
    Cls = mod.LogSoftmax if log else mod.Softmax
    rng = np.random.default_rng(5)
    fn = torch.log_softmax if log else torch.softmax

    def case(shape, axis, shift=0.0, low=None, dtype=np.float64):
        x = (rng.normal(size=shape) + shift).astype(dtype)
        if low is not None:
            x[..., 0] -= low
        dy = rng.normal(size=shape)
        s = Cls(axis=axis)
        y = s.forward(x.copy())
        dx = s.backward(dy.copy())
        xt = T(x, True)
        yt = fn(xt, axis)
        yt.backward(T(dy))
        out = {"y": rel(y, yt.detach().numpy()), "dx": rel(dx, xt.grad.numpy())}
        if dtype != np.float64:
            out["dtype_kept"] = 0.0 if np.asarray(y).dtype == dtype else float("inf")
        return out

    P.run("(3,4,5)ax-1", lambda: case((3, 4, 5), -1))
    P.run("(3,4,5)ax1", lambda: case((3, 4, 5), 1))
    P.run("(3,4,5)ax0", lambda: case((3, 4, 5), 0))
    P.run("(4,6)+1000", lambda: case((4, 6), -1, 1000.0))
    P.run("(4,6)one_at-800", lambda: case((4, 6), -1, 0.0, 800.0))
    P.run("(4,6)float32", lambda: case((4, 6), -1, dtype=np.float32))


def probe_log_softmax(mod, P):
    probe_softmax(mod, P, log=True)


# ----------------------------------------------------------------------------- cross-entropy

def probe_cross_entropy(mod, P):
    rng = np.random.default_rng(6)

    def case(N, C, shift=0.0, wrong=None, dloss=1.0, dtype=np.float64):
        x = (rng.normal(size=(N, C)) + shift).astype(dtype)
        t = rng.integers(0, C, size=N)
        if wrong is not None:
            x[np.arange(N), t] -= wrong
        x0 = x.copy()
        ce = mod.CrossEntropyLoss()
        loss = ce.forward(x, t)
        dl = ce.backward(dloss)
        xt = T(x0, True)
        lt = F.cross_entropy(xt, torch.tensor(t))
        (lt * dloss).backward()
        out = {"loss": rel(loss, lt.item()), "dlogits": rel(dl, xt.grad.numpy()),
               "logits_untouched": 0.0 if np.array_equal(x, x0) else float("inf")}
        if dtype != np.float64:
            out["dtype_kept"] = 0.0 if np.asarray(dl).dtype == dtype else float("inf")
            out["loss_dtype_kept"] = 0.0 if np.asarray(loss).dtype == dtype else float("inf")
        return out

    P.run("(5,4)", lambda: case(5, 4))
    P.run("(5,4)dloss2.5", lambda: case(5, 4, dloss=2.5))
    P.run("(1,3)", lambda: case(1, 3))
    P.run("(4,5)+1000", lambda: case(4, 5, 1000.0))
    P.run("(4,5)target-800", lambda: case(4, 5, 0.0, 800.0))
    P.run("float32", lambda: case(5, 4, dtype=np.float32))


# ----------------------------------------------------------------------------- dyt

def probe_dyt(mod, P):
    rng = np.random.default_rng(7)

    def case(shape, ns, alpha=0.7, scale=2.0):
        d = mod.DyT(ns, alpha_init=alpha)
        g, b = rng.normal(size=ns) + 1, rng.normal(size=ns)
        setp(d.gamma, g), setp(d.beta, b)
        x = rng.normal(size=shape) * scale
        dy = rng.normal(size=shape)
        for _ in range(2):
            y = d.forward(x.copy())
            dx = d.backward(dy.copy())
        xt, at, gt, bt = T(x, True), T([alpha], True), T(g, True), T(b, True)
        yt = gt * torch.tanh(at * xt) + bt
        yt.backward(T(dy))
        return {"y": rel(y, yt.detach().numpy()), "dx": rel(dx, xt.grad.numpy()),
                "dalpha_x2": rel(d.alpha.grad, 2 * at.grad.numpy()),
                "dgamma_x2": rel(d.gamma.grad, 2 * gt.grad.numpy()),
                "dbeta_x2": rel(d.beta.grad, 2 * bt.grad.numpy())}

    P.run("(4,6)", lambda: case((4, 6), 6))
    P.run("(2,3,6)", lambda: case((2, 3, 6), 6, 1.3))
    P.run("(2,3,4)ns(3,4)", lambda: case((2, 3, 4), (3, 4)))
    P.run("(4,6)x~1000", lambda: case((4, 6), 6, scale=1000.0))

    def f32():
        d = mod.DyT(6, alpha_init=0.7)
        for p in (d.alpha, d.gamma, d.beta):
            setp(p, np.asarray(p.data, np.float32))
        y = d.forward(np.ones((2, 6), np.float32))
        return {"dtype_kept": 0.0 if np.asarray(y).dtype == np.float32 else float("inf")}
    P.run("float32", f32)


# ----------------------------------------------------------------------------- attention

def torch_mha(x, wq, wk, wv, wo, H, causal):
    B, Tn, C = x.shape
    D = C // H

    def split(t):
        return t.reshape(B, Tn, H, D).transpose(1, 2)
    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    s = q @ k.transpose(-1, -2) / D ** 0.5
    if causal:
        s = s.masked_fill(torch.triu(torch.ones(Tn, Tn, dtype=torch.bool), 1), float("-inf"))
    a = torch.softmax(s, -1)
    o = (a @ v).transpose(1, 2).reshape(B, Tn, C)
    return o @ wo


def probe_attention(mod, P):
    rng = np.random.default_rng(8)

    def case(B, Tn, C, H, causal, scale=1.0):
        m = mod.MultiheadSelfAttention(C, H, causal=causal)
        ws = [rng.normal(size=(C, C)) / np.sqrt(C) * scale for _ in range(4)]
        for p, w in zip((m.wq, m.wk, m.wv, m.wo), ws):
            setp(p, w)
        x = rng.normal(size=(B, Tn, C))
        dy = rng.normal(size=x.shape)
        y = m.forward(x.copy())
        dx = m.backward(dy.copy())
        xt = T(x, True)
        wt = [T(w, True) for w in ws]
        yt = torch_mha(xt, *wt, H, causal)
        yt.backward(T(dy))
        out = {"y": rel(y, yt.detach().numpy()), "dx": rel(dx, xt.grad.numpy())}
        for name, p, t in zip(("dwq", "dwk", "dwv", "dwo"), (m.wq, m.wk, m.wv, m.wo), wt):
            out[name] = rel(p.grad, t.grad.numpy())
        return out

    P.run("B2T5C8H2", lambda: case(2, 5, 8, 2, False))
    P.run("B2T5C8H2causal", lambda: case(2, 5, 8, 2, True))
    P.run("B1T4C6H1causal", lambda: case(1, 4, 6, 1, True))
    P.run("B2T3C8H4large", lambda: case(2, 3, 8, 4, False, 30.0))

    def f32():
        m = mod.MultiheadSelfAttention(8, 2, causal=True)
        for p in (m.wq, m.wk, m.wv, m.wo):
            setp(p, (rng.normal(size=(8, 8)) / 3).astype(np.float32))
        y = m.forward(rng.normal(size=(2, 5, 8)).astype(np.float32))
        return {"dtype_kept": 0.0 if np.asarray(y).dtype == np.float32 else float("inf")}
    P.run("float32", f32)


# ----------------------------------------------------------------------------- fold_batchnorm

def probe_fold_batchnorm(mod, P):
    rng = np.random.default_rng(9)

    def case(out_f=5, in_f=3, var_scale=1.0, eps=1e-5, mean_shift=0.0, nobias=False, dtype=np.float64):
        W = rng.normal(size=(out_f, in_f)).astype(dtype)
        b = (np.zeros(out_f) if nobias else rng.normal(size=out_f)).astype(dtype)
        rm = (rng.normal(size=out_f) + mean_shift).astype(dtype)
        rv = (rng.uniform(0.5, 2, size=out_f) * var_scale).astype(dtype)
        g, be = (rng.normal(size=out_f) + 1).astype(dtype), rng.normal(size=out_f).astype(dtype)
        args = [a.copy() for a in (W, b, rm, rv, g, be)]
        W2, b2 = mod.fold_batchnorm(*args, eps=eps)
        Wt, bt = torch.nn.utils.fusion.fuse_linear_bn_weights(
            T(W), T(b), T(rm), T(rv), T(eps), T(g), T(be))
        out = {"W'": rel(W2, Wt.detach().numpy()), "b'": rel(b2, bt.detach().numpy()),
               "inputs_untouched": 0.0 if all(np.array_equal(a, c) for a, c in zip(args, (W, b, rm, rv, g, be)))
               else float("inf")}
        if dtype != np.float64:
            out["dtype_kept"] = 0.0 if np.asarray(W2).dtype == dtype and np.asarray(b2).dtype == dtype else float("inf")
        return out

    P.run("random", lambda: case())
    P.run("non_square(5,3)", lambda: case(5, 3))
    P.run("square(4,4)", lambda: case(4, 4))
    P.run("var~eps", lambda: case(var_scale=1e-5))
    P.run("eps0.1", lambda: case(eps=0.1))
    P.run("mean+100", lambda: case(mean_shift=100.0))
    P.run("no_bias", lambda: case(nobias=True))
    P.run("float32", lambda: case(dtype=np.float32))


# ----------------------------------------------------------------------------- mlp_with_batchnorm

def probe_mlp_with_batchnorm(mod, P):
    rng = np.random.default_rng(10)

    def case(N=8, n_in=5, n_h=6, n_c=4, dloss=1.0, w2scale=1.0):
        m = mod.MLPWithBatchNorm(n_in, n_h, n_c)
        vals = {"w1": rng.normal(size=(n_in, n_h)) / 2, "b1": rng.normal(size=n_h),
                "gamma": rng.normal(size=n_h) + 1, "beta": rng.normal(size=n_h),
                "w2": rng.normal(size=(n_h, n_c)) * w2scale, "b2": rng.normal(size=n_c)}
        for k, v in vals.items():
            setp(getattr(m, k), v)
        x = rng.normal(size=(N, n_in))
        t = rng.integers(0, n_c, size=N)
        loss = m.forward(x.copy(), t)
        dx = m.backward(dloss)
        tv = {k: T(v, True) for k, v in vals.items()}
        xt = T(x, True)
        h = xt @ tv["w1"] + tv["b1"]
        mu = h.mean(0)
        var = ((h - mu) ** 2).mean(0)
        hb = tv["gamma"] * (h - mu) / torch.sqrt(var + 1e-5) + tv["beta"]
        logits = torch.tanh(hb) @ tv["w2"] + tv["b2"]
        lt = F.cross_entropy(logits, torch.tensor(t))
        (lt * dloss).backward()
        out = {"loss": rel(loss, lt.item()), "dx": rel(dx, xt.grad.numpy())}
        for k in vals:
            out["d" + k] = rel(getattr(m, k).grad, tv[k].grad.numpy())
        # db1 is 0 up to rounding (the BatchNorm removes the bias): the absolute error
        out["db1"] = float(np.max(np.abs(m.b1.grad - tv["b1"].grad.numpy())))
        return out

    P.run("N8", lambda: case())
    P.run("N2", lambda: case(N=2))
    P.run("dloss1.7", lambda: case(dloss=1.7))
    P.run("w2x300(confident)", lambda: case(w2scale=300.0))


# ----------------------------------------------------------------------------- transformer_block

def probe_transformer_block(mod, P):
    rng = np.random.default_rng(11)

    def case(position, shape=(2, 3, 6), d_ff=8):
        C = shape[-1]
        blk = mod.TransformerBlock(C, d_ff, position=position)
        vals = {"gamma": rng.normal(size=C) + 1, "beta": rng.normal(size=C),
                "w1": rng.normal(size=(C, d_ff)) / 2, "b1": rng.normal(size=d_ff),
                "w2": rng.normal(size=(d_ff, C)) / 2, "b2": rng.normal(size=C)}
        for k, v in vals.items():
            setp(getattr(blk, k), v)
        x = rng.normal(size=shape)
        dy = rng.normal(size=shape)
        y = blk.forward(x.copy())
        dx = blk.backward(dy.copy())
        tv = {k: T(v, True) for k, v in vals.items()}
        xt = T(x, True)

        def ffn(h):
            return torch.relu(h @ tv["w1"] + tv["b1"]) @ tv["w2"] + tv["b2"]

        def ln(h):
            return F.layer_norm(h, (C,), tv["gamma"], tv["beta"], 1e-5)
        yt = xt + ffn(ln(xt)) if position == "pre" else ln(xt + ffn(xt))
        yt.backward(T(dy))
        out = {"y": rel(y, yt.detach().numpy()), "dx": rel(dx, xt.grad.numpy())}
        for k in vals:
            out["d" + k] = rel(getattr(blk, k).grad, tv[k].grad.numpy())
        return out

    P.run("pre", lambda: case("pre"))
    P.run("post", lambda: case("post"))
    P.run("pre(4,6)", lambda: case("pre", (4, 6)))


PROBES = {name[len("probe_"):]: fn for name, fn in globals().items() if name.startswith("probe_")}


def main(argv):
    files = [HERE / a for a in argv] if argv else sorted(HERE.glob("np_*.py"))
    for path in files:
        text = path.read_text()
        m = re.search(r"^# exercise: (\w+)", text, re.M)
        print(f"== {path.name}  [{m.group(1) if m else '?'}]")
        if not m:
            continue
        P = Probes()
        try:
            mod = load(path)
            PROBES[m.group(1)](mod, P)
        except Exception:
            traceback.print_exc()
        P.print()


if __name__ == "__main__":
    main(sys.argv[1:])
