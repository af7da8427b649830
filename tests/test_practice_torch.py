"""Interview practice, the PyTorch track: torch.nn.Module answers with a forward only.

The track's reference answers (normcore/practice/solutions/torch/) pass every check; its
untouched skeletons are reported not implemented (a torch function, fold_batchnorm, is
recognised by its file importing torch); every torch mistake (the NumPy catalog's
forward mistakes written in torch, and the torch-only ones) is named exactly on its
generated mutant (tests/practice_bugs_torch/generate.py, written afresh for each run) and on
the hand-written files in other styles next to it; correct answers in other styles
(tests/practice_alt_torch/) pass; a torch file on a machine without torch is reported as
needing PyTorch, with exit status 2 and no traceback.
"""

import ast
import atexit
import doctest
import importlib.util
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from normcore._install import TORCH_CPU  # noqa: E402
from normcore.cli import main  # noqa: E402
from normcore.practice import EXERCISES, grade_file  # noqa: E402
from normcore.practice.catalog import BY_ID  # noqa: E402
from normcore.practice.mutants import solution_source, tagged_lines  # noqa: E402
from normcore.practice.report import format_report  # noqa: E402
from normcore.practice.torch_track import EXERCISES as TORCH_EXERCISES  # noqa: E402
from normcore.practice.torch_track import TORCH_NN  # noqa: E402
from normcore.practice import interview, torch_track, tracks  # noqa: E402
from normcore.practice.tracks import track_for  # noqa: E402
from normcore.practice.torch_track import mistakes  # noqa: E402

HERE = Path(__file__).parent
ROOT = HERE.parent
BUG_DIR = HERE / "practice_bugs_torch"
SOLUTIONS = ROOT / "normcore" / "practice" / "solutions" / "torch"
SKELETONS = ROOT / "normcore" / "practice" / "skeletons" / "torch"
# may also raise in some checks: a shape error, autograd's in-place error, a float64 tensor
# left behind by .to(float32)
RAISING = {"torch-in-place", "torch-no-keepdim", "torch-wrong-dim", "torch-not-registered",
           "bn-momentum-none-unsupported", "ce-logits-in-place", "torch-wn-g-shape"}


