"""PyTorch as an oracle: attention, a block in every position, the whole model and the optimizers.

The PyTorch models come from ``normcore.torch_bridge.to_torch``: torch's own layers
(``nn.MultiheadAttention`` for attention, ``nn.TransformerEncoderLayer`` for the Pre-Norm and
Post-Norm LayerNorm blocks) and torch code for the rest (DeepNorm's alpha), loaded from normcore's
state dict with ``strict=True``; ``key_map`` says where each normcore array lives in torch's
(``in_proj_weight`` holds q, k and v stacked). Everything runs in float64 and must agree to 1e-9.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import normcore as nc  # noqa: E402
from normcore import optim  # noqa: E402
from normcore.torch_bridge import key_map, to_torch  # noqa: E402
from normcore.layer_cases import perturb_parameters  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)  # tiny tensors: threads only add synchronisation
POSITIONS = ["pre", "post", "deepnorm", "none", "peri"]
NORMS = ["layernorm", "rmsnorm"]


def twin(module):
    """The torch.nn twin of ``module`` with its weights, from the bridge."""
    tmodule = to_torch(module)
    keys = key_map(module, tmodule)
    assert keys.keys() == module.state_dict().keys()
    assert {tkey for tkey, _ in keys.values()} == tmodule.state_dict().keys()  # every torch array is filled
    return tmodule


def torch_arrays(module, tensors):
    """normcore key -> the rows of ``tensors`` (torch name -> tensor of a torch twin of
    ``module``, from the bridge or built by hand with torch's names) that hold it."""
    keys = key_map(module, to_torch(module))
    return {key: tensors[tkey].detach().numpy()[rows] for key, (tkey, rows) in keys.items()}


def assert_grads_match(module, tmodule, tol=1e-9):
    tgrads = torch_arrays(module, {name: p.grad for name, p in tmodule.named_parameters()
                                   if p.grad is not None})  # in_proj_bias[E:2E] has one, and it is 0
    for name, p in module.named_parameters():
        err = nc.rel_error(p.grad, tgrads[name])
        assert err < tol, f"{name}: relative error {err:.1e}"


def assert_same_forward_and_backward(module, tmodule, shape, rng):
    """Same output for a random x, same dx and parameter gradients for a random upstream dy."""
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    tx = torch.tensor(x, requires_grad=True)
    ty = tmodule(tx)
    ty.backward(torch.from_numpy(dy))
    y = module(x)
    dx = module.backward(dy)
    assert nc.rel_error(y, ty.detach().numpy()) < 1e-12
    assert nc.rel_error(dx, tx.grad.numpy()) < 1e-9
    assert_grads_match(module, tmodule)


def test_attention_matches_torch():
    rng = np.random.default_rng(0)
    attn = perturb_parameters(nc.CausalSelfAttention(12, 3, rng=0), rng)
    assert_same_forward_and_backward(attn, twin(attn), (2, 7, 12), rng)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("position", POSITIONS)
def test_block_matches_torch(position, norm):
    rng = np.random.default_rng(1)
    block = perturb_parameters(nc.TransformerBlock(8, 2, 16, norm, position, n_layers=3, rng=0), rng)
    tblock = twin(block)
    if position in ("pre", "post") and norm == "layernorm":
        assert isinstance(tblock, torch.nn.TransformerEncoderLayer) and tblock.norm_first == (position == "pre")
    else:
        assert tblock.alpha == ((2 * 3) ** 0.25 if position == "deepnorm" else 1.0)  # DeepNet's alpha, N = 3
    assert_same_forward_and_backward(block, tblock, (3, 5, 8), rng)


def make_pair(position, norm, seed=0):
    args = dict(vocab_size=9, d_model=8, n_layers=3, n_heads=2, max_len=6)
    model = nc.TinyTransformer(**args, d_ff=12, norm=norm, position=position, rng=seed)
    perturb_parameters(model, np.random.default_rng(seed), scale=0.2)
    return model, twin(model)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("position", POSITIONS)
def test_whole_model_logits_loss_and_every_gradient_match_torch(position, norm):
    model, tmodel = make_pair(position, norm)
    rng = np.random.default_rng(2)
    tokens = rng.integers(0, 9, (4, 6))
    targets = rng.integers(0, 9, (4, 6))
    targets[0, :2] = -100
    ce = nc.CrossEntropyLoss()
    logits = model(tokens)
    loss = ce(logits.reshape(-1, 9), targets.reshape(-1))  # PyTorch's (N, C) layout
    model.backward(ce.backward().reshape(logits.shape))
    tlogits = tmodel(torch.from_numpy(tokens))
    tloss = F.cross_entropy(tlogits.reshape(-1, 9), torch.from_numpy(targets).reshape(-1))
    tloss.backward()
    assert nc.rel_error(logits, tlogits.detach().numpy()) < 1e-12
    assert abs(float(loss) - tloss.item()) < 1e-12
    assert_grads_match(model, tmodel)


def twin_parameters(rng, shapes):
    params = [nc.Parameter(rng.standard_normal(s)) for s in shapes]
    return params, [torch.tensor(p.data.copy(), requires_grad=True) for p in params]


def step_both(opt, topt, params, tparams, rng, steps, schedule=None):
    """Give both optimizers the same random gradients for ``steps`` steps; compare after each."""
    for step in range(steps):
        if schedule is not None:
            opt.lr = schedule(step)
            for group in topt.param_groups:
                group["lr"] = schedule(step)
        for p, tp in zip(params, tparams):
            g = rng.standard_normal(p.shape)
            p.grad[...] = g
            tp.grad = torch.from_numpy(g.copy())
        opt.step()
        topt.step()
        for p, tp in zip(params, tparams):
            assert nc.rel_error(p.data, tp.detach().numpy()) < 1e-12, f"step {step}"


def test_adamw_several_steps_match_torch():
    rng = np.random.default_rng(0)
    params, tparams = twin_parameters(rng, [(4, 3), (3,), (2, 2, 2)])
    opt = nc.AdamW(params, lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)
    topt = torch.optim.AdamW(tparams, lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)
    step_both(opt, topt, params, tparams, rng, steps=8, schedule=optim.warmup_cosine(0.05, 2, 8))


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_sgd_and_adam_match_torch(name):
    rng = np.random.default_rng(1)
    params, tparams = twin_parameters(rng, [(3, 2), (4,)])
    kwargs = dict(lr=0.1, momentum=0.9, weight_decay=0.01) if name == "SGD" else dict(lr=0.01, weight_decay=0.05)
    opt, topt = getattr(nc, name)(params, **kwargs), getattr(torch.optim, name)(tparams, **kwargs)
    step_both(opt, topt, params, tparams, rng, steps=5)


def test_clip_grad_norm_matches_torch():
    rng = np.random.default_rng(2)
    params = [nc.Parameter(rng.standard_normal((3, 3))), nc.Parameter(rng.standard_normal(5))]
    tparams = [torch.tensor(p.data.copy(), requires_grad=True) for p in params]
    for p, tp in zip(params, tparams):
        p.grad[...] = 3 * rng.standard_normal(p.shape)
        tp.grad = torch.from_numpy(p.grad.copy())
    total = nc.clip_grad_norm(params, 1.5)
    ttotal = torch.nn.utils.clip_grad_norm_(tparams, 1.5)
    assert math.isclose(total, float(ttotal), rel_tol=1e-12)
    for p, tp in zip(params, tparams):
        assert nc.rel_error(p.grad, tp.grad.numpy()) < 1e-12


def test_a_few_training_steps_match_torch():
    model, tmodel = make_pair("pre", "layernorm", seed=3)
    task = nc.tasks.ReverseTask(n_tokens=3, n_symbols=8)
    batches = [task.batch(4, seed=s) for s in range(3)]
    history = nc.fit(model, batches, nc.AdamW(model.parameters(), lr=1e-2), steps=3, clip=0.5, progress=False)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-2)
    for tokens, targets in batches:
        topt.zero_grad()
        logits = tmodel(torch.from_numpy(tokens))
        loss = F.cross_entropy(logits.reshape(-1, 9), torch.from_numpy(targets).reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(tmodel.parameters(), 0.5)
        topt.step()
    assert abs(history["loss"][-1] - loss.item()) < 1e-10
    tstate = torch_arrays(model, tmodel.state_dict())
    for key, value in model.state_dict().items():
        assert nc.rel_error(value, tstate[key]) < 1e-9, key


# --- TransformerBlock as an encoder layer: torch.nn.TransformerEncoderLayer ------------------

def encoder_pair(norm_first, activation, bias=True, seed=0, **kwargs):
    """A torch.nn.TransformerEncoderLayer with random weights (torch's init, then perturbed) and
    its normcore twin from ``from_torch``: TransformerBlock(position "pre" or "post", causal=False)."""
    from normcore.torch_bridge import from_torch
    torch.manual_seed(seed)
    tlayer = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, activation, batch_first=True, norm_first=norm_first,
                                              bias=bias, **kwargs)
    with torch.no_grad():
        for p in tlayer.parameters():
            p.add_(0.3 * torch.randn_like(p))
    block = from_torch(tlayer)
    assert isinstance(block, nc.TransformerBlock) and not block.attn.causal
    assert block.position == ("pre" if norm_first else "post") and block.bias == bias
    return block, tlayer


