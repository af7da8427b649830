"""Parameter groups in SGD, Adam and AdamW: torch.optim's semantics, state dicts, errors, and
param_groups_no_decay."""

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import normcore as nc
from normcore import optim

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])  # nothing timed
SHAPES = [(3, 4), (4,), (2, 2, 3), (5,), (2, 3)]

# (normcore class, torch name, constructor kwargs, per-group overrides for groups 0 and 1)
CASES = [
    (nc.AdamW, "AdamW", dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1),
     [{"weight_decay": 0.0, "lr": 0.02}, {}]),
    (nc.Adam, "Adam", dict(lr=0.03, weight_decay=0.05), [{"betas": (0.5, 0.9)}, {"weight_decay": 0.0, "eps": 1e-4}]),
    (nc.SGD, "SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01),
     [{"momentum": 0.0}, {"lr": 0.3, "weight_decay": 0.2}]),
]


def make_params(rng, shapes=SHAPES):
    return [nc.Parameter(rng.standard_normal(s)) for s in shapes]


def groups_of(params, split, overrides):
    """Group k holds the parameters i with split[i] == k, plus overrides[k]."""
    return [{"params": [p for p, k in zip(params, split) if k == g], **overrides[g]} for g in range(len(overrides))]


def set_grads(params, rng):
    grads = [rng.standard_normal(p.shape) for p in params]
    for p, g in zip(params, grads):
        p.grad[...] = g
    return grads


def torch_twin(torch, params, split, overrides, name, kwargs):
    tparams = [torch.nn.Parameter(torch.tensor(p.data.copy())) for p in params]
    return tparams, getattr(torch.optim, name)(groups_of(tparams, split, overrides), **kwargs)


def step_both(torch, params, opt, tparams, topt, rng, steps):
    for _ in range(steps):
        for tp, g in zip(tparams, set_grads(params, rng)):
            tp.grad = torch.tensor(g)
        opt.step()
        topt.step()
        for p, tp in zip(params, tparams):
            np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls, tname, kwargs, overrides", CASES, ids=[c[1] for c in CASES])
def test_two_groups_match_torch_step_for_step(cls, tname, kwargs, overrides):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the optimizers' groups")
    rng = np.random.default_rng(0)
    params, split = make_params(rng), [0, 1, 1, 0, 1]
    opt = cls(groups_of(params, split, overrides), **kwargs)
    tparams, topt = torch_twin(torch, params, split, overrides, tname, kwargs)
    step_both(torch, params, opt, tparams, topt, rng, steps=4)
    for g, tg in zip(opt.param_groups, topt.param_groups):  # torch-style edits of a group
        g["lr"] = tg["lr"] = 0.5 * g["lr"]
    step_both(torch, params, opt, tparams, topt, rng, steps=3)
    opt.lr = 0.01  # the convenience: every group's lr
    for tg in topt.param_groups:
        tg["lr"] = 0.01
    assert [g["lr"] for g in opt.param_groups] == [0.01, 0.01] and opt.lr == 0.01
    step_both(torch, params, opt, tparams, topt, rng, steps=3)


