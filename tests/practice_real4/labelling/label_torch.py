"""Measure the PyTorch-track ports of this corpus (pt_*.py) against PyTorch, before any grading.

Not a test, and it does not import normcore.practice: it builds each port and the matching
torch layer (torch.nn.LayerNorm, RMSNorm, BatchNorm1d, GroupNorm, softmax, log_softmax,
cross_entropy, scaled_dot_product_attention, Linear + BatchNorm1d for the fold; DyT, the
QK-norm attention and the residual block from torch operations) with the same random
parameters, runs the forward and autograd's backward on the inputs each exercise cares about
(random, several shapes, small variance, a constant row, float32, float16 for RMSNorm,
running statistics and eval mode for BatchNorm, large logits), and prints the max relative
error of every observation, plus the module's parameter, buffer and state_dict names.

    python tests/practice_real4/labelling/label_torch.py [--all] [pt_file.py ...]

Without --all only the observations off by more than 1e-10 (or not fine) are printed.

The relative error of an observation is max|port - torch| / max|torch| (nan where only one
side is nan, "shape" or the exception's name where the port cannot produce it).
"""

import importlib.util
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

HERE = Path(__file__).parents[1]  # the corpus, beside this folder


def load(path):
    """The port's module, imported from its file."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rel(a, b):
    """max|a - b| / max|b| in float64; nan positions must agree."""
    if a is None or b is None:
        return "missing" if a is not b else 0.0
    a, b = torch.as_tensor(a).detach().double(), torch.as_tensor(b).detach().double()
    if a.shape != b.shape:
        return "shape"
    bad_a, bad_b = ~torch.isfinite(a), ~torch.isfinite(b)
    if (bad_a != bad_b).any():
        return float("nan")
    if bad_a.any() and not torch.equal(a[bad_a].nan_to_num(), b[bad_b].nan_to_num()):
        return float("nan")
    a, b = a[~bad_a], b[~bad_b]
    if a.numel() == 0:
        return 0.0
    scale = b.abs().max().item()
    return (a - b).abs().max().item() / (scale if scale > 0 else 1.0)


def attempt(fn):
    """fn() or the exception's name (a port that crashes is an observation too)."""
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - any failure of the port is recorded
        return f"{type(error).__name__}: {str(error)[:70]}"


def names(module):
    return ([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()],
            list(module.state_dict()))


class Report:
    """Rows of (probe, observation, error) for one file; the worst numeric error."""

    def __init__(self, name):
        self.name, self.rows = name, []

    def add(self, probe, observation, value):
        self.rows.append((probe, observation, value))

    def compare(self, probe, pairs):
        for observation, (mine, theirs) in pairs.items():
            self.add(probe, observation, attempt(lambda: rel(mine, theirs)))

    def print(self, everything=False):
        """Every row with --all; otherwise the rows off by more than 1e-10 or not fine."""
        print(f"== {self.name}")
        worst = 0.0
        for probe, observation, value in self.rows:
            fine = value in ("ok", "same") or (isinstance(value, float) and value <= 1e-10)
            if isinstance(value, float):
                worst = max(worst, value if value == value else float("inf"))
            elif not fine and not isinstance(value, (bool, int)):
                worst = float("inf")
            if everything or not fine:
                text = f"{value:.2e}" if isinstance(value, float) else str(value)
                print(f"   {probe:<44} {observation:<22} {text}")
        print(f"   worst relative error: {worst:.2e}")


def randn(shape, dtype=torch.float64, scale=1.0, shift=0.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * scale + shift).to(dtype)


def copy_params(port, values):
    """Set the port's parameters named in values (the contract's names)."""
    with torch.no_grad():
        for name, p in port.named_parameters():
            if name in values and values[name].shape == p.shape:
                p.copy_(values[name].to(p.dtype))


