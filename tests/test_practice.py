"""Interview practice: the catalog, the grader's verdicts and diagnoses, and the command line.

Every catalogued mistake has buggy implementations under tests/practice_bugs/, of two kinds;
the grader must fail each one and diagnose exactly its mistake (the part of the file name
before '@') on every failing check.

- Generated (``<id>@<exercise>.<k>.py``): for every mistake, exercise and variant of the
  catalog, the reference answer with exactly that variant applied, written afresh into a
  temporary folder for each run by tests/practice_bugs/generate.py (never committed, so never
  stale). They follow the reference answers and the catalog as either changes, and they show
  that no variant is mistaken for another mistake.
- Written by hand, in tests/practice_bugs/ (``<id>.py``, ``<id>@<style>.py``): the same
  mistakes written independently of the catalog, in other styles than the reference answers
  (loops, a staged backward with dvar and dmu, channels moved last, weight and bias, short
  forms from write-ups). The grader never reads the source, so these show that a mistake is
  named by its numbers, whatever way it is written. A copy of an answer with only the
  catalog's own line changed belongs to the generated files, not here; a mistake written into
  one of the correct answers of tests/practice_alt/ is a row of tests/practice_bugs/styles.py,
  written for each run like the generated files.
"""

import ast
import dataclasses
import functools
import atexit
import importlib.util
import io
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from normcore.cli import main
from normcore.i18n.width import wrap
from normcore.practice import CATALOG, EXERCISES, CannotGrade, grade, grade_file
from normcore.practice.catalog import BY_ID, Anchor
from normcore.practice.grader import (apply_variant, exercise_for, format_report, mutant_class,
                                      solution_source)
from normcore.practice.mutants import VariantDoesNotApply, tagged_lines

HERE = Path(__file__).parent
BUG_DIR = HERE / "practice_bugs"
HELPERS = ("generate.py", "styles.py")  # the scripts that write bug files, not bug files


