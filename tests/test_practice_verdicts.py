"""Verdicts beside the diagnosis (``normcore/practice/verdicts.py``): answers that compute in
float32 inside pass with a note, findings (a module's names, dtypes, the caller's arrays)
are reported apart and do not hide what the numbers show, and published variants are named
as such, never counted as mistakes.

tests/practice_verdicts/ holds ports of published code into the skeletons: five that compute
in float32 inside (LLaMA's and Qwen3's RMSNorm, Hugging Face's T5 norm, Qwen3's softmax,
Liger-Kernel's DyT, ncnn's BatchNorm fold), answers off by more than float32's rounding, and
timm's QK-LayerNorm with its zero bias parameters.
"""

import csv
import io
import json
from pathlib import Path

import pytest

from normcore.cli import main
from normcore.practice import BY_ID, EXERCISES, format_report, grade_file
from normcore.practice.classroom import FIELDS, format_table, grade_many, to_csv, to_json
from normcore.practice.mutants import solution_source
from normcore.practice.verdicts import is_finding

HERE = Path(__file__).parent
PORTS = HERE / "practice_verdicts"

FLOAT32_INSIDE = [  # (file, track): correct answers that compute in float32 inside
    ("rms_llama_float32.py", "numpy"), ("torch_rms_llama_float32.py", "torch"),
    ("torch_rms_t5_float32.py", "torch"), ("torch_rms_qwen3_float32.py", "torch"),
    ("torch_softmax_qwen3_float32.py", "torch"), ("dyt_liger_float32.py", "numpy"),
    ("fold_ncnn_float32.py", "numpy"),
]
OFF_BY_MORE = [  # wrong by more than float32's rounding, or at float32's own tolerance
    ("torch_rms_llama_half_inside.py", "torch"), ("rms_fast_rsqrt_float32.py", "numpy"),
    ("softmax_float16_inside.py", "numpy"), ("rms_float16_for_float32_input.py", "numpy"),
]


def _grade(name, track):
    if track == "torch":
        pytest.importorskip("torch")
    return grade_file(PORTS / name)


def _variant_file(tmp_path, name, old, new, stem="answer"):
    source = solution_source(name)
    assert source.count(old) == 1, old
    path = tmp_path / f"{stem}.py"
    path.write_text(source.replace(old, new))
    return path


# --- float32 inside -----------------------------------------------------------------------------
@pytest.mark.parametrize("name, track", FLOAT32_INSIDE, ids=[n for n, _ in FLOAT32_INSIDE])
def test_a_published_answer_computing_in_float32_passes_with_its_note(name, track):
    report = _grade(name, track)
    assert report.passed, [(c.label, c.error) for c in report.checks if c.status != "pass"]
    assert report.diagnosis_ids == [] and report.findings == []
    assert 1e-9 < report.float32_inside < 1e-3  # float32's rounding, measured on float64 input
    excused = [c for c in report.checks if c.note == "float32 rounding"]
    assert excused and all(not c.probe.startswith(("float16", "(4, 6) float32")) for c in excused)
    text = format_report(report)
    line = next(line for line in text.splitlines() if "float32 inside" in line)
    assert f"{report.float32_inside:.0e}" in line
    assert "computes in float32 inside: on float64 input it is off by up to" in " ".join(text.split())
    assert "All checks pass." in text


@pytest.mark.parametrize("name, track", OFF_BY_MORE, ids=[n for n, _ in OFF_BY_MORE])
def test_an_answer_off_by_more_than_float32_rounding_fails_unnamed(name, track):
    report = _grade(name, track)
    assert not report.passed and report.float32_inside is None and report.diagnosis_ids == []
    assert "float32 inside" not in format_report(report)


def test_a_correct_float64_answer_gets_no_float32_note(tmp_path):
    path = tmp_path / "rms.py"
    path.write_text(solution_source("rmsnorm"))
    report = grade_file(path)
    assert report.passed and report.float32_inside is None
    assert "float32 inside" not in format_report(report)


