"""torch.optim's options in SGD (nesterov, dampening, maximize) and Adam/AdamW (amsgrad,
maximize), matched to torch step for step in float64; the state dicts that carry them; what
load_state_dict keeps (initial_lr) and how it matches saved indices to parameters."""

import copy

import numpy as np
import pytest

import normcore as nc

SHAPES = [(3, 4), (4,), (2, 3)]
SPLIT = [0, 1, 1]  # parameter i goes to group SPLIT[i]

# (normcore class, torch name, constructor kwargs, per-group overrides for groups 0 and 1)
CASES = {
    "sgd-nesterov": (nc.SGD, "SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True),
                     [{"nesterov": False}, {"lr": 0.05}]),
    "sgd-dampening": (nc.SGD, "SGD", dict(lr=0.1, momentum=0.8, dampening=0.3),
                      [{"dampening": 0.0}, {"weight_decay": 0.1}]),
    "sgd-maximize": (nc.SGD, "SGD", dict(lr=0.1, momentum=0.5, weight_decay=0.1, maximize=True),
                     [{}, {"maximize": False, "momentum": 0.0}]),
    "adam-amsgrad": (nc.Adam, "Adam", dict(lr=0.05, weight_decay=0.05, amsgrad=True),
                     [{"amsgrad": False}, {"betas": (0.5, 0.9)}]),
    "adam-maximize": (nc.Adam, "Adam", dict(lr=0.05, maximize=True), [{}, {"maximize": False}]),
    "adamw-both": (nc.AdamW, "AdamW", dict(lr=0.05, weight_decay=0.1, amsgrad=True, maximize=True),
                   [{"maximize": False}, {"amsgrad": False, "eps": 1e-3}]),
}


def torch_or_skip():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for the optimizers' options")


def groups_of(params, overrides):
    return [{"params": [p for p, k in zip(params, SPLIT) if k == g], **overrides[g]} for g in range(2)]


