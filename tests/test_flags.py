"""Every True/False argument is checked, never taken by truthiness: a string "False" is truthy,
so ``Linear(4, 3, bias="False")`` would quietly build a bias. normcore refuses anything but a
bool with a TypeError naming the argument (as the norms' ``affine`` and ``elementwise_affine``
do; PyTorch's constructors accept these values and read them by truthiness), and
``Module.train(mode)`` raises PyTorch's ValueError. A refused call changes nothing."""

import numpy as np
import pytest

import normcore as nc
from normcore import experiments
from normcore.derivations import step_through
from normcore.derivations.render import render_text
from normcore.experiments._nn import mlp
from normcore.perf.bench import run_bench

NOT_BOOLS = ["False", "True", 0, 1, None, 1.0]


@pytest.mark.parametrize("value", NOT_BOOLS)
def test_linear_bias_must_be_a_bool(value):
    with pytest.raises(TypeError, match=r"Linear: bias must be True or False, got"):
        nc.Linear(4, 3, bias=value)


def test_linear_bias_takes_true_false_and_numpy_bools():
    assert nc.Linear(4, 3, bias=False).bias is None
    assert nc.Linear(4, 3, bias=np.bool_(False)).bias is None
    assert nc.Linear(4, 3, bias=True).bias.shape == (3,)


def test_attention_projections_refuse_a_string_bias():
    with pytest.raises(TypeError, match="bias must be True or False"):
        nc.MultiheadSelfAttention(8, 2, bias="False")


@pytest.mark.parametrize("value", NOT_BOOLS + [np.bool_(False)])
def test_train_mode_must_be_a_bool_and_a_refused_call_changes_nothing(value):
    model = nc.Sequential(nc.Linear(4, 3), nc.Dropout(0.5), nc.LayerNorm(3)).eval()
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train(value)
    assert not any(m.training for _, m in model.named_modules())
    assert model.train(True) is model and all(m.training for _, m in model.named_modules())


@pytest.mark.parametrize("value", ["False", 0, 1, np.bool_(True)])
def test_train_mode_is_refused_as_pytorch_refuses_it(value):
    torch = pytest.importorskip("torch", reason="PyTorch is the reference for train(mode); not installed")
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        torch.nn.Linear(2, 2).train(value)
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        nc.Linear(2, 2).train(value)


def test_fit_progress_must_be_a_bool_and_nothing_trains():
    task = nc.tasks.CopyTask(n_tokens=2, n_symbols=4)
    model = nc.TinyTransformer(task.vocab_size, 8, 1, 2, task.seq_len, rng=0).eval()
    before = model.state_dict()
    with pytest.raises(TypeError, match="fit: progress must be True or False"):
        nc.fit(model, task, nc.SGD(model.parameters(), lr=0.1), steps=2, progress="False")
    after = model.state_dict()
    assert all(np.array_equal(after[k], v) for k, v in before.items()) and not model.training


def test_gradcheck_table_header_must_be_a_bool():
    report = nc.gradcheck(nc.LayerNorm(3), np.random.default_rng(0).standard_normal((2, 3)))
    assert report.table(header=False) == "\n".join(report.table().splitlines()[1:])
    with pytest.raises(TypeError, match="header must be True or False"):
        report.table(header="False")


def test_step_through_causal_and_latex_must_be_bools():
    with pytest.raises(TypeError, match="step_through: causal must be True or False"):
        step_through("softmax", shape=(3, 3), causal="False")
    st = step_through("layernorm")
    with pytest.raises(TypeError, match="render_text: latex must be True or False"):
        render_text(st, latex="no")
    with pytest.raises(TypeError, match="latex must be True or False"):
        st.text(latex=0)


@pytest.mark.parametrize("name", experiments.EXPERIMENTS)
def test_every_experiment_refuses_a_quick_that_is_not_a_bool(name):
    with pytest.raises(TypeError, match=f"experiments.{name}.run: quick must be True or False"):
        experiments.load(name).run(quick="False")


def test_run_and_plot_refuses_a_quick_that_is_not_a_bool_and_writes_nothing(tmp_path):
    with pytest.raises(TypeError, match="run_and_plot: quick must be True or False"):
        experiments.run_and_plot("invariance", quick="False", outdir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_mlp_norm_after_must_be_a_bool():
    with pytest.raises(TypeError, match="mlp: norm_after must be True or False"):
        mlp([4, 8, 2], "tanh", nc.LayerNorm, norm_after="False")


def test_run_bench_quick_must_be_a_bool():
    lines = []
    with pytest.raises(TypeError, match="run_bench: quick must be True or False"):
        run_bench(quick="False", torch=None, out=lines.append)
    assert lines == []