def _generator():
    spec = importlib.util.spec_from_file_location("practice_bugs_generate", BUG_DIR / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _generated_files():
    """Every generated bug file, written for this run into a temporary folder (removed at exit)."""
    folder = tempfile.mkdtemp(prefix="normcore-generated-bugs-")
    atexit.register(shutil.rmtree, folder, True)
    return _generator().write(folder)


GENERATED = _generated_files()


def _style_files():
    """The buggy answers in other styles (tests/practice_bugs/styles.py), written for this run
    into a temporary folder (removed at exit)."""
    spec = importlib.util.spec_from_file_location("practice_bugs_styles", BUG_DIR / "styles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    folder = tempfile.mkdtemp(prefix="normcore-style-bugs-")
    atexit.register(shutil.rmtree, folder, True)
    return module.write(folder)


HAND_WRITTEN = sorted([p for p in BUG_DIR.glob("*.py") if p.name not in HELPERS] + _style_files(),
                      key=lambda p: p.name)
BUGS = HAND_WRITTEN + GENERATED
SOLUTIONS = Path(__file__).parents[1] / "normcore" / "practice" / "solutions"
SKELETONS = Path(__file__).parents[1] / "normcore" / "practice" / "skeletons"


def expected_id(path):
    """practice_bugs/eps-outside-sqrt@layernorm-loops.py, practice_bugs/generated/
    eps-outside-sqrt@batchnorm.0.py -> eps-outside-sqrt"""
    return path.stem.split("@")[0]


def bug_id(path):
    """The test id of a bug file: its name without .py, under generated/ for the generated ones."""
    return ("generated/" if path in GENERATED else "") + path.stem


# --- the catalog ------------------------------------------------------------------------------
def test_catalog_has_at_least_100_distinct_documented_mistakes():
    ids = [m.id for m in CATALOG]
    assert len(ids) >= 100 and len(set(ids)) == len(ids)
    for m in CATALOG:
        assert m.title and len(m.symptom) > 30 and len(m.hint) > 30 and m.taught_in, m.id
        assert m.variants and set(m.variants) <= set(EXERCISES), m.id


# The catalog's files, one per family of exercises, and the exercises of each family.
FAMILIES = {"norms": {"batchnorm", "layernorm", "rmsnorm", "groupnorm"}, "dropout": {"dropout"},
            "softmax": {"softmax", "log_softmax", "cross_entropy"},
            "attention": {"attention", "qk_norm"},
            "blocks": {"transformer_block", "mlp_with_batchnorm"}, "dyt": {"dyt"},
            "fold_batchnorm": {"fold_batchnorm"}, "fold_norm_affine": {"fold_norm_affine"},
            "sync_batchnorm": {"sync_batchnorm"}, "weight_norm": {"weight_norm"},
            "batch_renorm": {"batch_renorm"}, "logits": {"soft_cap", "z_loss"}}


def test_the_catalog_is_its_families_files_in_order_each_mistake_with_its_main_family():
    """CATALOG is the family files' MISTAKES one after the other, every exercise belongs to one
    family, and a mistake that spans families lives in the file of one of its exercises."""
    import importlib
    files = {name: importlib.import_module(f"normcore.practice.catalog.{name}") for name in FAMILIES}
    assert CATALOG == [m for name in FAMILIES for m in files[name].MISTAKES]
    assert sorted(e for exercises in FAMILIES.values() for e in exercises) == sorted(EXERCISES)
    for name, module in files.items():
        for m in module.MISTAKES:
            assert set(m.exercises) & FAMILIES[name], (name, m.id)


@pytest.mark.parametrize("mistake", CATALOG, ids=lambda m: m.id)
def test_every_mutant_is_a_real_mistake(mistake):
    """Each variant applies to its reference answer (its lines occur exactly once) and fails
    at least one check, so that the mistake has a signature to be recognised by."""
    for name, variants in mistake.variants.items():
        exercise, source = EXERCISES[name], solution_source(name)
        for k, variant in enumerate(variants):
            assert apply_variant(source, variant) != source
            report = grade(mutant_class(exercise, source, variant, f"test{k}"), exercise)
            assert not report.passed, (mistake.id, name, k)
            assert mistake.id in report.diagnosis_ids


def test_every_catalogued_mistake_has_a_buggy_file():
    assert {m.id for m in CATALOG} <= {expected_id(p) for p in BUGS}
    generated = {p.name for p in GENERATED}
    for m in CATALOG:
        for name, variants in m.variants.items():
            assert {f"{m.id}@{name}.{k}.py" for k in range(len(variants))} <= generated, m.id


def test_the_generator_writes_every_variant_into_a_folder_and_replaces_old_files(tmp_path):
    done = subprocess.run([sys.executable, str(BUG_DIR / "generate.py"), str(tmp_path)],
                          capture_output=True, text=True, cwd=Path(__file__).parents[1])
    assert done.returncode == 0, done.stdout + done.stderr
    gen = _generator()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(gen.generated())
    assert f"{len(gen.generated())} generated bug files" in done.stdout
    (tmp_path / "no-such-mistake@softmax.0.py").write_text("")
    gen.write(tmp_path)
    assert not (tmp_path / "no-such-mistake@softmax.0.py").exists()


def test_a_generated_file_names_its_mistake_and_says_it_is_generated():
    for path in GENERATED:
        mistake = next(m for m in CATALOG if m.id == expected_id(path))
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc.splitlines()[0] == f"{mistake.title}.", path.name
        assert "Generated by `python tests/practice_bugs/generate.py`, from the catalog" in doc


# --- verdicts and diagnoses -------------------------------------------------------------------
@functools.cache
def graded(path):
    """``grade_file(path)`` once per test process: three tests read each bug file's report
    (its verdicts, its report's layout, how sure it is); none changes it."""
    return grade_file(path)


@pytest.mark.parametrize("path", BUGS, ids=bug_id)
def test_buggy_file_fails_with_exactly_its_diagnosis(path):
    report = graded(path)
    failing = [c for c in report.checks if c.status != "pass"]
    assert failing, "the grader passed a buggy implementation"
    # a check raises only where the mistake's mutant raises alike (then it carries the name)
    assert {c.status for c in failing} <= {"FAIL", "ERROR"}, [(c.label, c.note) for c in failing]
    assert {tuple(c.diagnoses) for c in failing} == {(expected_id(path),)}
    assert f"[{expected_id(path)}]" in format_report(report)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_reference_solution_passes_every_check(name):
    report = grade_file(SOLUTIONS / f"{name}.py")
    assert report.passed and not report.not_implemented
    assert {c.status for c in report.checks} == {"pass"}


@pytest.mark.parametrize("path", sorted((HERE / "practice_alt").glob("*.py")), ids=lambda p: p.stem)
def test_correct_answers_in_another_style_pass(path):
    """Other variance formulas, backward forms, parameter names (weight/bias, plain arrays with
    dgamma) and a missing train()/eval() are all accepted."""
    report = grade_file(path)
    assert report.passed, [(c.label, c.note) for c in report.checks if c.status not in ("pass", "n/a")]


@pytest.mark.parametrize("name", list(EXERCISES))
def test_untouched_skeleton_is_reported_not_implemented(name):
    report = grade_file(SKELETONS / f"{name}.py")
    todo = [name] if EXERCISES[name].function else ["forward", "backward"]  # fold_batchnorm: a function
    assert report.not_implemented == todo
    assert {c.status for c in report.checks} == {"TODO"}
    text = format_report(report)
    assert f"Not implemented yet: {', '.join(todo)}" in text and "Traceback" not in text


def test_half_done_skeleton_reports_backward_only(tmp_path):
    source = (SKELETONS / "layernorm.py").read_text()
    answer = solution_source("layernorm")
    forward = answer[answer.index("    def forward"):answer.index("    def backward")]
    path = tmp_path / "half.py"
    before, after = source[:source.index("    def forward")], source[source.index("    def backward"):]
    path.write_text(before + forward + after)
    report = grade_file(path)
    assert report.not_implemented == ["backward"]
    assert any(c.status == "pass" and c.row == "forward" for c in report.checks)
    assert {c.note for c in report.checks if c.status == "TODO"} == {"not implemented yet (backward)"}


def test_two_mistakes_at_once_are_both_named(tmp_path):
    """The write-up mistake: the 0.9 momentum convention *and* the biased variance in the
    running update. No single mistake reproduces running_var; the pair does."""
    source = solution_source("batchnorm")
    for old, new in [("(1 - m) * self.running_mean + m * mean.ravel()",
                      "m * self.running_mean + (1 - m) * mean.ravel()"),
                     ("(1 - m) * self.running_var + m * var.ravel() * n / (n - 1)",
                      "m * self.running_var + (1 - m) * var.ravel()")]:
        source = source.replace(old, new)
    path = tmp_path / "two.py"
    path.write_text(source)
    report = grade_file(path)
    failing = {c.row: c.diagnoses for c in report.checks if c.status == "FAIL"}
    assert failing["running_mean after 1 step"] == ["bn-momentum-flipped"]
    assert failing["running_var after 5 steps"] == ["bn-momentum-flipped", "bn-running-var-biased"]
    assert report.diagnosis_ids == ["bn-momentum-flipped", "bn-running-var-biased"]
    # the pair's mutant gives every number of every probe: "reproduces"
    assert all(c.combined_with for c in _failing(report))
    assert _how_sure(report) == ({"reproduces"}, {"reproduces"})


@pytest.mark.parametrize("edits, named", [
    # BatchNorm's backward copied as it is: dx without r, and dgamma from x_hat
    ([("dx_hat = dy * self.gamma.data.reshape(view) * r ", "dx_hat = dy * self.gamma.data.reshape(view) "),
      ("self.gamma.grad += (dy * (x_hat * r + d))", "self.gamma.grad += (dy * x_hat)")],
     ["brn-dgamma-from-x-hat", "brn-dx-without-r"]),
    # what autograd gives without a clip or a stop-gradient: the output is (x - running_mean) / sigma
    ([("np.clip(sigma_B / sigma, 1 / self.r_max, self.r_max)", "sigma_B / sigma"),
      ("np.clip((mean - running_mean) / sigma, -self.d_max, self.d_max)", "(mean - running_mean) / sigma"),
      ("dx = (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat) / sigma_B",
       "dx = dy * self.gamma.data.reshape(view) / sigma")],
     ["brn-no-clip", "brn-r-d-differentiated"]),
], ids=["batchnorm-backward", "autograd-unclipped"])
def test_batch_renorm_written_as_batchnorm_is_named_as_its_two_mistakes(tmp_path, edits, named):
    source = solution_source("batch_renorm")
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    path = tmp_path / "renorm.py"
    path.write_text(source)
    assert grade_file(path).diagnosis_ids == named


def test_batchnorms_running_statistics_mistakes_are_batch_renorms_too_one_entry_each():
    """Batch Renorm updates its running statistics as BatchNorm does: the same entries name
    the same mistakes there (their generated files are graded with the rest), never a copy."""
    shared = {"bn-momentum-flipped", "bn-momentum-hard-coded", "bn-running-var-biased",
              "bn-eval-batch-stats", "bn-momentum-none-unsupported", "bn-running-never-updated",
              "bn-running-init-first-batch"}
    assert {m.id for m in CATALOG if "batch_renorm" in m.variants and "batchnorm" in m.variants} == shared


def test_a_wrong_answer_outside_the_catalog_fails_without_a_diagnosis(tmp_path):
    source = solution_source("layernorm").replace("rstd = 1.0 / np.sqrt(var + self.eps)",
                                                  "rstd = 2.0 / np.sqrt(var + self.eps)")
    path = tmp_path / "odd.py"
    path.write_text(source)
    report = grade_file(path)
    assert not report.passed and report.diagnosis_ids == []
    assert "No catalogued mistake produces your numbers" in format_report(report)


@pytest.mark.parametrize("class_name, name", [
    ("LogSoftmax", "log_softmax"), ("Softmax", "softmax"), ("MyLogSoftmax", "log_softmax"),
    ("CrossEntropyLoss", "cross_entropy"), ("LayerNorm", "layernorm"), ("RMSNorm", "rmsnorm"),
    ("DyT", "dyt"), ("MyDyT", "dyt"), ("DynamicTanh", "dyt"),
    ("MultiheadSelfAttention", "attention"), ("QKNormSelfAttention", "qk_norm"),
    ("SyncBatchNorm", "sync_batchnorm"), ("MySyncBatchNorm", "sync_batchnorm"),
])
def test_a_class_is_graded_as_the_exercise_with_the_longest_name_it_contains(class_name, name):
    """LogSoftmax contains "softmax" too: the longer "logsoftmax" wins."""
    assert exercise_for(type(class_name, (), {})).name == name


def test_a_log_softmax_file_is_graded_as_log_softmax_not_softmax():
    assert grade_file(SOLUTIONS / "log_softmax.py").exercise.name == "log_softmax"
    assert grade_file(SOLUTIONS / "softmax.py").exercise.name == "softmax"


# --- files that cannot be graded --------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("import numpy as np\nclass LayerNorm:\n    def forward(self, x)\n        return x\n",
     "does not compile: SyntaxError at line 3"),
    ("import numpy_that_does_not_exist\n", "raised ModuleNotFoundError"),
    ("x = 1 / 0\n", "raised ZeroDivisionError: division by zero (bad.py line 1"),
    ("import numpy as np\n", "no class with forward and backward"),
])
def test_a_file_that_cannot_be_graded_gets_a_clear_message(tmp_path, capsys, text, message):
    path = tmp_path / "bad.py"
    path.write_text(text)
    with pytest.raises(CannotGrade) as raised:
        grade_file(path)
    assert message in str(raised.value)
    assert main(["practice", "check", str(path)]) == 2
    out = capsys.readouterr().out
    assert message in " ".join(out.split()) and "Traceback" not in out  # wrapped at 80 columns