def run_layer(layer, x, dy, param_names):
    """Forward and backward of a module: output, dx and the parameters' gradients."""
    x = x.clone().requires_grad_(True)
    before = x.detach().clone()
    y = layer(x)
    y.backward(dy.to(y.dtype))
    grads = {f"d{n}": getattr(layer, n).grad if getattr(layer, n, None) is not None else None
             for n in param_names}
    return {"forward": y.detach(), "dx": x.grad, **grads, "input unchanged": before}, x


def compare_layers(report, probe, port, ref, x, dy, param_names):
    """The port and the torch layer on the same x and dy."""
    mine = attempt(lambda: run_layer(port, x, dy, param_names))
    theirs = run_layer(ref, x, dy, param_names)[0]
    if isinstance(mine, str):
        report.add(probe, "forward", mine)
        return
    mine, x_used = mine
    pairs = {k: (mine[k], theirs[k]) for k in theirs if k != "input unchanged"}
    report.compare(probe, pairs)
    report.add(probe, "output dtype", "ok" if mine["forward"].dtype == theirs["forward"].dtype
               else f"{mine['forward'].dtype}")
    if not torch.equal(x_used.detach(), mine["input unchanged"]):
        report.add(probe, "input unchanged", "CHANGED")


def module_names(report, port, ref):
    mine, theirs = names(port), names(ref)
    for kind, a, b in zip(("parameters", "buffers", "state_dict"), mine, theirs):
        report.add("module", kind, "same" if a == b else f"{a} vs torch {b}")


# ---------------------------------------------------------------- norms with trailing dims

def trailing_norm(report, module, cls_name, torch_cls, params, cases):
    cls = getattr(module, cls_name)
    module_names(report, cls(6), torch_cls(6))
    for label, ns, shape, kwargs, dtype, scale, shift, edit in cases:
        def make(c):
            return c(ns, **kwargs).to(dtype)
        port = attempt(lambda: make(cls))
        if isinstance(port, str):
            report.add(label, "constructor", port)
            continue
        ref = make(torch_cls)
        values = {p: randn(ns if isinstance(ns, tuple) else (ns,), seed=3 + i) + (1.0 if p == "weight" else 0.0)
                  for i, p in enumerate(params)}
        copy_params(port, values)
        copy_params(ref, values)
        x = randn(shape, dtype, scale, shift, seed=1)
        if edit == "constant":
            x[1] = 0.7
        elif edit == "zero":
            x[1] = 0.0
        compare_layers(report, label, port, ref, x, randn(shape, dtype, seed=2), params)


def norm_cases(extra=()):
    f64 = torch.float64
    return [
        ("(4, 6)", 6, (4, 6), {"eps": 1e-5}, f64, 1.0, 0.0, None),
        ("(2, 3, 5), rank 3", 5, (2, 3, 5), {"eps": 1e-5}, f64, 1.0, 0.0, None),
        ("(2, 3, 4, 5), ns (4, 5)", (4, 5), (2, 3, 4, 5), {"eps": 1e-5}, f64, 1.0, 0.0, None),
        ("(4, 6) float32", 6, (4, 6), {"eps": 1e-5}, torch.float32, 1.0, 0.0, None),
        ("square (6, 6)", 6, (6, 6), {"eps": 1e-5}, f64, 1.0, 0.0, None),
        ("constant row (3, 6)", 6, (3, 6), {"eps": 1e-5}, f64, 1.0, 0.0, "constant"),
        ("small variance (4, 6)", 6, (4, 6), {"eps": 1e-5}, f64, 3e-3, 2e-3, None),
        ("eps=1e-3 (4, 6)", 6, (4, 6), {"eps": 1e-3}, f64, 0.1, 0.0, None),
    ] + list(extra)


def label_layernorm(report, module):
    trailing_norm(report, module, "LayerNorm", torch.nn.LayerNorm, ("weight", "bias"),
                  norm_cases([("one sample (1, 6)", 6, (1, 6), {"eps": 1e-5}, torch.float64, 1.0, 0.0, None)]))