def test_a_mistake_within_float32_rounding_on_ordinary_inputs_is_named_not_excused(tmp_path):
    """eps outside the root changes LayerNorm's ordinary outputs by ~5e-6, within float32's
    tolerance, and its small-variance ones a lot: its mutant reproduces the answer at
    float64's tolerance, so it is named, and no check is excused as rounding."""
    path = _variant_file(tmp_path, "layernorm", "rstd = 1.0 / np.sqrt(var + self.eps)",
                         "rstd = 1.0 / (np.sqrt(var) + self.eps)")
    report = grade_file(path)
    assert report.mistake_ids == report.diagnosis_ids == ["eps-outside-sqrt"]
    assert report.variants == [] and report.float32_inside is None and not report.passed
    small = [c for c in report.checks if c.status == "FAIL" and c.error < 1e-5]
    assert small and all(c.diagnoses == ["eps-outside-sqrt"] for c in small)
    assert not any(c.note == "float32 rounding" for c in report.checks)


def test_the_float32_tolerance_follows_the_probe_input_magnitude():
    """A float64 observation carries the tolerance a float32 input of its magnitude would get
    (exercises._tol): 1e-5 for ordinary inputs, 100 times more for logits around 1000."""
    from normcore.practice.mutants import Mutants
    softmax = EXERCISES["softmax"]
    mutants = Mutants.of(softmax)
    rows = {p.label: mutants.reference(p).rows["forward"] for p in softmax.probes}
    assert rows["(4, 6), axis=-1"].tol == 1e-8 and rows["(4, 6), axis=-1"].tol32 == 1e-5
    assert rows["logits around 1000 (3, 5)"].tol32 == pytest.approx(1e-3, rel=0.05)
    float32 = rows["(4, 6) float32"]
    assert float32.tol == float32.tol32 == 1e-5  # a float32 probe keeps its own tolerance


# --- published variants -------------------------------------------------------------------------
@pytest.mark.parametrize("exercise, old, new, variant", [
    ("rmsnorm", "rrms = 1.0 / np.sqrt(ms + eps)", "rrms = 1.0 / (np.sqrt(ms) + eps)", "eps-outside-sqrt"),
    ("qk_norm", "self.norm_axes = (-1,)", "self.norm_axes = (1, -1)", "qk-norm-over-d-model"),
])
def test_a_published_variant_is_named_as_such_and_not_as_a_mistake(tmp_path, exercise, old, new,
                                                                   variant):
    report = grade_file(_variant_file(tmp_path, exercise, old, new))
    assert not report.passed  # not what was asked
    assert report.variants == report.diagnosis_ids == [variant] and report.mistake_ids == []
    published = BY_ID[variant].variant_in(exercise)
    text = " ".join(format_report(report).split())
    assert f"[{variant}] a published variant: {published.name} ({published.source}); the " \
           f"exercise asks {published.asks}" in text
    assert "Not what was asked" in text and "Diagnosis (reproduces" not in text
    if variant == "qk-norm-over-d-model":  # named as OLMo 2's design, with what it changes
        assert "OLMo 2" in text and "trade scale" in text and "logit bound loosens H times" in text


def test_eps_outside_the_root_stays_a_mistake_where_nothing_publishes_it(tmp_path):
    """The RMSNorm authors' eps is a published variant of RMSNorm and QK-norm only."""
    eps = BY_ID["eps-outside-sqrt"]
    assert eps.variant_in("rmsnorm") and eps.variant_in("torch/qk_norm")
    assert not any(eps.variant_in(e) for e in ("batchnorm", "layernorm", "groupnorm",
                                               "fold_batchnorm", "transformer_block"))
    assert BY_ID["bn-momentum-flipped"].variant_in("batchnorm")


def test_every_published_variant_names_its_source_and_what_the_exercise_asks():
    for mistake in BY_ID.values():
        for exercise, variant in mistake.published.items():
            assert exercise in mistake.variants or f"torch/{exercise}" in mistake.variants
            assert variant.name and variant.asks
            assert any(str(year) in variant.source for year in range(2015, 2026)), mistake.id
            assert ".py" in variant.source, mistake.id  # the file it was checked in


def test_keras_momentum_is_recorded_as_a_variant_in_the_classroom(tmp_path):
    path = PORTS.parent / "practice_real" / "bn_keras_decay.py"
    [row] = grade_many([str(path)])
    assert row.mistakes == [] and row.variants == ["bn-momentum-flipped"] and not row.passed
    [record] = json.loads(to_json([row]))
    assert tuple(record) == FIELDS and record["variants"] == ["bn-momentum-flipped"]
    [line] = list(csv.DictReader(io.StringIO(to_csv([row]))))
    assert line["variants"] == "bn-momentum-flipped" and line["mistakes"] == ""
    assert "bn-momentum-flipped (published variant)" in " ".join(format_table([row]).split())