def test_an_error_raised_by_the_layer_is_reported_with_its_line(tmp_path):
    source = solution_source("rmsnorm").replace("x_hat = x * rrms ", "x_hat = x * rrms[0, 0, 0] ")
    path = tmp_path / "raises.py"
    path.write_text(source)
    report = grade_file(path)
    errors = [c for c in report.checks if c.status == "ERROR"]
    assert errors and all("IndexError" in c.note and "raises.py line" in c.note for c in errors)


# --- the command line -------------------------------------------------------------------------
@pytest.mark.parametrize("class_name, exercise", [
    ("MLPWithBatchNorm", "mlp_with_batchnorm"), ("MyMLPWithBatchNorm", "mlp_with_batchnorm"),
    ("BatchNorm1d", "batchnorm"), ("MyBatchNorm", "batchnorm"),
])
def test_the_exercise_is_the_longest_name_that_fits_the_class(class_name, exercise):
    """MLPWithBatchNorm contains "batchnorm" too: the longer name, the MLP's, wins."""
    assert exercise_for(type(class_name, (), {})).name == exercise


def test_a_reference_built_from_several_layers_names_them():
    """The MLP's reference chains normcore's layers behind the practice contract (w1 is
    Linear's weight transposed); the report says which layers."""
    text = " ".join(format_report(grade_file(SOLUTIONS / "mlp_with_batchnorm.py")).split())
    assert "(reference: normcore's Linear, BatchNorm1d, Tanh, Linear and CrossEntropyLoss)" in text
    assert "(reference: normcore.Softmax)" in " ".join(
        format_report(grade_file(SOLUTIONS / "softmax.py")).split())


