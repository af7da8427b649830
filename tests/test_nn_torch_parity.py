"""PyTorch as an oracle: attention, a block in every position, the whole model and the optimizers.

The PyTorch models come from ``normcore.torch_bridge.to_torch``: torch's own layers and torch
code for the rest (attention as softmax(q k^T / sqrt(D) + mask) v in torch), with the same
parameter names, loaded from normcore's state dict with ``strict=True``. Everything runs in
float64 and must agree to 1e-9.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import normcore as nc  # noqa: E402
from normcore import optim  # noqa: E402
from normcore.torch_bridge import to_torch  # noqa: E402
from normcore.layer_cases import perturb_parameters  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)  # tiny tensors: threads only add synchronisation
POSITIONS = ["pre", "post", "deepnorm", "none"]
NORMS = ["layernorm", "rmsnorm"]


def twin(module):
    """The torch.nn twin of ``module`` with its weights, from the bridge."""
    tmodule = to_torch(module)
    assert tmodule.state_dict().keys() == module.state_dict().keys()
    return tmodule


def assert_grads_match(module, tmodule, tol=1e-9):
    tgrads = dict(tmodule.named_parameters())
    names = [n for n, _ in module.named_parameters()]
    assert sorted(names) == sorted(tgrads), "parameter names differ"
    for name, p in module.named_parameters():
        err = nc.rel_error(p.grad, tgrads[name].grad.numpy())
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
    tstate = tmodel.state_dict()
    for key, value in model.state_dict().items():
        assert nc.rel_error(value, tstate[key].numpy()) < 1e-9, key