@pytest.mark.parametrize("cls, tname, kwargs, overrides", CASES, ids=[c[1] for c in CASES])
def test_add_param_group_mid_training_matches_torch(cls, tname, kwargs, overrides):
    """A group added later starts its own state (Adam's step count from 1), as in torch."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the optimizers' groups")
    rng = np.random.default_rng(1)
    params, split = make_params(rng), [0, 0, 0, 1, 1]
    opt = cls(groups_of(params, split, overrides)[:1], **kwargs)
    tparams, topt = torch_twin(torch, params, split, overrides, tname, kwargs)
    topt.param_groups.pop()
    topt.state.clear()
    for p in params[3:]:
        p.grad[...] = 0
    step_both(torch, params, opt, tparams, topt, rng, steps=2)
    opt.add_param_group(groups_of(params, split, overrides)[1])
    topt.add_param_group(groups_of(tparams, split, overrides)[1])
    step_both(torch, params, opt, tparams, topt, rng, steps=3)


@pytest.mark.parametrize("cls, tname, kwargs, overrides", CASES, ids=[c[1] for c in CASES])
def test_state_dict_round_trip_mid_training_gives_identical_steps(cls, tname, kwargs, overrides):
    rng = np.random.default_rng(2)
    params, split = make_params(rng), [1, 0, 1, 0, 0]
    opt = cls(groups_of(params, split, overrides), **kwargs)
    for _ in range(3):
        set_grads(params, rng)
        opt.step()
    saved, data = opt.state_dict(), [p.data.copy() for p in params]
    grads = set_grads(params, rng)
    later = []
    for _ in range(3):
        for p, g in zip(params, grads):
            p.grad[...] = g
        opt.step()
        later.append([p.data.copy() for p in params])
    # a fresh optimizer built with other hyperparameters takes everything from the state dict
    for p, d in zip(params, data):
        p.data[...] = d
    fresh = cls(groups_of(params, split, [{}, {}]), lr=123.0)
    fresh.load_state_dict(saved)
    assert fresh.state_dict()["param_groups"] == saved["param_groups"]
    for expected in later:
        for p, g in zip(params, grads):
            p.grad[...] = g
        fresh.step()
        for p, e in zip(params, expected):
            np.testing.assert_array_equal(p.data, e)


def test_state_dict_layout_is_torchs_and_holds_copies():
    rng = np.random.default_rng(3)
    params = make_params(rng)
    opt = nc.AdamW([{"params": params[:2], "weight_decay": 0.0}, {"params": params[2:]}], lr=0.1)
    set_grads(params, rng)
    opt.step()
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"] and list(sd["state"]) == [0, 1, 2, 3, 4]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"} and sd["state"][0]["step"] == 1
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3, 4]]
    assert sd["param_groups"][0] == {"lr": 0.1, "weight_decay": 0.0, "betas": (0.9, 0.999), "eps": 1e-8,
                                     "amsgrad": False, "maximize": False, "params": [0, 1]}
    sd["state"][0]["exp_avg"][...] = 99.0
    sd["param_groups"][0]["lr"] = 5.0
    assert not np.any(opt.state[params[0]]["exp_avg"] == 99.0) and opt.lr == 0.1
    assert nc.SGD(params, lr=0.1).state_dict() == {"state": {}, "param_groups": [
        {"lr": 0.1, "weight_decay": 0.0, "momentum": 0.0, "dampening": 0.0, "nesterov": False, "maximize": False,
         "params": [0, 1, 2, 3, 4]}]}


@pytest.mark.parametrize("cls, tname, kwargs, overrides", CASES, ids=[c[1] for c in CASES])
def test_loads_a_torch_optimizers_state_dict(cls, tname, kwargs, overrides):
    """torch's state dict, tensors converted to NumPy, loads as is; the steps then agree."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the optimizers' groups")
    rng = np.random.default_rng(4)
    params, split = make_params(rng), [0, 1, 0, 1, 1]
    tparams, topt = torch_twin(torch, params, split, overrides, tname, kwargs)
    for _ in range(3):
        for tp in tparams:
            tp.grad = torch.tensor(rng.standard_normal(tuple(tp.shape)))
        topt.step()
    tsd = topt.state_dict()
    sd = {"state": {i: {k: v.numpy() if torch.is_tensor(v) else v for k, v in s.items()}
                    for i, s in tsd["state"].items()},
          "param_groups": tsd["param_groups"]}
    for p, tp in zip(params, tparams):
        p.data[...] = tp.detach().numpy()
    opt = cls(groups_of(params, split, [{}, {}]), lr=1.0)
    opt.load_state_dict(sd)
    step_both(torch, params, opt, tparams, topt, rng, steps=3)
    bad = copy.deepcopy(sd)
    bad["param_groups"][0]["differentiable"] = True
    with pytest.raises(ValueError, match="differentiable=True is not supported"):
        opt.load_state_dict(bad)