def test_cli_list(capsys):
    assert main(["practice", "list", "--mistakes"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in EXERCISES) and all(m.id in out for m in CATALOG)


def test_cli_new_writes_a_skeleton_and_refuses_to_overwrite(tmp_path, capsys):
    assert main(["practice", "new", "groupnorm", "--dir", str(tmp_path)]) == 0
    path = tmp_path / "my_groupnorm.py"
    assert "raise NotImplementedError" in path.read_text()
    path.write_text("# my work\n")
    assert main(["practice", "new", "groupnorm", "--dir", str(tmp_path)]) == 1
    assert path.read_text() == "# my work\n" and "already exists" in capsys.readouterr().out
    assert main(["practice", "new", "groupnorm", "--dir", str(tmp_path), "--force"]) == 0
    assert main(["practice", "check", str(path)]) == 1
    assert "Not implemented yet" in capsys.readouterr().out


def test_cli_solution_prints_the_reference_answer(capsys):
    assert main(["practice", "solution", "rmsnorm"]) == 0
    assert capsys.readouterr().out == (SOLUTIONS / "rmsnorm.py").read_text()


def test_cli_check_exit_status_and_diagnosis(capsys):
    assert main(["practice", "check", str(SOLUTIONS / "batchnorm.py")]) == 0
    assert "All checks pass." in capsys.readouterr().out
    assert main(["practice", "check", str(next(p for p in GENERATED
                                               if p.name == "bn-momentum-flipped@batchnorm.0.py"))]) == 1
    out = capsys.readouterr().out
    assert "[bn-momentum-flipped]" in out and "hint:" in out


def test_solutions_are_standalone():
    """An interview answer: numpy only, nothing from normcore."""
    for path in SOLUTIONS.glob("*.py"):
        imports = [line for line in path.read_text().splitlines() if line.startswith(("import", "from"))]
        assert all(line == "import numpy as np" for line in imports), (path.name, imports)


def test_grader_reference_matches_solution_numbers():
    """The grader's reference is normcore's own layer; the answer gives the same numbers."""
    ns = {}
    exec(solution_source("layernorm"), ns)
    import normcore as nc
    x = np.random.default_rng(1).standard_normal((3, 5))
    assert np.allclose(ns["LayerNorm"](5).forward(x), nc.LayerNorm(5).forward(x), atol=1e-12)


def test_readme_practice_commands_run(tmp_path, monkeypatch, capsys):
    """The README's interview-practice block, command by command, in an empty directory."""
    import re
    import shlex
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme[readme.index("## Interview practice"):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    monkeypatch.chdir(tmp_path)
    statuses = {}
    for line in block.splitlines():
        argv = shlex.split(line.split("#")[0])
        assert argv[:2] == ["normcore", "practice"], line
        statuses[argv[2]] = main(argv[1:])
    assert statuses == {"list": 0, "new": 0, "check": 1, "solution": 0}  # check: the skeleton's TODOs
    assert "Not implemented yet: forward, backward" in capsys.readouterr().out


def test_readme_interview_commands_run(tmp_path, monkeypatch, capsys):
    """The README's block "As interviews are held", command by command, in an empty directory
    with its own history; the interview's file is left as written, so it fails its checks."""
    import re
    import shlex
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme[readme.index("### As interviews are held"):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    statuses = []
    for line in block.splitlines():
        argv = shlex.split(line.split("#")[0])
        assert argv[:2] == ["normcore", "practice"], line
        statuses.append((argv[2], main(argv[1:])))
    assert statuses == [("new", 0), ("new", 0), ("new", 0), ("check", 1), ("interview", 1),
                        ("history", 0)]
    assert (tmp_path / "my_layernorm_torch.py").is_file()
    assert "FORWARD_ONLY = True" in (tmp_path / "my_layernorm.py").read_text()
    out = capsys.readouterr().out
    assert "not asked (forward only)" in out and "Mock interviews" in out
    assert len((tmp_path / "home" / "practice_history.jsonl").read_text().splitlines()) == 1


# --- grading: dtypes, forward before backward, hints, confidence, where to learn ---------------
def _variant_file(tmp_path, name, old, new, stem="answer"):
    source = solution_source(name)
    assert source.count(old) == 1, old
    path = tmp_path / f"{stem}.py"
    path.write_text(source.replace(old, new))
    return path


def _failing(report):
    return [c for c in report.checks if c.status == "FAIL"]


def _wrong(report):
    """The checks that fail or raise: a mistake can be named on both."""
    return [c for c in report.checks if c.status in ("FAIL", "ERROR")]


def test_a_float64_dx_for_a_float32_input_fails(tmp_path):
    path = _variant_file(tmp_path, "layernorm", "return dx.astype(dy.dtype)",
                         "return dx.astype(np.float64)")
    report = grade_file(path)
    failing = _failing(report)
    assert [c.label for c in failing] == ["(4, 6) float32: dx dtype"]
    assert failing[0].note == "float64, expected float32"
    text = format_report(report)
    assert "dx dtype" in text and "cast dx back" in text and "Derive dx" not in text


def test_a_float64_dx_of_the_mlp_for_a_float32_input_fails(tmp_path):
    """An MLP whose backward returns float64 (to be safe): dx must come back in x's dtype."""
    path = _variant_file(tmp_path, "mlp_with_batchnorm", "return dx.astype(x.dtype)",
                         "return dx.astype(np.float64)")
    failing = _failing(grade_file(path))
    assert [c.label for c in failing] == ["(8, 5) -> 6 -> 4 float32: dx dtype"]
    assert failing[0].note == "float64, expected float32"


def test_a_parameter_gradient_in_another_dtype_than_its_parameter_fails(tmp_path):
    path = _variant_file(tmp_path, "rmsnorm", "self.gamma.grad += (dy * x_hat).sum(axis=lead)",
                         "self.gamma.grad = self.gamma.grad.astype(np.float64) + "
                         "(dy * x_hat).sum(axis=lead)")
    failing = _failing(grade_file(path))
    assert {c.label for c in failing} == {"(4, 6) float32: dgamma dtype"}
    assert failing[0].note.startswith("float64 for a float32 parameter")


@pytest.mark.parametrize("name, old, new", [
    ("layernorm", "rstd = 1.0 / np.sqrt(var + self.eps)", "rstd = 2.0 / np.sqrt(var + self.eps)"),
    ("layernorm", "return dx.astype(dy.dtype)", "return (0.5 * dx).astype(dy.dtype)"),
    ("rmsnorm", "eps = np.finfo(x.dtype).eps if self.eps is None else self.eps",
     "eps = 1e-6 if self.eps is None else self.eps"),
    ("rmsnorm", "y = x_hat if self.gamma is None else x_hat * self.gamma.data",
     "y = x_hat if self.gamma is None else x_hat * self.gamma.data ** 2"),
    ("groupnorm", "dx = rstd * (dx_hat_g - mean_dx_hat - x_hat_g * mean_dx_hat_x_hat)",
     "dx = rstd * (dx_hat_g - mean_dx_hat + x_hat_g * mean_dx_hat_x_hat)"),
    ("dropout", "keep = self.rng.random(x.shape) >= self.p",
     "keep = self.rng.random(x.shape) >= self.p / 2"),
    ("log_softmax", "self.logp = z - np.log(np.exp(z).sum(axis=a, keepdims=True))",
     "self.logp = z - np.log(np.exp(z).mean(axis=a, keepdims=True))"),
    ("attention", "scores = q @ k.swapaxes(-1, -2) / D ** 0.5", "scores = q @ k.swapaxes(-1, -2) / D"),
    ("mlp_with_batchnorm", "self.eps = 1e-5", "self.eps = 1e-3"),
    ("transformer_block", "dx = dz + self._ffn_backward(dz)", "dx = dz - self._ffn_backward(dz)"),
    ("dyt", "du = dt * (1.0 - t ** 2)", "du = dt * (1.0 - t)"),
    ("dyt", "dx = self.alpha.data * du", "dx = self.alpha.data ** 2 * du"),
    ("fold_batchnorm", "b_folded = s * (b - running_mean) + beta", "b_folded = s * (b - running_mean) - beta"),
    ("fold_batchnorm", "W_folded = s[:, None] * W", "W_folded = s[:, None] * W * 0.5"),
    ("fold_norm_affine", "b_folded = W @ beta + b", "b_folded = W @ beta - b"),
    ("fold_norm_affine", "W_folded = W @ np.diag(gamma)", "W_folded = W @ np.diag(gamma ** 2)"),
    ("sync_batchnorm", "dx = gamma * rstd * (dy - sum_dy / N - x_hat * sum_dy_xhat / N)",
     "dx = gamma * rstd * (dy - sum_dy / N + x_hat * sum_dy_xhat / N)"),
    ("sync_batchnorm", "self.beta.grad += local[:C]", "self.beta.grad -= local[:C]"),
    ("weight_norm", "dg = (dw * v_hat).sum(axis=1, keepdims=True)",
     "dg = 2 * (dw * v_hat).sum(axis=1, keepdims=True)"),
    ("batch_renorm", "d = np.clip((mean - running_mean) / sigma,", "d = np.clip((mean - running_mean) / sigma / 2,"),
], ids=["ln-rstd-doubled", "ln-dx-halved", "rms-eps-1e-6", "rms-gamma-squared", "gn-dx-sign",
        "dropout-p-halved", "lsm-mean-not-sum", "attn-scores-over-d",
        "mlp-eps-1e-3", "block-branch-sign", "dyt-slope-not-squared", "dyt-dx-alpha-squared",
        "fold-beta-subtracted", "fold-weight-halved", "fold-affine-bias-subtracted",
        "fold-affine-gamma-squared", "sync-dx-sign", "sync-dbeta-sign", "wn-dg-doubled",
        "brn-d-halved"])
def test_uncatalogued_mistakes_get_no_name(tmp_path, name, old, new):
    """Wrong in a way the catalog does not know: it fails, and no mistake is named."""
    report = grade_file(_variant_file(tmp_path, name, old, new))
    assert not report.passed and report.diagnosis_ids == []
    text = format_report(report)
    assert "No catalogued mistake produces your numbers" in text and "learn: " in text
    assert "reproduces" not in text.split("Diagnosis")[0]
    assert {c.confidence for c in _failing(report)} == {""}


def test_backward_failures_follow_a_failing_forward(tmp_path):
    """A forward that is wrong and a backward consistent with it: fix the forward first."""
    line = "x_hat = (x - mean) * rstd" + " " * 39 + "#"
    path = _variant_file(tmp_path, "layernorm", line, line.replace("= (x", "= 2 * (x"))
    report = grade_file(path)
    wrong_forward = {c.probe for c in _failing(report) if not c.backward}
    backward = [c for c in _failing(report) if c.backward and c.probe in wrong_forward]
    assert backward and all(c.follows and not c.diagnoses for c in backward)
    text = format_report(report)
    hints = [line for line in text.splitlines() if "hint:" in line]
    assert "Fix the forward first" in hints[0]
    assert "the forward fails first" in text
    assert "gamma's gradient" not in text and "Derive dx" not in text


def _hints(text):
    return " ".join(text[text.index("No catalogued"):].split())


def test_hints_fit_the_exercise(tmp_path):
    dropout = _variant_file(tmp_path, "dropout", "keep = self.rng.random(x.shape) >= self.p",
                            "keep = self.rng.random(x.shape) >= self.p / 2", "drop")
    text = _hints(format_report(grade_file(dropout)))
    assert "Inverted dropout" in text and "mean-and-variance" not in text
    assert "notebooks/dropout.ipynb" in text

    rms = _variant_file(tmp_path, "rmsnorm", "return dx.astype(dy.dtype)",
                        "return (0.5 * dx).astype(dy.dtype)", "rms")
    text = _hints(format_report(grade_file(rms)))
    assert "RMSNorm's dx" in text and "mean-and-variance" not in text
    assert "normcore explain rmsnorm" in text

    eps = _variant_file(tmp_path, "rmsnorm",
                        "eps = np.finfo(x.dtype).eps if self.eps is None else self.eps",
                        "eps = 1e-6 if self.eps is None else self.eps", "eps")
    text = _hints(format_report(grade_file(eps)))
    assert "eps=None" in text and "machine epsilon" in text

    dyt = _variant_file(tmp_path, "dyt", "du = dt * (1.0 - t ** 2)", "du = dt * (1.0 - t)", "dyt")
    text = _hints(format_report(grade_file(dyt)))
    assert "DyT's backward goes node by node" in text and "mean-and-variance" not in text
    assert "normcore explain dyt, or normcore practice solution dyt" in text

    forward = _variant_file(tmp_path, "batchnorm", "rstd = 1.0 / np.sqrt(var + self.eps)",
                            "rstd = 2.0 / np.sqrt(var + self.eps)", "bn")
    text = _hints(format_report(grade_file(forward)))
    assert "gamma's gradient" not in text and "BatchNorm standardises" in text


@pytest.mark.parametrize("path", BUGS, ids=bug_id)
def test_report_shows_how_sure_and_where_to_learn_within_80_columns(path):
    report = graded(path)
    text = format_report(report)
    assert max(len(line) for line in text.splitlines()) <= 80
    mistake = next(m for m in CATALOG if m.id == expected_id(path))
    assert " ".join(text.split()).count(" ".join(f"learn: {mistake.taught_in}".split())) == 1
    for c in _wrong(report):
        assert c.confidence == "reproduces"
        first = wrap(c.row, 18)[0]  # as the report wraps it: a formula stays whole
        # the row by its name, or the probe's raising checks gathered on one line ("4 checks")
        shown = (first, f"{sum(w.probe == c.probe for w in _wrong(report))} checks")
        assert any(any(s in line for s in shown) and c.confidence in line
                   for line in text.splitlines())


# How sure: "reproduces" when a catalogued mistake's mutant (or a pair of them) gives every number
# of every probe, "" without a diagnosis (the grader names nothing it is not sure of).
def _how_sure(report):
    """{confidence} of the failing (or raising) checks, and the word the Diagnosis section uses."""
    text = format_report(report)
    said = {how for how in ("reproduces", "matches") if f"{how} your numbers" in text}
    return {c.confidence for c in _wrong(report)}, said


@pytest.mark.parametrize("path", GENERATED, ids=bug_id)
def test_a_generated_bug_file_is_reproduced(path):
    """A generated file is the mistake's mutant itself: the mutant gives every number of every
    probe, so every failing check must say "reproduces" (the only level the grader names)."""
    assert _how_sure(graded(path)) == ({"reproduces"}, {"reproduces"})


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=bug_id)
def test_a_bug_file_in_another_style_is_reproduced_too(path):
    """One catalogued mistake written in another style (loops, a staged backward, other names)
    gives the mutant's numbers on every observation, within the tolerances."""
    assert _how_sure(graded(path)) == ({"reproduces"}, {"reproduces"})


def test_a_catalogued_mistake_beside_an_uncatalogued_one_is_not_named(tmp_path):
    """dx without the mean terms (catalogued) and dbeta scaled by 1.5 (not catalogued): the
    mutant gives the failing dx but not dbeta, so it does not reproduce the file and no
    mistake is named (a name is given only when the grader is sure of it)."""
    source = solution_source("layernorm")
    for old, new in [("dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)", "dx = rstd * dx_hat"),
                     ("self.beta.grad += dy.sum(axis=lead)", "self.beta.grad += 1.5 * dy.sum(axis=lead)")]:
        assert source.count(old) == 1
        source = source.replace(old, new)
    path = tmp_path / "two.py"
    path.write_text(source)
    report = grade_file(path)
    dx = [c for c in _failing(report) if c.row == "dx"]
    dbeta = [c for c in _failing(report) if c.row.startswith("dbeta")]
    assert dx and dbeta and report.diagnosis_ids == []
    assert _how_sure(report) == ({""}, set())
    assert "No catalogued mistake produces your numbers" in format_report(report)


def test_every_mistake_says_where_it_is_taught():
    from normcore.derivations import KINDS
    notebooks = Path(__file__).parents[1] / "notebooks"
    for m in CATALOG:
        place = m.taught_in
        if place.startswith("normcore explain "):
            assert place.split()[2] in KINDS, m.id  # a step-through normcore explain has
        elif place.startswith("normcore practice solution "):
            assert place.split()[3] in m.exercises, m.id
        else:
            notebook = place.split(",")[0].split("/")[1]
            assert (notebooks / notebook).exists(), m.id
            source = (notebooks / "src" / notebook.replace(".ipynb", ".py")).read_text()
            sections = re.findall(r"(\d[\d.]*) \(([^)]*)\)", place)
            assert sections, m.id
            for number, title in sections:  # a heading with that number, and that title
                assert re.search(rf"^\s*#+ {re.escape(number)}[. ]", source, re.M), (m.id, number)
                assert title in source.replace("`", ""), (m.id, title)


CLASSIC = ("backward-no-mean-term", "backward-stats-constant", "backward-no-xhat-term",
           "eps-outside-sqrt", "var-unbiased-in-normalization", "bn-eval-backward-batch-formula",
           "bn-stats-per-position")


@pytest.mark.parametrize("mistake", CLASSIC)
def test_classic_backward_mistakes_are_named_in_every_style(mistake):
    """The classic norm mistakes, in at least two styles: the reference answer's (generated)
    and another one written by hand (loops, staged dvar and dmu, channels moved last, weight
    and bias); each gets the same name."""
    generated = [p for p in GENERATED if expected_id(p) == mistake]
    by_hand = [p for p in HAND_WRITTEN if expected_id(p) == mistake]
    assert generated and by_hand, mistake
    for path in generated + by_hand:
        assert grade_file(path).diagnosis_ids == [mistake], path.name


def test_mutant_runs_are_shared_between_files_without_changing_a_verdict():
    """The mutants' and the reference's runs are computed once per exercise and process; a
    second grading of a file, after other files, gives the same checks and diagnoses."""
    from normcore.practice.mutants import Mutants
    exercise = EXERCISES["layernorm"]
    assert Mutants.of(exercise) is Mutants.of(exercise)
    path = next(p for p in GENERATED if p.name.startswith("backward-no-mean-term@layernorm"))
    first = [(c.label, c.status, c.diagnoses, c.confidence) for c in grade_file(path).checks]
    for other in HAND_WRITTEN:
        grade_file(other)
    again = [(c.label, c.status, c.diagnoses, c.confidence) for c in grade_file(path).checks]
    assert first == again
def test_attention_reference_is_normcore_layer_with_transposed_weights():
    """The attention exercise's reference is normcore's MultiheadSelfAttention (bias=False):
    wq is q.weight transposed, and the weight gradients are the layer's, transposed."""
    from normcore import nn
    from normcore.practice.references import MultiheadSelfAttention
    rng = np.random.default_rng(3)
    ref = MultiheadSelfAttention(6, 3, causal=True)
    layer = nn.MultiheadSelfAttention(6, 3, causal=True, bias=False)
    for name in "qkvo":
        w = rng.standard_normal((6, 6))
        getattr(ref, "w" + name).data = w
        getattr(layer, name).weight.data = w.T.copy()
    x, dy = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 4, 6))
    np.testing.assert_allclose(ref.forward(x), layer.forward(x), rtol=1e-12)
    np.testing.assert_allclose(ref.backward(dy), layer.backward(dy), rtol=1e-12)
    for name in "qkvo":
        np.testing.assert_allclose(getattr(ref, "w" + name).grad,
                                   getattr(layer, name).weight.grad.T, rtol=1e-12)