def encoder_masks(kind, B=3, T=5):
    rng = np.random.default_rng(5)
    padding = np.zeros((B, T), dtype=bool)
    padding[0, 3:] = True
    padding[2, 1:] = True  # sequence 2: one real token
    if kind == "none":
        return None, None
    if kind == "padding":
        return padding, None
    if kind == "padding float":
        return np.where(padding, -np.inf, 0.3 * rng.standard_normal((B, T))), None
    if kind == "attn_mask":
        return None, (rng.random((T, T)) < 0.3) & ~np.eye(T, dtype=bool)
    return padding, np.where(rng.random((T, T)) < 0.3, -np.inf, 0.0) * ~np.eye(T, dtype=bool)  # both kinds


def torch_encoder_forward(tlayer, x, kpm, am):
    """The torch layer with the masks as normcore takes them (one kind when both are given)."""
    if kpm is not None and am is not None and (kpm.dtype == bool) != (am.dtype == bool):
        kpm, am = (np.where(a, -np.inf, 0.0) if a.dtype == bool else a for a in (kpm, am))
    return tlayer(x, src_mask=None if am is None else torch.from_numpy(am),
                  src_key_padding_mask=None if kpm is None else torch.from_numpy(kpm))


@pytest.mark.parametrize("masks", ["none", "padding", "padding float", "attn_mask", "both"])
@pytest.mark.parametrize("activation", ["relu", "gelu", F.gelu], ids=["relu", "gelu", "F.gelu"])
@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_block_matches_torch_encoder_layer(norm_first, activation, masks):
    """Output, input gradient and every parameter gradient to 1e-10, in training mode (torch's
    math path: with gradients it never takes the fused fast path)."""
    block, tlayer = encoder_pair(norm_first, activation)
    rng = np.random.default_rng(6)
    x, dy = rng.standard_normal((3, 5, 8)), rng.standard_normal((3, 5, 8))
    kpm, am = encoder_masks(masks)
    tx = torch.tensor(x, requires_grad=True)
    ty = torch_encoder_forward(tlayer, tx, kpm, am)
    ty.backward(torch.from_numpy(dy))
    y = block(x, kpm, am)
    dx = block.backward(dy)
    assert nc.rel_error(y, ty.detach().numpy()) < 1e-10
    assert nc.rel_error(dx, tx.grad.numpy()) < 1e-10
    assert_grads_match(block, tlayer, tol=1e-10)


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_block_without_biases_matches_torch(norm_first):
    block, tlayer = encoder_pair(norm_first, "gelu", bias=False, layer_norm_eps=1e-3)
    assert block.norm1.bias is None and block.attn.q.bias is None and block.norm1.eps == 1e-3
    rng = np.random.default_rng(7)
    x, dy = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 4, 8))
    padding = np.array([[0, 0, 1, 1], [0, 0, 0, 0]], dtype=bool)
    tx = torch.tensor(x, requires_grad=True)
    tlayer(tx, src_key_padding_mask=torch.from_numpy(padding)).backward(torch.from_numpy(dy))
    y = block(x, padding)
    assert nc.rel_error(block.backward(dy), tx.grad.numpy()) < 1e-10
    assert_grads_match(block, tlayer, tol=1e-10)
    assert y.shape == (2, 4, 8)