def test_a_plain_parameter_list_or_module_is_one_group_and_lr_sets_every_group():
    lin = nc.Linear(3, 2, rng=0)
    for opt in (nc.SGD(lin, lr=0.1), nc.SGD(iter(lin.parameters()), lr=0.1), nc.Adam(lin.parameters())):
        assert len(opt.param_groups) == 1 and opt.param_groups[0]["params"] == lin.parameters()
        assert opt.params == lin.parameters()
    opt = nc.AdamW([{"params": [lin.weight], "lr": 0.5}, {"params": lin.bias}], lr=0.1)
    assert opt.lr == 0.5 and [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    assert opt.param_groups[1]["params"] == [lin.bias]  # a single Parameter is a group of one
    assert opt.defaults == {"lr": 0.1, "weight_decay": 0.01, "betas": (0.9, 0.999), "eps": 1e-8,
                            "amsgrad": False, "maximize": False}
    opt.lr = 0.2
    assert [g["lr"] for g in opt.param_groups] == [0.2, 0.2]
    with pytest.raises(ValueError, match="lr"):
        opt.lr = -1.0
    assert [g["lr"] for g in opt.param_groups] == [0.2, 0.2]


def test_fit_schedule_sets_every_groups_lr():
    task = nc.tasks.CopyTask(n_tokens=3, n_symbols=5)
    model = nc.TinyTransformer(task.vocab_size, 8, 1, 2, task.seq_len, rng=0)
    opt = nc.AdamW(optim.param_groups_no_decay(model, 0.1), lr=1.0)
    hist = nc.fit(model, task, opt, steps=3, schedule=optim.linear_warmup(1e-2, 3), progress=False, batch_size=4)
    np.testing.assert_allclose(hist["lr"], [1e-2 / 3, 2e-2 / 3, 1e-2])
    assert [g["lr"] for g in opt.param_groups] == [1e-2, 1e-2]
    assert [g["weight_decay"] for g in opt.param_groups] == [0.1, 0.0]


def group_errors(a, b):
    return [
        (lambda: nc.SGD([{"params": [a]}, {"params": [a, b]}], lr=0.1), ValueError, "more than one parameter group"),
        (lambda: nc.SGD([{"params": []}], lr=0.1), ValueError, "empty parameter list"),
        (lambda: nc.SGD([], lr=0.1), ValueError, "empty parameter list"),
        (lambda: nc.SGD([{"params": [a], "weight_decy": 0.1}], lr=0.1), ValueError,
         r"unknown key\(s\) \['weight_decy'\]"),
        (lambda: nc.Adam([{"params": [a], "momentum": 0.9}]), ValueError, "unknown key"),
        (lambda: nc.SGD([{"lr": 0.1}], lr=0.1), KeyError, "'params' key"),
        (lambda: nc.SGD([{"params": [a]}, [b]], lr=0.1), TypeError, "not a mix"),
        (lambda: nc.SGD({a, b}, lr=0.1), TypeError, "ordered collection"),
        (lambda: nc.SGD([{"params": {a}}], lr=0.1), TypeError, "ordered collection"),
        (lambda: nc.SGD([{"params": [a, np.zeros(2)]}], lr=0.1), TypeError, "position 1"),
        (lambda: nc.SGD([{"params": [a], "lr": -1.0}], lr=0.1), ValueError, "lr must be >= 0"),
        (lambda: nc.Adam([{"params": [a], "betas": (0.9, 1.0)}]), ValueError, r"betas must lie in \[0, 1\)"),
        (lambda: nc.AdamW([{"params": [a], "eps": "1e-8"}]), TypeError, "eps"),
    ]


def test_group_errors_say_what_was_expected():
    a, b = nc.Parameter(np.zeros(2)), nc.Parameter(np.zeros(3))
    for make, exc, match in group_errors(a, b):
        with pytest.raises(exc, match=match):
            make()


def test_a_failed_add_param_group_changes_nothing():
    a, b, c = (nc.Parameter(np.ones(2)) for _ in range(3))
    opt = nc.AdamW([{"params": [a]}], lr=0.1)
    before = copy.deepcopy(opt.param_groups)
    bad_groups = [({"params": [c, a]}, ValueError), ({"params": []}, ValueError),
                  ({"params": [b], "lr": -1}, ValueError), ({"params": [b], "nesterov": True}, ValueError),
                  ({"lr": 0.1}, KeyError), ([b], TypeError)]
    for group, exc in bad_groups:
        with pytest.raises(exc):
            opt.add_param_group(group)
        assert len(opt.param_groups) == 1 and opt.param_groups[0]["params"] == [a]
        assert {k: v for k, v in opt.param_groups[0].items() if k != "params"} == \
            {k: v for k, v in before[0].items() if k != "params"}
    opt.add_param_group({"params": [b, c], "weight_decay": 0.0})
    assert opt.params == [a, b, c] and opt.param_groups[1]["lr"] == 0.1


def test_a_bad_hyperparameter_set_on_a_group_stops_step_before_any_change():
    a, b = nc.Parameter(np.ones(2)), nc.Parameter(np.ones(3))
    opt = nc.Adam([{"params": [a]}, {"params": [b]}], lr=0.1)
    a.grad[...], b.grad[...] = 1.0, 1.0
    opt.param_groups[1]["eps"] = -1.0
    with pytest.raises(ValueError, match=r"param_groups\[1\].*eps must be >= 0"):
        opt.step()
    assert np.all(a.data == 1.0) and np.all(b.data == 1.0) and opt.state == {}


def test_a_bad_state_dict_loads_nothing():
    rng = np.random.default_rng(5)
    params = make_params(rng)
    opt = nc.AdamW([{"params": params[:2]}, {"params": params[2:]}], lr=0.1)
    set_grads(params, rng)
    opt.step()
    good = opt.state_dict()
    bads = []
    bads.append({**good, "param_groups": good["param_groups"][:1]})  # a group missing
    b = copy.deepcopy(good)
    b["state"][1]["exp_avg"] = np.zeros(7)  # wrong shape
    bads.append(b)
    b = copy.deepcopy(good)
    b["param_groups"][1]["amsgrad"] = True  # amsgrad's state needs max_exp_avg_sq
    bads.append(b)
    b = copy.deepcopy(good)
    b["param_groups"][1]["fused"] = True  # an implementation of torch's that normcore does not have
    bads.append(b)
    b = copy.deepcopy(good)
    b["param_groups"][0]["lr"] = -0.1
    bads.append(b)
    b = copy.deepcopy(good)
    del b["state"][2]["exp_avg_sq"]
    bads.append(b)
    b = copy.deepcopy(good)
    b["state"][17] = b["state"][0]
    bads.append(b)
    other = nc.AdamW([{"params": params[:2], "lr": 0.7}, {"params": params[2:]}], lr=0.3)
    expected = other.state_dict()
    for bad in bads:
        with pytest.raises(ValueError):
            other.load_state_dict(bad)
        assert other.state_dict() == expected and other.state == {}


def test_param_groups_no_decay_puts_norms_and_biases_in_the_no_decay_group():
    model = nc.Sequential(nc.Linear(4, 6, rng=0), nc.BatchNorm1d(6), nc.Linear(6, 6, bias=False, rng=1),
                          nc.LayerNorm((2, 3)), nc.DyT(6), nc.RMSNorm(6), nc.GroupNorm(2, 6))
    decay, no_decay = optim.param_groups_no_decay(model, 0.05)
    lin0, bn, lin1, ln, dyt, rms, gn = model.children()
    assert decay == {"params": [lin0.weight, lin1.weight], "weight_decay": 0.05}
    assert no_decay["weight_decay"] == 0.0
    assert no_decay["params"] == [lin0.bias, bn.gamma, bn.beta, ln.gamma, ln.beta, dyt.alpha, dyt.gamma, dyt.beta,
                                  rms.gamma, gn.gamma, gn.beta]
    assert ln.gamma.ndim == 2  # a 2-D norm parameter is still not decayed
    only_norm = nc.BatchNorm1d(3)
    assert optim.param_groups_no_decay(only_norm, 0.1) == [{"params": only_norm.parameters(), "weight_decay": 0.0}]
    with pytest.raises(TypeError, match="Module"):
        optim.param_groups_no_decay(model.parameters(), 0.1)
    with pytest.raises(ValueError, match="weight_decay"):
        optim.param_groups_no_decay(model, -1.0)


def test_param_groups_no_decay_on_a_transformer_decays_exactly_its_matrices():
    model = nc.TinyTransformer(7, 8, 2, 2, 5, rng=0, qk_norm="rmsnorm")
    decay, no_decay = optim.param_groups_no_decay(model, 0.1)
    names = {id(p): n for n, p in model.named_parameters()}
    decayed = sorted(names[id(p)] for p in decay["params"])
    assert all(p.ndim == 2 for p in decay["params"]) and "tok_emb.weight" in decayed
    assert all("norm" not in n and not n.endswith("bias") for n in decayed)
    assert all(p.ndim == 1 for p in no_decay["params"])
    assert len(decay["params"]) + len(no_decay["params"]) == len(model.parameters())
    nc.AdamW([decay, no_decay], lr=1e-3)  # a valid pair of groups


@settings(max_examples=30, **SETTINGS)
@given(split=st.lists(st.integers(0, 2), min_size=len(SHAPES), max_size=len(SHAPES)),
       lrs=st.lists(st.floats(1e-3, 0.5), min_size=3, max_size=3),
       decays=st.lists(st.sampled_from([0.0, 0.01, 0.3]), min_size=3, max_size=3),
       which=st.sampled_from([0, 1, 2]), seed=st.integers(0, 2**16))
def test_any_split_into_groups_equals_one_optimizer_per_group(split, lrs, decays, which, seed):
    """Groups are independent: one optimizer with k groups takes the same steps as k optimizers,
    exactly; and its state dict round trip keeps it so."""
    cls, _, kwargs, _ = CASES[which]
    rng = np.random.default_rng(seed)
    used = sorted(set(split))
    overrides = [{"lr": lrs[k], "weight_decay": decays[k]} for k in used]
    split = [used.index(k) for k in split]
    params = make_params(rng)
    twins = [nc.Parameter(p.data.copy()) for p in params]
    grouped = cls(groups_of(params, split, overrides), **kwargs)
    singles = [cls(g["params"], **{**kwargs, **{k: v for k, v in g.items() if k != "params"}})
               for g in groups_of(twins, split, overrides)]
    for t in range(4):
        for tw, g in zip(twins, set_grads(params, rng)):
            tw.grad[...] = g
        grouped.step()
        for opt in singles:
            opt.step()
        if t == 1:
            restored = cls(groups_of(params, split, [{}] * len(used)), **kwargs)
            restored.load_state_dict(grouped.state_dict())
            grouped = restored
        for p, tw in zip(params, twins):
            np.testing.assert_array_equal(p.data, tw.data)