# --- the transformer_block exercise: every position ------------------------------------------
def test_block_is_graded_in_every_position(tmp_path):
    """An answer that ignores ``position`` (always Pre-Norm) passes every Pre-Norm check and
    fails the Post-Norm and the reordered ones. It is not the positions swapped (that mutant
    fails Pre-Norm too) nor the reordered norm placed before the branch (that mutant passes
    Post-Norm), and ignoring the position is not catalogued: no mistake is named."""
    path = _variant_file(tmp_path, "transformer_block", 'if self.position == "pre":\n            y',
                         'if True:\n            y')
    source = path.read_text()
    path.write_text(source.replace('if self.position == "pre":\n            dx', 'if True:\n            dx'))
    report = grade_file(path)
    failing = _failing(report)
    assert failing and all(c.probe.startswith(("Post-Norm", "reordered norm")) for c in failing)
    assert {c.probe.split()[0] for c in failing} == {"Post-Norm", "reordered"}
    assert all(c.status == "pass" for c in report.checks if c.probe.startswith("Pre-Norm"))
    assert report.diagnosis_ids == []


def test_block_float64_dx_for_a_float32_input_fails_in_every_position(tmp_path):
    path = _variant_file(tmp_path, "transformer_block", "return dx.astype(dy.dtype)",
                         "return dx.astype(np.float64)")
    failing = _failing(grade_file(path))
    assert [c.label for c in failing] == ["Pre-Norm (2, 3, 4) float32: dx dtype",
                                          "Post-Norm (2, 3, 4) float32: dx dtype",
                                          "reordered norm (2, 3, 4) float32: dx dtype"]