@pytest.mark.parametrize("position", ["pre", "post"])
def test_causal_block_matches_torch_encoder_layer_with_a_causal_mask(position):
    rng = np.random.default_rng(8)
    block = perturb_parameters(nc.TransformerBlock(8, 2, 16, position=position, activation="relu", rng=0), rng)
    tlayer = twin(block)
    assert isinstance(tlayer, torch.nn.TransformerEncoderLayer)
    x, dy = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    tx = torch.tensor(x, requires_grad=True)
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    torch.nn.TransformerEncoderLayer.forward(tlayer, tx, src_mask=causal).backward(torch.from_numpy(dy))
    y = block(x)
    assert nc.rel_error(block.backward(dy), tx.grad.numpy()) < 1e-10
    assert_grads_match(block, tlayer, tol=1e-10)
    assert y.shape == x.shape


def test_torch_encoder_layer_takes_its_fast_path_only_in_eval_without_gradients(monkeypatch):
    """Measured on torch 2.13: the fused kernel runs only in eval mode under no_grad; training
    mode, or gradients enabled, run the math path that the parity tests compare with."""
    calls = []
    fused = torch._transformer_encoder_layer_fwd
    monkeypatch.setattr(torch, "_transformer_encoder_layer_fwd", lambda *a, **k: calls.append(1) or fused(*a, **k))
    _, tlayer = encoder_pair(True, "relu")
    x = torch.randn(2, 3, 8)
    padding = torch.tensor([[False, False, True], [False, False, False]])
    taken = {}
    for training, grad in [(True, True), (False, True), (True, False), (False, False)]:
        tlayer.train(training)
        calls.clear()
        with torch.set_grad_enabled(grad):
            tlayer(x, src_key_padding_mask=padding)
        taken[(training, grad)] = bool(calls)
    assert taken == {(True, True): False, (False, True): False, (True, False): False, (False, False): True}