def test_practice_list_mistakes_lists_the_published_variants_apart(capsys):
    assert main(["practice", "list", "--mistakes"]) == 0
    out = capsys.readouterr().out
    mistakes, variants = out.split("Published variants")
    assert "bzhangGo/rmsnorm" in variants and "modeling_olmo2.py" in variants
    assert "timm/layers/attention.py" in variants and "batch_normalization.py" in variants
    assert "qk-norm-mean-subtracted" not in mistakes  # a variant wherever it applies
    assert "eps-outside-sqrt" in mistakes  # a mistake in LayerNorm, BatchNorm, ...
    assert max(len(line) for line in out.splitlines()) <= 80


# --- findings -----------------------------------------------------------------------------------
def test_timm_qk_layernorm_is_named_beside_its_extra_bias_parameters():
    report = _grade("torch_qk_timm_layernorm.py", "torch")
    assert report.variants == ["qk-norm-mean-subtracted"] and report.mistake_ids == []
    rows = {f.label.rpartition(": ")[2]: f for f in report.findings}
    assert set(rows) == {"parameters", "state_dict keys"}
    assert rows["parameters"].yours == "extra: beta_k (2,), beta_q (2,)"
    assert "beta" not in rows["parameters"].expected
    text = format_report(report)
    assert "Findings" in text and "extra: beta_k" in text and "a finding (below)" in text
    assert "No catalogued mistake" not in text


def test_a_mistake_about_a_finding_row_is_still_named_from_it(tmp_path):
    """A tensor not registered as a Parameter changes the parameters row itself."""
    pytest.importorskip("torch")
    source = solution_source("torch/rmsnorm")
    old = "nn.Parameter(torch.ones(self.normalized_shape))"
    assert source.count(old) == 1
    path = tmp_path / "rms.py"
    path.write_text(source.replace(old, "torch.ones(self.normalized_shape)"))
    report = grade_file(path)
    assert report.diagnosis_ids == ["torch-not-registered"] and report.findings == []


def test_a_dtype_finding_says_what_was_expected_beside_a_named_mistake(tmp_path):
    source = solution_source("layernorm")
    for old, new in (("return dx.astype(dy.dtype)", "return dx.astype(np.float64)"),
                     ("rstd = 1.0 / np.sqrt(var + self.eps)", "rstd = 1.0 / (np.sqrt(var) + self.eps)")):
        assert source.count(old) == 1
        source = source.replace(old, new)
    path = tmp_path / "ln.py"
    path.write_text(source)
    report = grade_file(path)
    assert report.diagnosis_ids == ["eps-outside-sqrt"]
    assert [(f.label, f.yours, f.expected) for f in report.findings] == [
        ("(4, 6) float32: dx dtype", "float64", "float32")]
    text = format_report(report)
    assert "(4, 6) float32: dx dtype: float64 (expected: float32)" in text
    assert "cast dx back" in text  # the dtype's hint still comes with it


def test_findings_are_the_rows_about_the_answer_not_its_numbers():
    assert all(is_finding(r) for r in ("parameters", "buffers", "state_dict keys", "output dtype",
                                       "eval: dx dtype", "logits unchanged by forward",
                                       "inputs left unchanged", "input unchanged"))
    assert not any(is_finding(r) for r in ("forward", "dx", "running_var after 1 step",
                                           "buffers detached", "W' (folded weight)"))


def test_a_fold_that_changes_its_inputs_in_place_gets_its_mistake_named_beside_it(tmp_path):
    """W scaled in place (the caller's array changed) and beta forgotten: the in-place change
    is a finding on every probe, and the numbers still name fold-beta-missing."""
    source = solution_source("fold_batchnorm")
    for old, new in (("W_folded = s[:, None] * W ", "W *= s[:, None]; W_folded = W "),
                     ("b_folded = s * (b - running_mean) + beta", "b_folded = s * (b - running_mean)")):
        assert source.count(old) == 1
        source = source.replace(old, new)
    path = tmp_path / "fold.py"
    path.write_text(source)
    report = grade_file(path)
    assert report.mistake_ids == ["fold-beta-missing"]
    labels = {f.label.partition(": ")[0] for f in report.findings}
    assert labels == {p.label for p in EXERCISES["fold_batchnorm"].probes}
    assert all(f.label.endswith("inputs left unchanged") and (f.yours, f.expected) == ("no", "yes")
               for f in report.findings)
    assert "inputs left unchanged: no (expected: yes)" in format_report(report)