REFUSED = 'if position not in ("pre", "post", "reordered"):'


def test_a_block_that_refuses_the_reordered_position_is_graded_on_the_others(tmp_path):
    """Published blocks offer Pre-Norm and Post-Norm alone and raise for any other position:
    the reordered checks are then not written ("n/a"), neither a failure nor a name, and a
    mistake in the positions the block offers keeps its name."""
    path = _variant_file(tmp_path, "transformer_block", REFUSED, 'if position not in ("pre", "post"):')
    report = grade_file(path)
    reordered = [c for c in report.checks if c.probe.startswith("reordered norm")]
    assert report.passed and report.diagnosis_ids == []
    assert reordered and {(c.status, c.note) for c in reordered} == {
        ("n/a", "not written: the layer refuses position='reordered'")}
    source = path.read_text().replace("dx = dz + self._ffn_backward(dz)", "dx = self._ffn_backward(dz)")
    path.write_text(source)
    assert grade_file(path).diagnosis_ids == ["block-residual-grad-dropped"]


def test_a_block_that_raises_in_the_reordered_position_is_refused_only_by_name(tmp_path):
    """A forward that raises an error naming the position (a KeyError of a dict of positions)
    refuses it; one that takes the position and breaks in it fails, whether its error says
    nothing of the position or is of another kind (a method it never wrote)."""
    reordered = "y = x + self._ln(self._ffn(x))"
    path = _variant_file(tmp_path, "transformer_block", reordered,
                         "raise KeyError(self.position)")
    assert grade_file(path).passed
    for broken in ("y = x + self._ln(self._ffn(x))[..., :1]\n            y = y @ np.ones((2, 2))",
                   "y = x + self._ln(self.reordered(x))"):
        report = grade_file(_variant_file(tmp_path, "transformer_block", reordered, broken))
        assert not report.passed
        assert all(c.status == "ERROR" for c in report.checks if c.probe.startswith("reordered norm"))


def test_block_mistakes_are_named_in_every_style():
    """The same residual-block mistake written compact, with layer functions and caches, or
    with loops over the tokens, gets the same name."""
    styles = {}
    for path in BUGS:
        styles.setdefault(expected_id(path), []).append(path)
    for mistake in ("block-residual-grad-dropped", "block-norm-backward-skipped",
                    "block-relu-mask-missing"):
        assert len(styles[mistake]) >= 2, mistake
        for path in styles[mistake]:
            assert grade_file(path).diagnosis_ids == [mistake], path.name


def test_block_weight_gradient_failure_gets_the_weight_hint_not_the_accumulation_one(tmp_path):
    """dw2 from the pre-activation: wrong after one backward call and so after two; the hint
    is about the weight's gradient, not about accumulating."""
    path = _variant_file(tmp_path, "transformer_block", "self.w2.grad += rows(r).T @ rows(dg)",
                         "self.w2.grad += rows(a).T @ rows(dg)")
    report = grade_file(path)
    assert {c.row.partition(" ")[0] for c in _failing(report)} == {"dw2"}
    text = _hints(format_report(report))
    assert "A weight's gradient is its input" in text and "add into .grad (+=)" not in text


# --- the catalog's anchors: tagged lines of the reference answers ------------------------------
def _anchors():
    """(mistake id, exercise, anchor) of every replacement in the catalog."""
    return [(m.id, name, old) for m in CATALOG for name, variants in m.variants.items()
            for variant in variants for old, _ in variant]


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_every_anchor_is_on_exactly_one_tagged_line_of_its_answer(name):
    """A catalog variant finds its piece of code by the tag at the end of a line of the
    reference answer (``# (N, 1) [rstd]``): the tag must end exactly one line and the piece
    be exactly once on it. An answer edited without its tag, or with a tag copied onto a
    second line, fails here by name instead of leaving a mistake without its mutant."""
    lines = tagged_lines(solution_source(name))
    source_lines = solution_source(name).splitlines()
    used = set()
    for mistake_id, exercise, anchor in _anchors():
        if exercise != name:
            continue
        assert isinstance(anchor, Anchor), (mistake_id, str(anchor))
        where = lines.get(anchor.tag, [])
        assert len(where) == 1, (f"{mistake_id}: the tag [{anchor.tag}] ends {len(where)} lines "
                                 f"of solutions/{name}.py, not one")
        assert source_lines[where[0]].count(anchor) == 1, (mistake_id, anchor.tag, str(anchor))
        used.add(anchor.tag)
    assert set(lines) == used, f"tags no mistake uses in solutions/{name}.py: {set(lines) - used}"


def test_a_missing_or_ambiguous_anchor_raises_a_named_error():
    source = solution_source("layernorm")
    anchor = Anchor("rstd", "np.sqrt(var + self.eps)")
    variant = ((anchor, "(np.sqrt(var) + self.eps)"),)
    assert "(np.sqrt(var) + self.eps)" in apply_variant(source, variant)
    # editing the rest of the answer does not move the anchor
    edited = source.replace("import numpy as np", "import numpy as np\n\nEPS_NOTE = 1e-5  # eps")
    assert "(np.sqrt(var) + self.eps)" in apply_variant(edited, variant)
    untagged = re.sub(r" \[rstd\]$", "", source, flags=re.M)
    with pytest.raises(VariantDoesNotApply, match=r"\[rstd\] ends 0 lines"):
        apply_variant(untagged, variant)
    line = next(line for line in source.splitlines() if line.endswith("[rstd]"))
    with pytest.raises(VariantDoesNotApply, match=r"\[rstd\] ends 2 lines"):
        apply_variant(source.replace(line, line + "\n" + line), variant)
    with pytest.raises(VariantDoesNotApply, match="instead of once"):
        apply_variant(source.replace("np.sqrt(var + self.eps)", "np.sqrt(var+self.eps)"), variant)
    with pytest.raises(VariantDoesNotApply, match="has no anchor"):
        apply_variant(source, (("np.sqrt(var + self.eps)", "np.sqrt(var)"),))