def label_rmsnorm(report, module):
    f16 = torch.float16
    trailing_norm(report, module, "RMSNorm", torch.nn.RMSNorm, ("weight",), norm_cases([
        ("zero row (3, 6)", 6, (3, 6), {"eps": 1e-5}, torch.float64, 1.0, 0.0, "zero"),
        ("default eps, x ~ 1e-7 (4, 6)", 6, (4, 6), {}, torch.float64, 1e-7, 0.0, None),
        ("float16 |x| ~ 300", 6, (4, 6), {"eps": 1e-5}, f16, 300.0, 0.0, None),
        ("float16 |x| ~ 1", 6, (4, 6), {"eps": 1e-5}, f16, 1.0, 0.0, None),
        ("float16 eps=None |x| ~ 0.01", 6, (4, 6), {}, f16, 0.01, 0.0, None),
    ]))


def label_groupnorm(report, module):
    cls = module.GroupNorm
    module_names(report, cls(2, 6), torch.nn.GroupNorm(2, 6))
    cases = [("(3, 6), G=3", 3, 6, (3, 6), torch.float64, 1.0, None),
             ("(2, 6, 5), G=2", 2, 6, (2, 6, 5), torch.float64, 1.0, None),
             ("(2, 6, 3, 2), G=3", 3, 6, (2, 6, 3, 2), torch.float64, 1.0, None),
             ("(2, 4, 3), G=1", 1, 4, (2, 4, 3), torch.float64, 1.0, None),
             ("(2, 4, 3), G=C=4", 4, 4, (2, 4, 3), torch.float64, 1.0, None),
             ("(2, 6, 5) float32", 2, 6, (2, 6, 5), torch.float32, 1.0, None),
             ("constant group (2, 4, 3), G=2", 2, 4, (2, 4, 3), torch.float64, 1.0, "constant"),
             ("small variance (2, 6, 5)", 2, 6, (2, 6, 5), torch.float64, 3e-3, None)]
    for label, g, c, shape, dtype, scale, edit in cases:
        port = attempt(lambda: cls(g, c, eps=1e-5).to(dtype))
        if isinstance(port, str):
            report.add(label, "constructor", port)
            continue
        ref = torch.nn.GroupNorm(g, c, eps=1e-5).to(dtype)
        values = {"weight": randn((c,), seed=3) + 1.0, "bias": randn((c,), seed=4)}
        copy_params(port, values)
        copy_params(ref, values)
        x = randn(shape, dtype, scale, seed=1)
        if edit == "constant":
            x[0, :2] = 0.3
        compare_layers(report, label, port, ref, x, randn(shape, dtype, seed=2), ("weight", "bias"))


# ---------------------------------------------------------------- BatchNorm

def running(layer, which):
    value = getattr(layer, f"running_{which}", None)
    return None if value is None else value.detach().reshape(-1)