def _generated_files():
    spec = importlib.util.spec_from_file_location("practice_bugs_torch_generate", BUG_DIR / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder = tempfile.mkdtemp(prefix="normcore-torch-bugs-")
    atexit.register(shutil.rmtree, folder, True)
    return module.write(folder)


GENERATED = _generated_files()
HAND_WRITTEN = sorted(p for p in BUG_DIR.glob("*@*.py"))


def expected_id(path):
    return path.name.partition("@")[0]


# --- the reference answers, the skeletons, other styles -----------------------------------------
@pytest.mark.parametrize("name", TORCH_EXERCISES)
def test_torch_reference_answer_passes_every_check(name):
    report = grade_file(SOLUTIONS / f"{name}.py")
    assert report.passed and not report.not_implemented
    assert {c.status for c in report.checks} == {"pass"}
    labels = {c.probe for c in report.checks}
    assert {p.label for p in EXERCISES[name].probes} <= labels  # the NumPy exercise's probes
    if not EXERCISES[name].function:  # a module: checked against torch's own layer too
        assert "the module; then 2 training forwards" in labels
        assert "forward on tanh(x): the input, autograd" in labels


@pytest.mark.parametrize("name", TORCH_EXERCISES)
def test_untouched_torch_skeleton_is_reported_not_implemented(name):
    todo = EXERCISES[name].class_name if EXERCISES[name].function else "forward"
    report = grade_file(SKELETONS / f"{name}.py")
    assert report.not_implemented == [todo] and not report.passed
    assert {c.status for c in report.checks} <= {"TODO", "pass"}
    # only the module's own make-up passes (parameters and buffers are given in __init__)
    assert {c.probe for c in report.checks if c.status == "pass"} <= {"the module; then 2 training forwards"}
    text = format_report(report)
    assert f"Not implemented yet: {todo}" in text and "Traceback" not in text


@pytest.mark.parametrize("path", sorted((HERE / "practice_alt_torch").glob("*.py")), ids=lambda p: p.stem)
def test_correct_torch_answers_in_another_style_pass(path):
    report = grade_file(path)
    assert report.passed, [(c.label, c.note) for c in report.checks if c.status != "pass"]


def test_the_track_covers_every_exercise_but_the_numpy_only_ones():
    assert set(TORCH_EXERCISES) == set(EXERCISES) - set(torch_track.NUMPY_ONLY) == {
        "batchnorm", "layernorm", "rmsnorm", "groupnorm", "dropout", "softmax", "log_softmax",
        "cross_entropy", "dyt", "attention", "qk_norm", "transformer_block", "mlp_with_batchnorm",
        "fold_batchnorm", "fold_norm_affine", "sync_batchnorm", "weight_norm", "soft_cap", "z_loss"}
    assert set(torch_track.NUMPY_ONLY) == {"batch_renorm"}


def test_a_numpy_only_exercise_says_why_it_has_no_torch_version(tmp_path, capsys):
    assert main(["practice", "new", "batch_renorm", "--torch", "--dir", str(tmp_path)]) == 2
    assert "torch has no Batch Renormalization layer" in " ".join(capsys.readouterr().err.split())
    assert main(["practice", "list"]) == 0
    assert "NumPy only" in capsys.readouterr().out
    assert all(interview.pick(seed=s, torch=True).name in TORCH_EXERCISES for s in range(30))
    assert main(["practice", "interview", "batch_renorm", "--torch", "--no-wait",
                 "--dir", str(tmp_path)]) == 2
    assert "torch has no Batch Renormalization layer" in " ".join(capsys.readouterr().err.split())
    assert list(tmp_path.iterdir()) == []
    assert not any(n.lower().startswith("batchrenorm") for n in dir(torch.nn))  # what it says


def test_a_function_is_on_the_torch_track_when_its_file_imports_torch(tmp_path):
    """The same fold written with NumPy is graded on NumPy arrays; with torch, on tensors."""
    numpy_answer = ROOT / "normcore" / "practice" / "solutions" / "fold_batchnorm.py"
    assert grade_file(numpy_answer).passed
    assert track_for(_loaded(numpy_answer).fold_batchnorm) is tracks.NUMPY
    assert track_for(_loaded(SOLUTIONS / "fold_batchnorm.py").fold_batchnorm) is torch_track.TRACK
    aliased = tmp_path / "my_fold.py"  # torch imported under another name
    aliased.write_text((SOLUTIONS / "fold_batchnorm.py").read_text()
                       .replace("import torch\n", "import torch as T\n").replace("torch.sqrt", "T.sqrt"))
    assert track_for(_loaded(aliased).fold_batchnorm) is torch_track.TRACK
    assert grade_file(aliased).passed


def _loaded(path):
    spec = importlib.util.spec_from_file_location(f"loaded_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- the mistakes -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", HAND_WRITTEN + GENERATED, ids=lambda p: p.name)
def test_torch_mistake_is_named_exactly(path):
    report = grade_file(path)
    assert not report.passed, "the grader passed a buggy implementation"
    failing = ([c for c in report.checks if c.status == "FAIL"]  # a RAISING one may only raise
               or [c for c in report.checks if c.status == "ERROR"])
    assert {tuple(c.diagnoses) for c in failing if not c.follows} == {(expected_id(path),)}
    assert report.diagnosis_ids == [expected_id(path)]
    if expected_id(path) not in RAISING:
        assert {c.status for c in report.checks} <= {"pass", "FAIL"}
    assert f"[{expected_id(path)}]" in format_report(report)


def test_every_torch_mistake_has_a_generated_file_and_the_torch_only_ids_are_these():
    assert {m.id for m in mistakes.TORCH_ONLY} == {
        "torch-var-unbiased", "torch-no-keepdim", "torch-wrong-dim", "torch-not-registered",
        "torch-running-with-grad", "torch-data-detach", "torch-in-place", "torch-rmsnorm-no-upcast",
        "torch-wn-g-shape"}
    names = {p.name for p in GENERATED}
    for m in mistakes.CATALOG:
        for key, variants in m.variants.items():
            assert key.startswith("torch/") and key.removeprefix("torch/") in TORCH_EXERCISES
            for k in range(len(variants)):
                assert f"{m.id}@{key.removeprefix('torch/')}.{k}.py" in names
    assert all(m.id in BY_ID for m in mistakes.CATALOG)  # a report can look each one up
    assert all(m.taught_in for m in mistakes.CATALOG)


@pytest.mark.parametrize("name", TORCH_EXERCISES)
def test_every_torch_anchor_is_on_exactly_one_tagged_line_and_every_tag_is_used(name):
    key = "torch/" + name
    source = solution_source(key)
    lines, text, used = tagged_lines(source), source.splitlines(), set()
    for m in mistakes.mistakes_for(key):
        for variant in m.variants[key]:
            for anchor, _ in variant:
                where = lines.get(anchor.tag, [])
                assert len(where) == 1, (m.id, anchor.tag)
                assert text[where[0]].count(anchor) == 1, (m.id, str(anchor))
                used.add(anchor.tag)
    assert set(lines) == used, f"tags no mistake uses in solutions/{key}.py: {set(lines) - used}"


def _torch_batchnorm(folder, name, *replacements):
    """The track's BatchNorm1d answer with each (old, new) replaced (each old occurs once)."""
    text = solution_source("torch/batchnorm")
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path = Path(folder) / f"{name}_torch.py"
    path.write_text(text)
    return path


def test_a_batchnorm_over_the_batch_dim_alone_is_not_taken_for_a_missing_keepdim(tmp_path):
    """Statistics over dim 0 alone (a wrong axis, keepdim kept): right on (N, C), a shape error
    on every (N, C, L) input, as a missing keepdim on most of them. Where C == L a missing
    keepdim gives numbers instead (its statistics broadcast along L), and this answer still
    raises: the grader does not name torch-no-keepdim."""
    path = _torch_batchnorm(tmp_path, "bn_dim0",
                            ("x.mean(dim=dims, keepdim=True)", "x.mean(dim=0, keepdim=True)"),
                            ("x.var(dim=dims, unbiased=False, keepdim=True)",
                             "x.var(dim=0, unbiased=False, keepdim=True)"))
    exercise = EXERCISES["batchnorm"]
    square = [p for p in torch_track.TRACK.probes(exercise) if "C = L" in p.label]
    assert square, "the track has a BatchNorm probe with C == L"
    no_keepdim = torch_track.TRACK.mutants(exercise).run((("torch-no-keepdim", 0),), square[0])
    assert no_keepdim.error is None and "forward" in no_keepdim.rows  # numbers, not an error
    report = grade_file(path)
    assert {c.probe for c in report.checks if c.status == "ERROR"} >= {square[0].label}
    assert "torch-no-keepdim" not in report.diagnosis_ids and report.diagnosis_ids == []


def test_num_batches_tracked_set_to_1_instead_of_counted_fails_the_module_probe(tmp_path):
    """``num_batches_tracked.fill_(1)`` instead of ``+= 1``: right after one training step,
    wrong after two. The module probe makes two training forwards and checks the count
    against torch.nn.BatchNorm1d's; no catalogued mistake is named."""
    path = _torch_batchnorm(tmp_path, "bn_fill", ("self.num_batches_tracked += 1",
                                                  "self.num_batches_tracked.fill_(1)"))
    report = grade_file(path)
    check = {c.label: c for c in report.checks}["the module; then 2 training forwards: batches tracked"]
    assert check.status == "FAIL" and not report.passed
    assert report.diagnosis_ids == []


def test_var_unbiased_is_named_by_its_torch_name_in_the_torch_track():
    """The two would give the same numbers: in the torch track only torch-var-unbiased is listed."""
    ids = {m.id for m in mistakes.CATALOG}
    assert "torch-var-unbiased" in ids and "var-unbiased-in-normalization" not in ids


# --- the module's own make-up, float16 ---------------------------------------------------------
@pytest.mark.parametrize("name", [n for n in TORCH_EXERCISES if n in TORCH_NN])
def test_torch_answer_has_the_state_dict_of_torchs_own_layer(name):
    ex = EXERCISES[name]
    ns = {}
    exec(solution_source("torch/" + name), ns)
    ours = ns[ex.class_name](*ex.example_args)
    theirs = getattr(torch.nn, ex.class_name)(*ex.example_args)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]