@pytest.mark.parametrize("norm_first", [True, False])
def test_a_fully_padded_sequence_is_nan_in_normcore_and_in_torchs_fast_path_only(norm_first):
    """Every key of sequence 0 is padding. normcore (like nn.MultiheadAttention's math path)
    gives NaN for that sequence; the encoder layer's attention runs with need_weights=False,
    i.e. F.scaled_dot_product_attention, which in training gives 0 attention there (the
    residual passes on), while its eval/no_grad fast path gives NaN. The other sequence agrees."""
    block, tlayer = encoder_pair(norm_first, "relu")
    x = np.random.default_rng(9).standard_normal((2, 3, 8))
    padding = np.array([[1, 1, 1], [0, 0, 1]], dtype=bool)
    y = block(x, padding)
    ty = torch_encoder_forward(tlayer, torch.from_numpy(x), padding, None).detach().numpy()
    assert np.isnan(y[0]).all() and np.isfinite(ty[0]).all()
    assert nc.rel_error(y[1], ty[1]) < 1e-10
    tlayer.eval()
    with torch.no_grad():
        fast = torch_encoder_forward(tlayer, torch.from_numpy(x), padding, None).numpy()
    assert np.isnan(fast[0]).all() and nc.rel_error(fast[1], y[1]) < 1e-10