def label_batchnorm(report, module):
    cls = module.BatchNorm1d
    module_names(report, cls(4), torch.nn.BatchNorm1d(4))
    cases = [("train (8, 4), 3 steps", (8, 4), {}, torch.float64, 3),
             ("train (4, 3, 5), rank 3, 2 steps", (4, 3, 5), {}, torch.float64, 2),
             ("square (4, 3, 3), C = L", (4, 3, 3), {}, torch.float64, 1),
             ("batch of 2 (2, 4)", (2, 4), {}, torch.float64, 1),
             ("float32 (8, 4)", (8, 4), {}, torch.float32, 1),
             ("momentum=0.3 (8, 3), 3 steps", (8, 3), {"momentum": 0.3}, torch.float64, 3),
             ("momentum=None (8, 3), 3 steps", (8, 3), {"momentum": None}, torch.float64, 3)]
    for label, shape, kwargs, dtype, steps in cases:
        c = shape[1]
        port = attempt(lambda: cls(c, **kwargs).to(dtype))
        if isinstance(port, str):
            report.add(label, "constructor", port)
            continue
        ref = torch.nn.BatchNorm1d(c, **kwargs).to(dtype)
        values = {"weight": randn((c,), seed=3) + 1.0, "bias": randn((c,), seed=4)}
        copy_params(port, values)
        copy_params(ref, values)
        for step in range(steps):
            x = randn(shape, dtype, 2.0, 1.0 + step, seed=10 + step)
            compare_layers(report, f"{label}: train step {step + 1}", port, ref, x,
                           randn(shape, dtype, seed=20 + step), ("weight", "bias"))
            for which in ("mean", "var"):
                report.add(f"{label}: train step {step + 1}", f"running_{which}",
                           attempt(lambda: rel(running(port, which), running(ref, which))))
            r = getattr(port, "running_mean", None)
            if isinstance(r, torch.Tensor) and r.requires_grad:
                report.add(f"{label}: train step {step + 1}", "running_mean grad", "HAS HISTORY")
        port.eval()
        ref.eval()
        x = randn(shape, dtype, 2.0, 0.5, seed=30)
        compare_layers(report, f"{label}: eval", port, ref, x, randn(shape, dtype, seed=31),
                       ("weight", "bias"))
        with torch.no_grad():
            report.add(f"{label}: eval under no_grad", "forward",
                       attempt(lambda: rel(port(x), ref(x))))


# ---------------------------------------------------------------- Dropout

def label_dropout(report, module):
    cls = module.Dropout
    module_names(report, cls(0.5), torch.nn.Dropout(0.5))
    for p in (0.2, 0.5, 0.8):
        layer = cls(p)
        layer.train()
        torch.manual_seed(0)
        x = (randn((400, 50), seed=1).abs() + 0.5).requires_grad_(True)
        y = attempt(lambda: layer(x))
        if isinstance(y, str):
            report.add(f"train p={p}", "forward", y)
            continue
        dropped = (y == 0)
        kept = ~dropped
        report.add(f"train p={p}", "fraction dropped", round(dropped.double().mean().item(), 3))
        report.add(f"train p={p}", "kept scale * (1 - p)",
                   round(((y[kept] / x[kept]).mean() * (1 - p)).item(), 6))
        y.backward(torch.ones_like(y))
        agree = ((x.grad == 0) == dropped).double().mean().item()
        report.add(f"train p={p}", "dx zero where dropped", round(agree, 4))
        report.add(f"train p={p}", "dx scale * (1 - p)", round((x.grad[kept].mean() * (1 - p)).item(), 6))
        report.add(f"train p={p}", "rows share a mask", bool((dropped == dropped[0]).all().item()))
        layer.eval()
        x2 = randn((4, 5), seed=5).requires_grad_(True)
        y2 = layer(x2)
        report.add(f"eval p={p}", "forward", rel(y2, x2))
        y2.backward(torch.ones_like(y2))
        report.add(f"eval p={p}", "dx", rel(x2.grad, torch.ones_like(x2)))
    for p in (0.0, 1.0):
        layer = cls(p)
        x = randn((4, 5), seed=6)
        y = attempt(lambda: layer(x))
        report.add(f"train p={p}", "forward", y if isinstance(y, str) else
                   rel(y, x if p == 0 else torch.zeros_like(x)))
    for dtype in (torch.float32, torch.float16):
        y = attempt(lambda: cls(0.5)(randn((4, 5), dtype, seed=7)))
        report.add(f"train {dtype}", "output dtype", y if isinstance(y, str) else
                   ("ok" if y.dtype == dtype else str(y.dtype)))


# ---------------------------------------------------------------- softmax family