def test_weight_norm_answer_is_torchs_weight_norm_parametrization():
    """The track's reference for weight_norm is its answer: checked here against torch's own
    parametrization of a Linear, output and every gradient, g and v given the same values."""
    ns = {}
    exec(solution_source("torch/weight_norm"), ns)
    ours = ns["WeightNormLinear"](5, 3).double()
    theirs = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(5, 3).double(), dim=0)
    rng = np.random.default_rng(4)
    g, v = torch.from_numpy(rng.standard_normal((3, 1))), torch.from_numpy(rng.standard_normal((3, 5)))
    with torch.no_grad():
        for module, (pg, pv) in ((ours, (ours.weight_g, ours.weight_v)),
                                 (theirs, (theirs.parametrizations.weight.original0,
                                           theirs.parametrizations.weight.original1))):
            pg.copy_(g), pv.copy_(v), module.bias.copy_(torch.arange(3.0))
    x = torch.from_numpy(rng.standard_normal((2, 4, 5)))
    dy = torch.from_numpy(rng.standard_normal((2, 4, 3)))
    xs = [x.clone().requires_grad_() for _ in range(2)]
    ys = [m(xi) for m, xi in zip((ours, theirs), xs)]
    for y in ys:
        y.backward(dy)
    theirs_g, theirs_v = theirs.parametrizations.weight.original0, theirs.parametrizations.weight.original1
    pairs = [(ys[0], ys[1]), (xs[0].grad, xs[1].grad), (ours.weight_g.grad, theirs_g.grad),
             (ours.weight_v.grad, theirs_v.grad), (ours.bias.grad, theirs.bias.grad)]
    for a, b in pairs:
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-12)