def to_numpy(torch, sd):
    """A torch optimizer's state dict with its tensors as NumPy arrays (a step as an int)."""
    return {"state": {i: {k: v.numpy().copy() if torch.is_tensor(v) and k != "step" else
                          int(v) if k == "step" else v for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


def to_torch(torch, sd):
    return {"state": {i: {k: torch.tensor(v, dtype=torch.float64) if k == "step" else torch.tensor(v)
                          for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": copy.deepcopy(sd["param_groups"])}


def assert_same(torch, params, opt, tparams, topt):
    """Parameters and every state entry equal to 1e-10."""
    for p, tp in zip(params, tparams):
        np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=0, atol=1e-10)
    ours, theirs = opt.state_dict()["state"], to_numpy(torch, topt.state_dict())["state"]
    assert {i: sorted(s) for i, s in ours.items()} == {i: sorted(s) for i, s in theirs.items()}
    for i, s in ours.items():
        for k, v in s.items():
            np.testing.assert_allclose(v, theirs[i][k], rtol=0, atol=1e-10, err_msg=f"state[{i}][{k}]")


def step_both(torch, params, opt, tparams, topt, rng, steps, start=0):
    """Gradients that shrink step after step (so that AMSGrad's maximum differs from v)."""
    for t in range(start, start + steps):
        for p, tp in zip(params, tparams):
            g = rng.standard_normal(p.shape) * 2.0**-t
            p.grad[...] = g
            tp.grad = torch.tensor(g)
        opt.step()
        topt.step()
        assert_same(torch, params, opt, tparams, topt)


@pytest.mark.parametrize("case", CASES)
def test_each_option_matches_torch_with_groups_and_its_state_dict_crosses_over(case):
    """Five steps with two groups (the option on in one, off in the other) equal torch's, the
    state included; then each side's state dict loads into a fresh optimizer of the other
    kind and the next steps still agree."""
    torch = torch_or_skip()
    cls, name, kwargs, overrides = CASES[case]
    rng = np.random.default_rng(0)
    params = [nc.Parameter(rng.standard_normal(s)) for s in SHAPES]
    tparams = [torch.nn.Parameter(torch.tensor(p.data.copy())) for p in params]
    opt = cls(groups_of(params, overrides), **kwargs)
    topt = getattr(torch.optim, name)(groups_of(tparams, overrides), **kwargs)
    step_both(torch, params, opt, tparams, topt, rng, steps=5)
    ours, theirs = opt.state_dict(), to_numpy(torch, topt.state_dict())
    for g in ours["param_groups"]:  # AMSGrad's maximum under torch's name, and not v itself
        for i in g["params"] if g.get("amsgrad") else ():
            assert set(ours["state"][i]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
            assert not np.allclose(ours["state"][i]["max_exp_avg_sq"], ours["state"][i]["exp_avg_sq"])
    opt = cls(groups_of(params, [{}, {}]), lr=1.0)
    opt.load_state_dict(theirs)
    topt = getattr(torch.optim, name)(groups_of(tparams, [{}, {}]), lr=1.0)
    topt.load_state_dict(to_torch(torch, ours))
    step_both(torch, params, opt, tparams, topt, rng, steps=2, start=5)


def test_the_update_formulas_by_hand():
    """The documented lines, one step each, without torch."""
    def one(cls, grads, **kw):
        p = nc.Parameter(np.array([1.0, -2.0]))
        opt = cls([p], **kw)
        for g in grads:
            p.grad[...] = g
            opt.step()
        return p.data, opt.state_dict()["state"].get(0, {})

    g1, g2 = np.array([0.5, 1.0]), np.array([-1.0, 2.0])
    data, state = one(nc.SGD, [g1], lr=0.1, weight_decay=0.5, maximize=True)  # ascends; the decay still shrinks
    np.testing.assert_allclose(data, [1.0, -2.0] - 0.1 * (-g1 + 0.5 * np.array([1.0, -2.0])))
    data, state = one(nc.SGD, [g1, g2], lr=0.1, momentum=0.9, dampening=0.25)
    buf = 0.9 * g1 + 0.75 * g2
    np.testing.assert_allclose(state["momentum_buffer"], buf)
    np.testing.assert_allclose(data, [1.0, -2.0] - 0.1 * g1 - 0.1 * buf)
    data, state = one(nc.SGD, [g1, g2], lr=0.1, momentum=0.9, nesterov=True)
    buf = 0.9 * g1 + g2
    np.testing.assert_allclose(data, [1.0, -2.0] - 0.1 * (g1 + 0.9 * g1) - 0.1 * (g2 + 0.9 * buf))
    big, small = np.array([4.0, 4.0]), np.array([1e-3, 1e-3])
    _, state = one(nc.Adam, [big, small], amsgrad=True)
    np.testing.assert_allclose(state["max_exp_avg_sq"], 0.001 * 16.0)  # v after the first step, not the smaller v
    assert np.all(state["exp_avg_sq"] < state["max_exp_avg_sq"])


@pytest.mark.parametrize("make", [
    lambda p: nc.SGD([p], lr=0.1, nesterov=True),
    lambda p: nc.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
    lambda p: nc.SGD([{"params": [p], "momentum": 0.0}], lr=0.1, momentum=0.9, nesterov=True),
], ids=["no-momentum", "dampening", "a-group-without-momentum"])
def test_nesterov_without_momentum_or_with_dampening_is_refused_as_torch_refuses_it(make):
    p = nc.Parameter(np.ones(2))
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        make(p)


def test_a_nesterov_group_made_invalid_stops_step_before_any_change():
    p = nc.Parameter(np.ones(2))
    opt = nc.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    p.grad[...] = 1.0
    opt.param_groups[0]["dampening"] = 0.5
    with pytest.raises(ValueError, match="zero dampening"):
        opt.step()
    assert np.all(p.data == 1.0) and opt.state == {}


@pytest.mark.parametrize("make", [lambda p: nc.Adam([p], amsgrad="yes"), lambda p: nc.AdamW([p], maximize=1),
                                  lambda p: nc.SGD([p], lr=0.1, nesterov=None)],
                         ids=["amsgrad", "maximize", "nesterov"])
def test_a_flag_must_be_true_or_false(make):
    with pytest.raises(TypeError, match="must be True or False"):
        make(nc.Parameter(np.ones(2)))


def test_a_state_dict_saved_with_a_scheduler_loads_and_keeps_initial_lr():
    """torch's schedulers add initial_lr to every group; torch loads such a state dict and gives
    the key back in state_dict(); so does normcore, and the key changes no step."""
    rng = np.random.default_rng(1)
    params = [nc.Parameter(rng.standard_normal(s)) for s in SHAPES]
    opt = nc.AdamW(groups_of(params, [{}, {"lr": 0.01}]), lr=0.1)
    saved = opt.state_dict()
    for g in saved["param_groups"]:
        g["initial_lr"] = g["lr"]
    saved["param_groups"][1]["param_names"] = ["b", "c"]
    fresh = nc.AdamW(groups_of(params, [{}, {}]), lr=0.5)
    fresh.load_state_dict(saved)
    assert fresh.state_dict()["param_groups"] == saved["param_groups"]
    assert [g["initial_lr"] for g in fresh.param_groups] == [0.1, 0.01]
    saved["param_groups"][1]["param_names"].append("x")  # the loaded group holds its own copy
    assert fresh.param_groups[1]["param_names"] == ["b", "c"]
    for p in params:
        p.grad[...] = 1.0
    fresh.step()


def test_a_torch_state_dict_saved_with_a_scheduler_loads_as_torch_loads_it():
    torch = torch_or_skip()
    tparams = [torch.nn.Parameter(torch.ones(s, dtype=torch.float64)) for s in SHAPES]
    topt = torch.optim.SGD(groups_of(tparams, [{}, {"lr": 0.3}]), lr=0.1, momentum=0.9, nesterov=True)
    torch.optim.lr_scheduler.StepLR(topt, step_size=2)
    for tp in tparams:
        tp.grad = torch.ones_like(tp)
    topt.step()
    saved = to_numpy(torch, topt.state_dict())
    assert all("initial_lr" in g for g in saved["param_groups"])
    params = [nc.Parameter(np.ones(s)) for s in SHAPES]
    opt = nc.SGD(groups_of(params, [{}, {}]), lr=1.0)
    opt.load_state_dict(saved)
    tfresh = torch.optim.SGD(groups_of([torch.nn.Parameter(t.detach().clone()) for t in tparams], [{}, {}]), lr=1.0)
    tfresh.load_state_dict(topt.state_dict())
    ours, theirs = opt.state_dict()["param_groups"], tfresh.state_dict()["param_groups"]
    flags = ("foreach", "differentiable", "fused")  # torch's choice of implementation, not kept
    assert ours == [{k: v for k, v in g.items() if k not in flags} for g in theirs]


def test_a_state_dict_from_before_maximize_and_nesterov_loads_with_them_off():
    """torch fills in the flags an older state dict lacks (its __setstate__); so does normcore."""
    p = nc.Parameter(np.ones(2))
    saved = nc.SGD([p], lr=0.1, momentum=0.5).state_dict()
    for k in ("nesterov", "maximize"):
        del saved["param_groups"][0][k]
    opt = nc.SGD([p], lr=1.0, nesterov=True, momentum=0.9, maximize=True)
    opt.load_state_dict(saved)
    assert opt.param_groups[0]["nesterov"] is False and opt.param_groups[0]["maximize"] is False
    del saved["param_groups"][0]["dampening"]  # torch has always saved dampening
    with pytest.raises(ValueError, match=r"missing hyperparameter\(s\) \['dampening'\]"):
        opt.load_state_dict(saved)


# --- which saved state goes to which parameter --------------------------------------------------

def momentum_state_dict(rng):
    """Three parameters in two groups, an SGD with momentum after one step: buffers that tell the
    parameters apart (parameter k's buffer is k + 1 everywhere); one shape, so that any
    assignment of states to parameters loads."""
    params = [nc.Parameter(rng.standard_normal((2, 3))) for _ in SHAPES]
    opt = nc.SGD(groups_of(params, [{}, {}]), lr=0.1, momentum=0.9)
    for k, p in enumerate(params):
        p.grad[...] = k + 1.0
    opt.step()
    return params, opt.state_dict()


def relabelled(sd, label):
    """``sd`` with every parameter index i called label[i] instead (in the groups and in the state)."""
    out = copy.deepcopy(sd)
    for g in out["param_groups"]:
        g["params"] = [label[i] for i in g["params"]]
    out["state"] = {label[i]: s for i, s in out["state"].items()}
    return out


def loaded_buffers(params, sd):
    opt = nc.SGD(groups_of(params, [{}, {}]), lr=0.1, momentum=0.9)
    opt.load_state_dict(sd)
    return [float(opt.state[p]["momentum_buffer"].flat[0]) for p in params], opt


@pytest.mark.parametrize("label", [{0: 10, 1: 11, 2: 12}, {0: 7, 1: 3, 2: 100}], ids=["10-11-12", "7-3-100"])
def test_renumbered_indices_load_each_state_into_its_parameter(label):
    """torch matches saved indices to parameters by their position in the saved groups, whatever
    the numbers; state_dict() then numbers from 0 again."""
    params, sd = momentum_state_dict(np.random.default_rng(2))
    buffers, opt = loaded_buffers(params, relabelled(sd, label))
    assert buffers == [1.0, 2.0, 3.0]
    assert list(opt.state_dict()["state"]) == [0, 1, 2]


def test_permuted_indices_load_the_state_of_the_index_at_each_position():
    """Group 1 saved as params [2, 1]: its first parameter gets index 2's state."""
    params, sd = momentum_state_dict(np.random.default_rng(3))
    permuted = copy.deepcopy(sd)
    permuted["param_groups"][1]["params"] = [2, 1]
    buffers, _ = loaded_buffers(params, permuted)
    assert buffers == [1.0, 3.0, 2.0]
    crossed = relabelled(sd, {0: 1, 1: 0, 2: 2})  # index 1 in group 0, index 0 in group 1
    buffers, _ = loaded_buffers(params, crossed)
    assert buffers == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("label, positions", [({0: 10, 1: 11, 2: 12}, [0, 1, 2]), ({0: 0, 1: 2, 2: 1}, None)],
                         ids=["renumbered", "permuted"])
def test_renumbered_and_permuted_indices_load_as_in_torch(label, positions):
    torch = torch_or_skip()
    params, sd = momentum_state_dict(np.random.default_rng(4))
    sd = relabelled(sd, label)
    if positions is None:
        sd["param_groups"][1]["params"] = sd["param_groups"][1]["params"][::-1]
    buffers, _ = loaded_buffers(params, sd)
    tparams = [torch.nn.Parameter(torch.tensor(p.data.copy())) for p in params]
    topt = torch.optim.SGD(groups_of(tparams, [{}, {}]), lr=0.1, momentum=0.9)
    topt.load_state_dict(to_torch(torch, sd))
    assert buffers == [float(topt.state[tp]["momentum_buffer"].flatten()[0]) for tp in tparams]


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_an_sgd_step_without_momentum_leaves_no_state(momentum):
    """torch keeps no state for SGD without momentum, so its state_dict()["state"] is {}."""
    p = nc.Parameter(np.ones(3))
    opt = nc.SGD([p], lr=0.1, momentum=momentum)
    p.grad[...] = 1.0
    opt.step()
    expected = {} if momentum == 0 else {0: {"momentum_buffer": np.ones(3)}}
    sd = opt.state_dict()["state"]
    assert list(sd) == list(expected)
    for i, s in expected.items():
        assert list(sd[i]) == list(s) and np.array_equal(sd[i]["momentum_buffer"], s["momentum_buffer"])
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle for the empty state") if momentum == 0 else None
    if torch is not None:
        tp = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
        topt = torch.optim.SGD([tp], lr=0.1)
        tp.grad = torch.ones(3, dtype=torch.float64)
        topt.step()
        assert topt.state_dict()["state"] == sd == {}