def label_softmax_like(report, module, cls_name, torch_fn, cases):
    cls = getattr(module, cls_name)
    module_names(report, cls(-1), torch.nn.Softmax(-1))
    for label, dim, shape, dtype, scale, shift, edit in cases:
        layer = cls(dim)
        x = randn(shape, dtype, scale, shift, seed=1)
        if edit == "low":
            x[..., 1] -= 800.0
        dy = randn(shape, dtype, seed=2)

        def run(f):
            xx = x.clone().requires_grad_(True)
            y = f(xx)
            y.backward(dy)
            return {"forward": y.detach(), "dx": xx.grad}
        mine = attempt(lambda: run(layer))
        if isinstance(mine, str):
            report.add(label, "forward", mine)
            continue
        theirs = run(lambda t: torch_fn(t, dim))
        report.compare(label, {k: (mine[k], theirs[k]) for k in theirs})


def softmax_cases(extra=()):
    f64 = torch.float64
    return [("(4, 6), dim=-1", -1, (4, 6), f64, 1.0, 0.0, None),
            ("(6,), rank 1", -1, (6,), f64, 1.0, 0.0, None),
            ("(2, 3, 5), dim=1", 1, (2, 3, 5), f64, 1.0, 0.0, None),
            ("(3, 4, 2), dim=0", 0, (3, 4, 2), f64, 1.0, 0.0, None),
            ("(2, 5, 3), dim=-2", -2, (2, 5, 3), f64, 1.0, 0.0, None),
            ("(4, 6) float32", -1, (4, 6), torch.float32, 1.0, 0.0, None),
            ("logits around 1000 (3, 5)", -1, (3, 5), f64, 3.0, 1000.0, None),
            ("logits around 100, float32", -1, (3, 5), torch.float32, 3.0, 100.0, None)] + list(extra)


def label_softmax(report, module):
    label_softmax_like(report, module, "Softmax", torch.softmax, softmax_cases())


def label_log_softmax(report, module):
    label_softmax_like(report, module, "LogSoftmax", torch.log_softmax, softmax_cases(
        [("one logit 800 below (3, 5)", -1, (3, 5), torch.float64, 1.0, 0.0, "low")]))


def label_cross_entropy(report, module):
    cls = module.CrossEntropyLoss
    module_names(report, cls(), torch.nn.CrossEntropyLoss())
    cases = [("(4, 5)", (4, 5), torch.float64, 1.0, 0.0, None),
             ("one sample (1, 5)", (1, 5), torch.float64, 1.0, 0.0, None),
             ("(8, 3)", (8, 3), torch.float64, 2.0, 0.0, None),
             ("float32 (4, 5)", (4, 5), torch.float32, 1.0, 0.0, None),
             ("logits around 1000 (3, 5)", (3, 5), torch.float64, 3.0, 1000.0, None),
             ("peaked, logits * 20 (4, 6)", (4, 6), torch.float64, 20.0, 0.0, None),
             ("confidently wrong, target 800 below", (3, 5), torch.float64, 1.0, 0.0, "wrong")]
    for label, shape, dtype, scale, shift, edit in cases:
        x = randn(shape, dtype, scale, shift, seed=1)
        t = torch.arange(shape[0]) % shape[1]
        if edit == "wrong":
            x[torch.arange(shape[0]), t] -= 800.0

        def run(f):
            xx = x.clone().requires_grad_(True)
            before = xx.detach().clone()
            loss = f(xx, t)
            loss.backward()
            return {"loss": loss.detach(), "dlogits": xx.grad,
                    "logits unchanged": torch.tensor(float(torch.equal(before, xx.detach())))}
        mine = attempt(lambda: run(cls()))
        if isinstance(mine, str):
            report.add(label, "loss", mine)
            continue
        theirs = run(F.cross_entropy)
        report.compare(label, {k: (mine[k], theirs[k]) for k in theirs})


# ---------------------------------------------------------------- DyT