def test_float16_rmsnorm_answer_matches_float64_arithmetic():
    """The float16 probe's reference is the track's answer: checked here against float64."""
    ns = {}
    exec(solution_source("torch/rmsnorm"), ns)
    x = torch.from_numpy(np.random.default_rng(3).standard_normal((4, 6)) * 300.0)
    layer = ns["RMSNorm"](6, eps=1e-5).half()
    got = layer(x.half()).double()
    want = x.half().double() / torch.sqrt(x.half().double().pow(2).mean(-1, keepdim=True) + 1e-5)
    assert torch.isfinite(got).all()
    assert torch.allclose(got, want, rtol=2e-3, atol=1e-3)


def test_sync_batchnorm_answer_through_the_autograd_group_is_batchnorm_on_the_whole_batch():
    """K = 3 workers, one with an empty shard: the concatenated outputs and dx are
    torch.nn.BatchNorm1d's on the concatenated batch, the workers' weight gradients add up to
    its weight gradient, and the state_dict keys are torch.nn.SyncBatchNorm's."""
    from normcore.distributed import InProcessGroup
    from normcore.practice.torch_track.group import AutogradGroup
    ns = {}
    exec(solution_source("torch/sync_batchnorm"), ns)
    rng = np.random.default_rng(5)
    xs = [torch.from_numpy(rng.standard_normal((n, 3)) * 2 + k).requires_grad_() for k, n in enumerate((4, 0, 3))]
    dys = [torch.from_numpy(rng.standard_normal(x.shape)) for x in xs]
    group = InProcessGroup(3, timeout=10.0)
    gamma = torch.from_numpy(rng.standard_normal(3))
    layers = [ns["SyncBatchNorm"](3, process_group=AutogradGroup(w)).double() for w in group.workers]
    for layer in layers:
        layer.weight.data.copy_(gamma)

    def step(worker, x, dy):
        y = layers[worker.rank](x)
        y.backward(dy)
        return y.detach()
    ys = group.run(step, xs, dys)
    bn = torch.nn.BatchNorm1d(3).double()
    bn.weight.data.copy_(gamma)
    x = torch.cat([x.detach() for x in xs]).requires_grad_()
    y = bn(x)
    y.backward(torch.cat(dys))
    assert torch.allclose(torch.cat(ys), y.detach(), rtol=1e-10, atol=1e-12)
    assert torch.allclose(torch.cat([x.grad for x in xs]), x.grad, rtol=1e-10, atol=1e-12)
    assert torch.allclose(sum(layer.weight.grad for layer in layers), bn.weight.grad, rtol=1e-10)
    assert all(torch.allclose(layer.running_var, bn.running_var, rtol=1e-12) for layer in layers)
    assert list(layers[0].state_dict()) == list(torch.nn.SyncBatchNorm(3).state_dict())