# --- the dyt exercise: alpha is one scalar ----------------------------------------------------
def test_dyt_probes_show_dalpha_left_an_array_whichever_axes_it_kept():
    """dalpha summed over the batch only (alpha per channel) is right on one channel, summed
    over the last axis only is right on one sample; every other probe shows either, and each
    is named."""
    passing = {}
    for k in (0, 1):
        path = next(p for p in GENERATED if p.name == f"dyt-dalpha-not-summed@dyt.{k}.py")
        report = grade_file(path)
        failing = {c.probe for c in _failing(report)}
        passing[k] = {c.probe for c in report.checks} - failing
        assert report.diagnosis_ids == ["dyt-dalpha-not-summed"]
        assert {c.row.rpartition(": ")[2].partition(" ")[0] for c in _failing(report)} == {"dalpha"}
    assert passing[0] == {"one channel (5, 1)", "default alpha_init, then alpha assigned (5, 1)"}
    assert passing[1] == {"one sample (1, 6)"}


def test_dyt_reference_is_normcore_layer_and_the_answer_gives_its_numbers():
    import normcore as nc
    assert EXERCISES["dyt"].reference is nc.DyT
    ns = {}
    exec(solution_source("dyt"), ns)
    rng = np.random.default_rng(5)
    ours, ref = ns["DyT"]((4, 5), alpha_init=1.7), nc.DyT((4, 5), alpha_init=1.7)
    for name in ("gamma", "beta"):
        value = rng.standard_normal((4, 5))
        getattr(ours, name).data, getattr(ref, name).data = value.copy(), value.copy()
    x, dy = rng.standard_normal((2, 3, 4, 5)) * 2, rng.standard_normal((2, 3, 4, 5))
    np.testing.assert_allclose(ours.forward(x), ref.forward(x), rtol=1e-12)
    np.testing.assert_allclose(ours.backward(dy), ref.backward(dy), rtol=1e-12, atol=1e-15)
    for name in ("alpha", "gamma", "beta"):
        np.testing.assert_allclose(getattr(ours, name).grad, getattr(ref, name).grad, rtol=1e-12)
    assert ours.alpha.grad.shape == ref.alpha.grad.shape == (1,)


# --- the qk_norm exercise: RMSNorm on each head's q and k, before the scale --------------------
def test_qk_norm_reference_is_normcore_attention_with_rmsnorm_qk_norm_and_the_answer_gives_its_numbers():
    import normcore as nc
    ref = EXERCISES["qk_norm"].reference(8, 2, causal=True)
    assert isinstance(ref.layer, nc.MultiheadSelfAttention) and ref.layer.qk_norm == "rmsnorm"
    ns = {}
    exec(solution_source("qk_norm"), ns)
    ours = ns["QKNormSelfAttention"](8, 2, causal=True)
    rng = np.random.default_rng(7)
    names = ("wq", "wk", "wv", "wo", "gamma_q", "gamma_k")
    for name in names:
        value = rng.standard_normal((4,) if name.startswith("gamma") else (8, 8))
        getattr(ours, name).data, getattr(ref, name).data = value.copy(), value.copy()
    x, dy = rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 8))
    np.testing.assert_allclose(ours.forward(x), ref.forward(x), rtol=1e-10)
    np.testing.assert_allclose(ours.backward(dy), ref.backward(dy), rtol=1e-9, atol=1e-12)
    for name in names:
        np.testing.assert_allclose(getattr(ours, name).grad, getattr(ref, name).grad, rtol=1e-9, atol=1e-12)
    assert ours.gamma_q.grad.shape == ref.gamma_q.grad.shape == (4,)


def test_qk_norm_after_the_scale_is_told_from_no_scale_only_where_eps_matters():
    """RMSNorm is scale invariant up to eps, so normalising q / sqrt(D) gives the numbers of
    no scale at all except where q and k are near 0: the probe that makes them so is the one
    that tells the two mistakes apart, and each is named alone on the whole exercise. Without
    it both mutants give every number of the file: the grader cannot tell which mistake was
    made and names neither."""
    exercise = EXERCISES["qk_norm"]
    tiny = [p for p in exercise.probes if "eps matters" in p.label]
    assert len(tiny) == 1
    without = dataclasses.replace(exercise, probes=tuple(p for p in exercise.probes if p not in tiny))
    source = solution_source("qk_norm")
    errors = []
    for mistake in ("qk-norm-after-scale", "attn-no-scale"):
        variant = BY_ID[mistake].variants["qk_norm"][0]
        cls = mutant_class(exercise, source, variant, "sep")
        assert grade(cls, exercise).diagnosis_ids == [mistake]
        report = grade(cls, without)
        assert not report.passed and report.diagnosis_ids == []
        errors.append([(c.label, c.status) for c in report.checks])
    assert errors[0] == errors[1]  # the two mistakes fail the same checks


def test_an_attention_mistake_not_catalogued_for_qk_norm_gets_no_name(tmp_path):
    """dv = attn @ dout (no transpose) is catalogued for the attention exercise, not for
    qk_norm: the grader must say that no catalogued mistake produces the numbers."""
    source = solution_source("qk_norm")
    old = "dv = attn.swapaxes(-1, -2) @ dout"
    assert source.count(old) == 1
    path = tmp_path / "qk_odd.py"
    path.write_text(source.replace(old, "dv = attn @ dout"))
    report = grade_file(path)
    assert not report.passed and report.diagnosis_ids == []
    assert "No catalogued mistake produces your numbers" in format_report(report)