class TorchDyT(torch.nn.Module):
    """y = weight * tanh(alpha * x) + bias, from torch operations in the input's dtype."""

    def __init__(self, normalized_shape, alpha_init=0.5):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.alpha = torch.nn.Parameter(torch.full((1,), float(alpha_init)))
        self.weight = torch.nn.Parameter(torch.ones(shape))
        self.bias = torch.nn.Parameter(torch.zeros(shape))

    def forward(self, x):
        return self.weight * torch.tanh(self.alpha * x) + self.bias


def label_dyt(report, module):
    cls = module.DyT
    module_names(report, cls(6), TorchDyT(6))
    cases = [("(4, 6)", 6, (4, 6), {}, torch.float64, 1.0),
             ("(2, 3, 5)", 5, (2, 3, 5), {}, torch.float64, 1.0),
             ("ns (4, 5)", (4, 5), (2, 3, 4, 5), {}, torch.float64, 1.0),
             ("alpha_init=1.3", 6, (4, 6), {"alpha_init": 1.3}, torch.float64, 1.0),
             ("large x (4, 6)", 6, (4, 6), {}, torch.float64, 30.0),
             ("float32 (4, 6)", 6, (4, 6), {}, torch.float32, 1.0)]
    for label, ns, shape, kwargs, dtype, scale in cases:
        port = attempt(lambda: cls(ns, **kwargs).to(dtype))
        if isinstance(port, str):
            report.add(label, "constructor", port)
            continue
        ref = TorchDyT(ns, **kwargs).to(dtype)
        pshape = (ns,) if isinstance(ns, int) else ns
        values = {"weight": randn(pshape, seed=3) + 1.0, "bias": randn(pshape, seed=4)}
        copy_params(port, values)
        copy_params(ref, values)
        report.add(label, "alpha at init", rel(port.alpha, ref.alpha))
        compare_layers(report, label, port, ref, randn(shape, dtype, scale, seed=1),
                       randn(shape, dtype, seed=2), ("alpha", "weight", "bias"))


# ---------------------------------------------------------------- attention