# --- the worked examples in the torch skeletons -----------------------------------------------
def _doctest(name, namespace):
    doc = ast.get_docstring(ast.parse((SKELETONS / f"{name}.py").read_text()), clean=False)
    test = doctest.DocTestParser().get_doctest(doc, namespace, name, None, 0)
    runner = doctest.DocTestRunner(verbose=False)
    default = torch.get_default_dtype()
    try:
        runner.run(test, out=lambda text: None)
    finally:
        torch.set_default_dtype(default)
    return runner


@pytest.mark.parametrize("name", TORCH_EXERCISES)
def test_torch_worked_example_passes_on_torchs_own_layer_and_on_the_answer(name):
    cls = EXERCISES[name].class_name
    ns = {}
    exec(solution_source("torch/" + name), ns)
    answers = [ns]
    if name in TORCH_NN:  # DyT and attention: their numbers come from the answer
        answers.append({"torch": torch, cls: getattr(torch.nn, cls)})
    for namespace in answers:
        runner = _doctest(name, namespace)
        assert runner.failures == 0 and runner.tries >= 5, (name, namespace[cls])


# --- the command line -------------------------------------------------------------------------
def test_cli_new_and_solution_with_torch(tmp_path, capsys):
    assert main(["practice", "new", "layernorm", "--torch", "--dir", str(tmp_path)]) == 0
    written = tmp_path / "my_layernorm_torch.py"
    assert "class LayerNorm(nn.Module)" in written.read_text()
    capsys.readouterr()
    assert main(["practice", "check", str(written)]) == 1
    assert "Not implemented yet: forward" in capsys.readouterr().out
    assert main(["practice", "solution", "rmsnorm", "--torch"]) == 0
    assert capsys.readouterr().out == (SOLUTIONS / "rmsnorm.py").read_text()
    assert main(["practice", "new", "fold_batchnorm", "--torch", "--dir", str(tmp_path)]) == 0
    assert "fill in fold_batchnorm" in capsys.readouterr().out
    assert main(["practice", "check", str(tmp_path / "my_fold_batchnorm_torch.py")]) == 1
    assert "Not implemented yet: fold_batchnorm" in capsys.readouterr().out
    assert main(["practice", "solution", "sync_batchnorm", "--torch"]) == 0
    assert capsys.readouterr().out == (SOLUTIONS / "sync_batchnorm.py").read_text()


def test_cli_check_of_a_torch_file_fits_80_columns(capsys):
    assert main(["practice", "check", str(BUG_DIR / "torch-running-with-grad@batchnorm-assigned.py")]) == 1
    out = capsys.readouterr().out
    assert "[torch-running-with-grad]" in out
    assert max(map(len, out.splitlines())) <= 80


@pytest.mark.parametrize("name", ["layernorm", "fold_batchnorm"])
def test_a_torch_file_without_torch_says_it_needs_pytorch(tmp_path, name):
    """torch made unimportable in a fresh interpreter: a clear message and exit status 2."""
    shutil.copy(SOLUTIONS / f"{name}.py", tmp_path / f"my_{name}_torch.py")
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); sys.modules['torch'] = None\n"
              "from normcore.cli import main\n"
              f"sys.exit(main(['practice', 'check', 'my_{name}_torch.py']))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "needs PyTorch" in done.stdout and TORCH_CPU in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert max(map(len, done.stdout.splitlines())) <= 80