def test_the_qk_norm_skeleton_lists_and_checks_as_not_implemented(tmp_path, capsys):
    assert main(["practice", "list"]) == 0
    assert "qk_norm" in capsys.readouterr().out
    assert main(["practice", "new", "qk_norm", "--dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["practice", "check", str(tmp_path / "my_qk_norm.py")]) == 1
    assert "Not implemented yet" in capsys.readouterr().out
    assert main(["practice", "check", str(SOLUTIONS / "qk_norm.py")]) == 0


# --- the fold_batchnorm exercise: a function of plain arrays -----------------------------------
def test_fold_reference_is_normcore_fold_and_equals_linear_then_batchnorm_in_evaluation():
    """The grader's reference folds with nc.fold_batchnorm; its (W', b') give what the Linear
    followed by the BatchNorm1d in evaluation gives, and the reference answer gives the same."""
    import normcore as nc
    rng = np.random.default_rng(11)
    W, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    stats = (rng.standard_normal(4), rng.uniform(0.5, 2.0, 4), rng.standard_normal(4), rng.standard_normal(4))
    W2, b2 = EXERCISES["fold_batchnorm"].reference(W, b, *stats, 1e-3)
    linear, bn = nc.Linear(3, 4), nc.BatchNorm1d(4, eps=1e-3)
    linear.weight.data, linear.bias.data = W.copy(), b.copy()
    bn.running_mean, bn.running_var = stats[0].copy(), stats[1].copy()
    bn.weight.data, bn.bias.data = stats[2].copy(), stats[3].copy()
    x = rng.standard_normal((5, 3))
    np.testing.assert_allclose(x @ W2.T + b2, bn.eval()(linear(x)), rtol=1e-12, atol=1e-12)
    ns = {}
    exec(solution_source("fold_batchnorm"), ns)
    for ours, ref in zip(ns["fold_batchnorm"](W, b, *stats, 1e-3), (W2, b2)):
        np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_a_fold_file_is_found_by_its_function_and_graded(tmp_path):
    """A file that defines the function fold_batchnorm (no class) is graded as the exercise."""
    path = tmp_path / "answer.py"
    path.write_text(solution_source("fold_batchnorm") + "\n\ndef helper():\n    return 1\n")
    report = grade_file(path)
    assert report.exercise.name == "fold_batchnorm" and report.passed
    assert "All checks pass." in format_report(report)


def test_a_fold_that_returns_one_array_gets_a_contract_error(tmp_path):
    path = _variant_file(tmp_path, "fold_batchnorm", "return W_folded, b_folded", "return W_folded")
    report = grade_file(path)
    assert {c.status for c in report.checks} == {"ERROR"}
    assert "expected fold_batchnorm to return (W_folded, b_folded)" in report.checks[0].note


def test_a_fold_that_changes_its_inputs_in_place_fails(tmp_path):
    path = _variant_file(tmp_path, "fold_batchnorm", "W_folded = s[:, None] * W", "W *= s[:, None]; W_folded = W")
    failing = _failing(grade_file(path))
    assert failing and {c.row for c in failing} == {"inputs left unchanged"}


# --- the fold_norm_affine exercise: a function of plain arrays, like fold_batchnorm ------------
def test_fold_affine_reference_is_normcore_fold_and_equals_norm_then_linear():
    """The grader's reference folds with nc.fold_norm_affine; its (W', b') applied to the
    affine-free LayerNorm's output give what the LayerNorm followed by the Linear gives, and the
    reference answer gives the same."""
    import normcore as nc
    rng = np.random.default_rng(12)
    gamma, beta = rng.standard_normal(3), rng.standard_normal(3)
    W, b = rng.standard_normal((4, 3)), rng.standard_normal(4)
    W2, b2 = EXERCISES["fold_norm_affine"].reference(gamma, beta, W, b)
    ln, linear = nc.LayerNorm(3), nc.Linear(3, 4)
    ln.weight.data, ln.bias.data = gamma.copy(), beta.copy()
    linear.weight.data, linear.bias.data = W.copy(), b.copy()
    x = rng.standard_normal((5, 3))
    x_hat = nc.LayerNorm(3, elementwise_affine=False)(x)
    np.testing.assert_allclose(x_hat @ W2.T + b2, linear(ln(x)), rtol=1e-12, atol=1e-12)
    ns = {}
    exec(solution_source("fold_norm_affine"), ns)
    for ours, ref in zip(ns["fold_norm_affine"](gamma, beta, W, b), (W2, b2)):
        np.testing.assert_allclose(ours, ref, rtol=1e-12)


def test_a_fold_affine_that_returns_one_array_gets_a_contract_error_with_its_name(tmp_path):
    path = _variant_file(tmp_path, "fold_norm_affine", "return W_folded, b_folded", "return W_folded")
    report = grade_file(path)
    assert {c.status for c in report.checks} == {"ERROR"}
    assert "expected fold_norm_affine to return (W_folded, b_folded)" in report.checks[0].note


def test_a_fold_affine_that_changes_its_inputs_in_place_fails(tmp_path):
    path = _variant_file(tmp_path, "fold_norm_affine", "b_folded = W @ beta + b", "b += W @ beta; b_folded = b")
    failing = _failing(grade_file(path))
    assert failing and {c.row for c in failing} == {"inputs left unchanged"}


# --- the sync_batchnorm exercise: K workers in threads, graded against BatchNorm1d ------------
def test_normcore_sync_batchnorm_passes_the_sync_exercise():
    """normcore.distributed.SyncBatchNorm, graded as a candidate's answer against BatchNorm1d on
    the concatenated batch, passes every check (its weight and bias are gamma and beta)."""
    from normcore.distributed import SyncBatchNorm
    report = grade(SyncBatchNorm, EXERCISES["sync_batchnorm"])
    assert report.passed, [(c.label, c.note) for c in report.checks if c.status != "pass"]


def test_sync_one_round_variance_shows_only_at_a_large_mean_and_never_on_a_two_round_answer():
    """The one-round E[x**2] - mean**2 fails only the probe whose mean is 1e5 (about 60 times its
    tolerance there); the correct answers, two rounds or Chan's one-round merge, stay more than
    1000 times below the tolerance on that probe, so they cannot be taken for it."""
    exercise = EXERCISES["sync_batchnorm"]
    variant = BY_ID["sync-bn-one-round-variance"].variants["sync_batchnorm"][0]
    report = grade(mutant_class(exercise, solution_source("sync_batchnorm"), variant, "t"), exercise)
    assert {c.probe for c in _failing(report)} == {"K=2, shards 3 + 5, mean ~ 1e5"}
    assert max(c.error for c in _failing(report)) > 10 * 1e-8
    for path in [SOLUTIONS / "sync_batchnorm.py", *sorted((HERE / "practice_alt").glob("sync_batchnorm_*.py"))]:
        checks = [c for c in grade_file(path).checks if "mean ~ 1e5" in c.probe]
        assert checks and max(c.error for c in checks) < 1e-11, path.name


def test_sync_mean_of_means_and_variances_averaged_pass_where_they_should():
    """The mean averaged over the workers is right with equal shards; the workers' variances
    averaged are wrong everywhere the workers' means differ (every probe)."""
    exercise = EXERCISES["sync_batchnorm"]
    source = solution_source("sync_batchnorm")
    means = grade(mutant_class(exercise, source, BY_ID["sync-bn-mean-of-means"].variants["sync_batchnorm"][0],
                               "m"), exercise)
    passing = {c.probe for c in means.checks} - {c.probe for c in _failing(means)}
    assert passing == {"K=2, shards 4 + 4", "K=4, shards of 2"}
    spread = grade(mutant_class(exercise, source, BY_ID["sync-bn-variances-averaged"].variants["sync_batchnorm"][0],
                                "v"), exercise)
    assert {c.probe for c in _failing(spread)} >= {p.label for p in exercise.probes[:6]}


def test_a_mean_of_means_with_a_staged_backward_is_never_given_another_name():
    """The workers' means averaged, written into the staged answer: its backward is the staged
    gradient around the wrong mean, which the reference-style mutant does not reproduce. The
    mutant gives the forward's numbers but not dx, so the grader is not sure of the mistake and
    names none (never another one); dx follows from the failing forward."""
    answer = (HERE / "practice_alt" / "sync_batchnorm_staged.py").read_text()
    for old, new in [("x.sum(axis=0)))", "x.sum(axis=0) / max(len(x), 1)))"),
                     ("first[1:] / first[0]", "first[1:] / self.group.world_size")]:
        assert answer.count(old) == 1
        answer = answer.replace(old, new)
    path = Path(tempfile.mkdtemp(prefix="normcore-sync-")) / "staged_mean_of_means.py"
    path.write_text(answer)
    report = grade_file(path)
    assert not report.passed and report.diagnosis_ids == []
    assert any(c.follows and c.backward for c in _failing(report))