def split(t, h):
    b, n, c = t.shape
    return t.view(b, n, h, c // h).transpose(1, 2)


def merge(t):
    b, h, n, d = t.shape
    return t.transpose(1, 2).reshape(b, n, h * d)


class TorchAttention(torch.nn.Module):
    """Multi-head self-attention from torch's scaled_dot_product_attention (weights x @ w);
    with qk_norm, torch's rms_norm on each head's q and k, eps the dtype's machine epsilon."""

    def __init__(self, d_model, n_heads, causal=False, qk_norm=False):
        super().__init__()
        self.h, self.causal, self.qk_norm = n_heads, causal, qk_norm
        for name in ("wq", "wk", "wv", "wo"):
            setattr(self, name, torch.nn.Parameter(torch.randn(d_model, d_model)))
        if qk_norm:
            self.gamma_q = torch.nn.Parameter(torch.ones(d_model // n_heads))
            self.gamma_k = torch.nn.Parameter(torch.ones(d_model // n_heads))

    def forward(self, x):
        q, k, v = (split(x @ w, self.h) for w in (self.wq, self.wk, self.wv))
        if self.qk_norm:
            eps = torch.finfo(x.dtype).eps
            q = F.rms_norm(q, (q.shape[-1],), self.gamma_q, eps)
            k = F.rms_norm(k, (k.shape[-1],), self.gamma_k, eps)
        return merge(F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)) @ self.wo


def attention_cases(extra=()):
    f64 = torch.float64
    return [("(2, 5, 8), H=2", 8, 2, (2, 5, 8), False, f64, 1.0),
            ("(2, 5, 8), H=2, causal", 8, 2, (2, 5, 8), True, f64, 1.0),
            ("(2, 4, 12), H=3, causal", 12, 3, (2, 4, 12), True, f64, 1.0),
            ("(2, 4, 6), H=1", 6, 1, (2, 4, 6), False, f64, 1.0),
            ("(2, 5, 8) float32, H=4, causal", 8, 4, (2, 5, 8), True, torch.float32, 1.0),
            ("one position (2, 1, 8), H=2", 8, 2, (2, 1, 8), False, f64, 1.0),
            ("large x * 30 (2, 4, 8), H=2, causal", 8, 2, (2, 4, 8), True, f64, 30.0)] + list(extra)


def label_attention_like(report, module, cls_name, qk_norm, cases):
    cls = getattr(module, cls_name)
    module_names(report, cls(8, 2), TorchAttention(8, 2, qk_norm=qk_norm))
    params = ("wq", "wk", "wv", "wo") + (("gamma_q", "gamma_k") if qk_norm else ())
    for label, c, h, shape, causal, dtype, scale in cases:
        port = attempt(lambda: cls(c, h, causal=causal).to(dtype))
        if isinstance(port, str):
            report.add(label, "constructor", port)
            continue
        ref = TorchAttention(c, h, causal, qk_norm).to(dtype)
        values = {n: randn((c, c), seed=3 + i) / c ** 0.5 for i, n in enumerate(params[:4])}
        values.update({n: randn((c // h,), seed=9 + i) + 1.0 for i, n in enumerate(params[4:])})
        copy_params(port, values)
        copy_params(ref, values)
        compare_layers(report, label, port, ref, randn(shape, dtype, scale, seed=1),
                       randn(shape, dtype, seed=2), params)


def label_attention(report, module):
    label_attention_like(report, module, "MultiheadSelfAttention", False, attention_cases())


def label_qk_norm(report, module):
    label_attention_like(report, module, "QKNormSelfAttention", True, attention_cases(
        [("q and k near 0 (x * 1e-7), H=2", 8, 2, (2, 4, 8), False, torch.float64, 1e-7)]))


# ---------------------------------------------------------------- the residual block

class TorchBlock(torch.nn.Module):
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        super().__init__()
        self.position, self.eps = position, eps
        self.gamma = torch.nn.Parameter(torch.ones(d_model))
        self.beta = torch.nn.Parameter(torch.zeros(d_model))
        self.w1 = torch.nn.Parameter(torch.randn(d_model, d_ff))
        self.b1 = torch.nn.Parameter(torch.zeros(d_ff))
        self.w2 = torch.nn.Parameter(torch.randn(d_ff, d_model))
        self.b2 = torch.nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        def ln(u):
            return F.layer_norm(u, (u.shape[-1],), self.gamma, self.beta, self.eps)

        def ff(h):
            return torch.relu(h @ self.w1 + self.b1) @ self.w2 + self.b2
        return x + ff(ln(x)) if self.position == "pre" else ln(x + ff(x))


def label_transformer_block(report, module):
    cls = module.TransformerBlock
    module_names(report, cls(4, 6), TorchBlock(4, 6))
    params = ("gamma", "beta", "w1", "b1", "w2", "b2")
    for position in ("pre", "post"):
        for label, shape, dtype, edit in [("(2, 3, 4)", (2, 3, 4), torch.float64, None),
                                           ("(5, 4)", (5, 4), torch.float64, None),
                                           ("float32 (2, 3, 4)", (2, 3, 4), torch.float32, None),
                                           ("constant row (3, 4)", (3, 4), torch.float64, "constant")]:
            port = cls(4, 6, position=position).to(dtype)
            ref = TorchBlock(4, 6, position).to(dtype)
            shapes = {"gamma": (4,), "beta": (4,), "w1": (4, 6), "b1": (6,), "w2": (6, 4), "b2": (4,)}
            values = {n: randn(s, seed=3 + i) * 0.7 + (1.0 if n == "gamma" else 0.0)
                      for i, (n, s) in enumerate(shapes.items())}
            copy_params(port, values)
            copy_params(ref, values)
            x = randn(shape, dtype, seed=1)
            if edit == "constant":
                x[1] = 0.4
            compare_layers(report, f"{position} {label}", port, ref, x, randn(shape, dtype, seed=2), params)


# ---------------------------------------------------------------- the fold

def label_fold_batchnorm(report, module):
    """W' and b' against the definition of a BatchNorm1d in evaluation (s = gamma / sqrt(
    running_var + eps), W' = s[:, None] * W, b' = s * (b - running_mean) + beta), and the
    folded Linear's output against torch.nn.Linear followed by torch.nn.BatchNorm1d.eval()."""
    cases = [("random (5, 4)", torch.float64, 1.0, 1.0),
             ("running_var ~ eps", torch.float64, 1e-5, 1.0),
             ("bias zero", torch.float64, 1.0, 0.0),
             ("large running_mean", torch.float64, 1.0, 1.0),
             ("float32", torch.float32, 1.0, 1.0)]
    for label, dtype, var_scale, bias_scale in cases:
        W = randn((5, 4), dtype, seed=1)
        b = randn((5,), dtype, seed=2) * bias_scale
        rm = randn((5,), dtype, seed=3) * (100.0 if label.startswith("large") else 1.0)
        rv = (randn((5,), dtype, seed=4).abs() + 0.1) * var_scale
        gamma, beta = randn((5,), dtype, seed=5) + 1.0, randn((5,), dtype, seed=6)
        args = [t.clone() for t in (W, b, rm, rv, gamma, beta)]
        mine = attempt(lambda: module.fold_batchnorm(*args, 1e-5))
        if isinstance(mine, str):
            report.add(label, "fold", mine)
            continue
        s = gamma / torch.sqrt(rv + 1e-5)
        report.compare(label, {"W'": (mine[0], s[:, None] * W), "b'": (mine[1], s * (b - rm) + beta)})
        linear = torch.nn.Linear(4, 5).to(dtype)
        bn = torch.nn.BatchNorm1d(5, eps=1e-5).to(dtype).eval()
        with torch.no_grad():
            linear.weight.copy_(W)
            linear.bias.copy_(b)
            bn.running_mean.copy_(rm)
            bn.running_var.copy_(rv)
            bn.weight.copy_(gamma)
            bn.bias.copy_(beta)
            x = randn((7, 4), dtype, seed=8)
            report.add(label, "folded Linear output", rel(x @ mine[0].detach().T + mine[1].detach(), bn(linear(x))))
        report.add(label, "dtype", "ok" if mine[0].dtype == dtype and mine[1].dtype == dtype
                   else f"{mine[0].dtype}, {mine[1].dtype}")
        unchanged = all(torch.equal(a, o) for a, o in zip(args, (W, b, rm, rv, gamma, beta)))
        report.add(label, "inputs unchanged", "ok" if unchanged else "CHANGED")


EXERCISES = [("QKNormSelfAttention", label_qk_norm), ("MultiheadSelfAttention", label_attention),
             ("TransformerBlock", label_transformer_block), ("BatchNorm1d", label_batchnorm),
             ("GroupNorm", label_groupnorm), ("LayerNorm", label_layernorm),
             ("RMSNorm", label_rmsnorm), ("DyT", label_dyt), ("Dropout", label_dropout),
             ("LogSoftmax", label_log_softmax), ("Softmax", label_softmax),
             ("CrossEntropyLoss", label_cross_entropy), ("fold_batchnorm", label_fold_batchnorm)]


def label_file(path, everything=False):
    module = load(path)
    report = Report(path.name)
    for name, labeller in EXERCISES:
        if hasattr(module, name):
            labeller(report, module)
            break
    report.print(everything)


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)  # here, so that importing this file changes nothing
    everything = "--all" in sys.argv
    files = [Path(a) for a in sys.argv[1:] if a != "--all"] or sorted(HERE.glob("pt_*.py"))
    for path in files:
        label_file(path if path.is_absolute() or path.exists() else HERE / path, everything)
