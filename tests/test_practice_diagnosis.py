"""The practice grader on answers written the way people publish them: right, or it says it
does not know.

Each test writes a small answer in a published style (functions wrapped in a class,
cs231n-style cache tuples, loops, a Parameter helper class) with a mistake the grader must
name, or must not take for another one:

- a mistake is named only when its mutant gives every number of every probe of the file: a
  probe on which two mistakes coincide (one sample per row, the first momentum=None step)
  supports a name but never decides it;
- a nan reproduced by a mutant's nan is no evidence of that mutant's mistake;
- two mistakes at once are named as a pair; one beside an uncatalogued one is not named;
- an exception of the same type on the same probe is reproduced (momentum=None unsupported);
- a parameter gradient that cancels to ~0 is judged at the scale of its backward pass;
- a file with helper classes is graded on the class its exercise names, in a folder too.
"""

import textwrap
from pathlib import Path

import numpy as np
import pytest

from normcore.cli import main
from normcore.practice import EXERCISES, format_report, grade, grade_file
from normcore.practice.diagnosis import _same
from normcore.practice.grader import solution_source
from normcore.practice.loading import CannotGrade, find_class, load_module
from normcore.practice.mutants import Mutants
from normcore.practice.driver import maker
from normcore.practice.probes import distance, run_probe

HERE = Path(__file__).parent
ALT = HERE / "practice_alt"


def _edit(text, *replacements):
    """``text`` with each (old, new) replaced; each old must occur exactly once."""
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def _write(folder, name, text):
    path = Path(folder) / name
    path.write_text(textwrap.dedent(text))
    return path


def _failing(report):
    return [c for c in report.checks if c.status == "FAIL"]


def _probe(name, label):
    return next(p for p in EXERCISES[name].probes if p.label == label)


def _mutant_run(name, mistake_id, probe, k=0):
    return Mutants.of(EXERCISES[name]).run(((mistake_id, k),), probe)


def _answer_run(path, probe):
    return run_probe(probe, maker(find_class(load_module(path))))


# --- answers in published styles ------------------------------------------------------------
RMSNORM_FUNCTIONS = '''
    """RMSNorm as a pair of functions and a class around them; the mean square is divided by
    the number of rows (the batch size) instead of the number of features."""
    import numpy as np


    def rmsnorm_forward(x, gamma, eps, axes):
        ms = (x ** 2).sum(axis=axes, keepdims=True) / x.shape[0]
        r = 1.0 / np.sqrt(ms + eps)
        return x * r * gamma, (x * r, r, axes)


    def rmsnorm_backward(dy, gamma, cache):
        x_hat, r, axes = cache
        lead = tuple(range(dy.ndim - len(axes)))
        g = dy * gamma
        dx = r * (g - x_hat * (g * x_hat).mean(axis=axes, keepdims=True))
        return dx, (dy * x_hat).sum(axis=lead)


    class Parameter:
        def __init__(self, data):
            self.data, self.grad = data, np.zeros_like(data)


    class RMSNorm:
        def __init__(self, normalized_shape, eps=None):
            shape = (normalized_shape,) if np.isscalar(normalized_shape) else tuple(normalized_shape)
            self.eps, self.axes = eps, tuple(range(-len(shape), 0))
            self.gamma = Parameter(np.ones(shape))

        def forward(self, x):
            eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
            y, self.cache = rmsnorm_forward(x, self.gamma.data, eps, self.axes)
            return y.astype(x.dtype)

        def backward(self, dy):
            dx, dgamma = rmsnorm_backward(dy, self.gamma.data, self.cache)
            self.gamma.grad += dgamma
            return dx.astype(dy.dtype)
'''


def test_one_sample_per_row_supports_a_name_but_does_not_decide_it(tmp_path):
    """With one sample, dividing the sum of squares by the batch size (1) is dividing by
    nothing: rms-wrong-normaliser's mutant gives every number of that probe too. The other
    probes decide: only the batch-size mistake is named."""
    path = _write(tmp_path, "rms_functions.py", RMSNORM_FUNCTIONS)
    one = _probe("rmsnorm", "one sample (1, 6)")
    answer = _answer_run(path, one)
    assert _same(answer, _mutant_run("rmsnorm", "rms-wrong-normaliser", one))  # degenerate here
    report = grade_file(path)
    assert report.diagnosis_ids == ["rms-batch-size-normaliser"]
    assert {tuple(c.diagnoses) for c in _failing(report)} == {("rms-batch-size-normaliser",)}


def test_the_batch_size_normaliser_over_the_last_axis_only_is_named_as_a_pair(tmp_path):
    """The same answer reducing over the last axis only, whatever normalized_shape, with the
    backward derived for its own forward (1 / b there too): two catalogued mistakes, and the
    pair's mutant gives every number."""
    text = _edit(textwrap.dedent(RMSNORM_FUNCTIONS),
                 ("self.axes = eps, tuple(range(-len(shape), 0))", "self.axes = eps, (-1,)"),
                 ("(g * x_hat).mean(axis=axes, keepdims=True)",
                  "(g * x_hat).sum(axis=axes, keepdims=True) / dy.shape[0]"))
    report = grade_file(_write(tmp_path, "rms_last_axis.py", text))
    assert report.diagnosis_ids == ["rms-batch-size-normaliser", "stats-over-too-few-axes"]


def _batchnorm(*replacements):
    """The correct staged (cs231n) BatchNorm1d of tests/practice_alt, with lines replaced."""
    return _edit((ALT / "batchnorm_staged.py").read_text(), *replacements)


MOMENTUM = "m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum"
RUNNING_MEAN = "self.running_mean = (1 - m) * self.running_mean + m * mu"
RUNNING_VAR = "self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)"


def test_the_first_momentum_none_step_does_not_name_the_flipped_momentum(tmp_path):
    """Running statistics never updated: after the first step with momentum=None (m = 1) the
    flipped momentum keeps the initial values too, so its mutant gives those numbers. Every
    other step tells them apart: the flipped momentum is not named, the mistake made is."""
    path = tmp_path / "never_updated.py"
    path.write_text(_batchnorm((RUNNING_MEAN, "pass"), (RUNNING_VAR, "pass")))
    probe = _probe("batchnorm", "running stats momentum=None")
    answer, flipped = _answer_run(path, probe), _mutant_run("batchnorm", "bn-momentum-flipped", probe)
    for row in ("running_mean after 1 step", "running_var after 1 step"):
        assert distance(answer.rows[row].value, flipped.rows[row].value, "rel") < 1e-12
    report = grade_file(path)
    assert _failing(report) and report.diagnosis_ids == ["bn-running-never-updated"]


def test_two_mistakes_at_once_in_another_style_are_both_named(tmp_path):
    """The 0.9 momentum convention and the biased running variance, in the staged style: no
    single mutant gives every number, the pair does; each check names the mistake it shows."""
    path = tmp_path / "two.py"
    path.write_text(_batchnorm(
        (RUNNING_MEAN, "self.running_mean = m * self.running_mean + (1 - m) * mu"),
        (RUNNING_VAR, "self.running_var = m * self.running_var + (1 - m) * var")))
    report = grade_file(path)
    assert report.diagnosis_ids == ["bn-momentum-flipped", "bn-running-var-biased"]
    failing = {c.label: c for c in _failing(report)}
    assert failing["running stats (16, 3): running_mean after 1 step"].diagnoses == [
        "bn-momentum-flipped"]
    assert failing["running stats (16, 3): running_var after 5 steps"].diagnoses == [
        "bn-momentum-flipped", "bn-running-var-biased"]
    assert all(c.combined_with == report.diagnosis_ids for c in failing.values())
    text = format_report(report)
    assert "reproduces your numbers (together with bn-running-var-biased)" in " ".join(text.split())


DROPOUT_KEEP_AND_EVAL = '''
    """Dropout with p taken as the probability of keeping a unit, and no check of training:
    it still drops units in evaluation."""
    import numpy as np


    class Dropout:
        def __init__(self, p=0.5, rng=None):
            self.p, self.rng, self.training = p, np.random.default_rng(rng), True

        def train(self):
            self.training = True

        def eval(self):
            self.training = False

        def forward(self, x):
            self.mask = None
            if self.p == 0:
                return x
            self.mask = (self.rng.random(x.shape) < self.p) / self.p
            return (x * self.mask).astype(x.dtype)

        def backward(self, dy):
            return dy if self.mask is None else (dy * self.mask).astype(dy.dtype)
'''


def test_p_as_keep_probability_and_dropout_left_on_in_eval_are_named_as_a_pair(tmp_path):
    report = grade_file(_write(tmp_path, "dropout_two.py", DROPOUT_KEEP_AND_EVAL))
    assert report.diagnosis_ids == ["dropout-active-in-eval", "dropout-p-is-keep"]
    assert {c.confidence for c in _failing(report)} == {"reproduces"}


def test_a_catalogued_mistake_beside_an_uncatalogued_one_names_neither(tmp_path):
    """The same dropout with the kept units scaled by 2 / p: the pair's mutant no longer gives
    the numbers, and no other mistake is named in its place."""
    text = _edit(textwrap.dedent(DROPOUT_KEEP_AND_EVAL), ("/ self.p\n", "* 2 / self.p\n"))
    report = grade_file(_write(tmp_path, "dropout_odd.py", text))
    assert _failing(report) and report.diagnosis_ids == []
    assert {c.confidence for c in _failing(report)} == {""}


# --- nan and inf ----------------------------------------------------------------------------
DROPOUT_UNGUARDED_BACKWARD = '''
    """Dropout written with a boolean mask; its backward divides by 1 - p even at p = 1."""
    import numpy as np


    class Dropout:
        def __init__(self, p=0.5, rng=None):
            self.p, self.rng, self.training = p, np.random.default_rng(rng), True

        def forward(self, x):
            if not self.training or self.p == 0:
                self.keep = None
                return x
            self.keep = self.rng.random(x.shape) >= self.p
            scale = 0.0 if self.p == 1 else 1.0 / (1.0 - self.p)
            return (x * self.keep * scale).astype(x.dtype)

        def backward(self, dy):
            if self.keep is None:
                return dy
            return (dy * self.keep / (1.0 - self.p)).astype(dy.dtype)
'''


def test_a_nan_at_p_1_is_not_taken_for_the_fresh_mask(tmp_path):
    """At p = 1 the answer's dx is 0 / 0; so is the fresh-mask mutant's, whose forward is
    right there too: it gives every number of that probe. Everywhere else the answer is right
    and the fresh mask is not, so no mistake is named."""
    path = _write(tmp_path, "dropout_nan.py", DROPOUT_UNGUARDED_BACKWARD)
    probe = _probe("dropout", "p=1 (4, 5)")
    answer = _answer_run(path, probe)
    assert np.isnan(answer.rows["dx"].value).all()
    assert _same(answer, _mutant_run("dropout", "dropout-fresh-mask", probe))
    report = grade_file(path)
    assert [c.label for c in _failing(report)] == ["p=1 (4, 5): dx"]
    assert report.diagnosis_ids == [] and _failing(report)[0].note == "contains nan or inf"


SOFTMAX_ROWS = '''
    """Softmax written with a loop over the rows of a 2-D view, without the max shift."""
    import numpy as np


    class Softmax:
        def __init__(self, axis=-1):
            self.axis = axis

        def forward(self, x):
            moved = np.moveaxis(x, self.axis, -1)
            rows = moved.reshape(-1, moved.shape[-1])
            out = np.empty_like(rows)
            for i, row in enumerate(rows):
                e = np.exp(row)
                out[i] = e / e.sum()
            self.y = np.moveaxis(out.reshape(moved.shape), -1, self.axis)
            return self.y

        def backward(self, dy):
            s = (dy * self.y).sum(axis=self.axis, keepdims=True)
            return (self.y * (dy - s)).astype(dy.dtype)
'''


def test_a_mistake_seen_only_as_nan_is_named_only_when_every_other_number_agrees(tmp_path):
    """Without the max shift the softmax overflows to nan at large logits, and nowhere else:
    the nan, in the same places as the mutant's, and every other number of the file name it.
    The same answer with a wrong backward is not named: the nan no longer decides anything."""
    path = _write(tmp_path, "softmax_rows.py", SOFTMAX_ROWS)
    report = grade_file(path)
    assert report.diagnosis_ids == ["softmax-no-max-shift"]
    assert all("contains nan" in c.note for c in _failing(report))
    odd = _edit(textwrap.dedent(SOFTMAX_ROWS), ("(dy - s)", "(dy - 0.5 * s)"))
    report = grade_file(_write(tmp_path, "softmax_odd.py", odd))
    assert _failing(report) and report.diagnosis_ids == []


def test_what_a_half_done_answer_has_not_written_is_neither_for_nor_against_a_mistake(tmp_path):
    """The skeleton's backward still a TODO and eps outside the root in the forward: every
    number the answer computes is the mutant's, so the mistake is named; the TODO checks
    stay TODO."""
    skeleton = (HERE.parent / "normcore" / "practice" / "skeletons" / "layernorm.py").read_text()
    answer = solution_source("layernorm")
    forward = answer[answer.index("    def forward"):answer.index("    def backward")]
    source = (skeleton[:skeleton.index("    def forward")]
              + _edit(forward, ("np.sqrt(var + self.eps)", "(np.sqrt(var) + self.eps)"))
              + skeleton[skeleton.index("    def backward"):])
    path = tmp_path / "half.py"
    path.write_text(source)
    report = grade_file(path)
    assert report.not_implemented == ["backward"] and report.diagnosis_ids == ["eps-outside-sqrt"]
    assert {c.status for c in report.checks} == {"pass", "FAIL", "TODO"}


DROPOUT_KEEP = ("if self.p == 0:", "if not self.training or self.p == 0:")  # eval returns x


@pytest.mark.parametrize("edits, named", [
    ((DROPOUT_KEEP,), ["dropout-p-is-keep"]),
    ((), ["dropout-active-in-eval", "dropout-p-is-keep"]),
], ids=["one mistake", "a pair"])
def test_a_backward_left_as_a_todo_counts_against_neither_a_mistake_nor_a_pair(
        tmp_path, edits, named):
    """p taken as the keep probability (and dropout left on in evaluation), the backward still
    a TODO: the gradients the mutants compute and the answer never made are no evidence, so
    the mistake, or the pair, whose numbers the forward gives is named; the TODOs stay TODO."""
    text = _edit(textwrap.dedent(DROPOUT_KEEP_AND_EVAL), *edits, (
        "return dy if self.mask is None else (dy * self.mask).astype(dy.dtype)",
        "raise NotImplementedError"))
    report = grade_file(_write(tmp_path, "dropout_todo.py", text))
    assert report.not_implemented == ["backward"] and report.diagnosis_ids == named
    assert {c.status for c in report.checks if c.backward} == {"TODO"}
    assert {c.confidence for c in _failing(report)} == {"reproduces"}


# --- an exception of the same type on the same probe -----------------------------------------
MOMENTUM_NONE = "bn-momentum-none-unsupported"  # its mutant raises TypeError on momentum=None


@pytest.mark.parametrize("raises, line", [
    ("TypeError", "m = self.momentum"),  # (1 - None) raises TypeError, as the mutant does
    ("ValueError", "m = float(str(self.momentum))"),  # float('None') raises ValueError
])
def test_an_answer_that_raises_is_named_by_a_mutant_that_raises_alike(tmp_path, raises, line):
    """momentum=None unsupported: the answer raises on the momentum=None probe and is right
    everywhere else. The catalogued mutant raises a TypeError there (and gives every other
    number): it names an answer that raises a TypeError, never one that raises a ValueError."""
    path = tmp_path / "no_none.py"
    path.write_text(_batchnorm((MOMENTUM, line)))
    report = grade_file(path)
    errors = [c for c in report.checks if c.status == "ERROR"]
    assert errors and {c.probe for c in errors} == {"running stats momentum=None"}
    assert all(raises in c.note for c in errors) and not _failing(report)
    if raises == "TypeError":
        assert report.diagnosis_ids == [MOMENTUM_NONE]
        assert all(c.diagnoses == [MOMENTUM_NONE] for c in errors)
        text = format_report(report)
        assert f"[{MOMENTUM_NONE}]" in text and "reproduces your numbers in" in " ".join(text.split())
        assert max(len(line) for line in text.splitlines()) <= 80
    else:
        assert report.diagnosis_ids == []


def test_an_answer_that_raises_later_than_the_mistake_is_not_named_by_it(tmp_path):
    """momentum=None handled on the first step only (m = 1 there, then m = None): the answer
    makes the statistics after one step and raises the TypeError on the second. The mutant of
    momentum=None unsupported raises the same type of exception on the first step, before
    those observations: not the same exception at the same observations, so it is not named."""
    path = tmp_path / "first_step_only.py"
    path.write_text(_batchnorm((MOMENTUM, "m = 1.0 if self.momentum is None and "
                                          "self.num_batches_tracked == 1 else self.momentum")))
    probe = _probe("batchnorm", "running stats momentum=None")
    answer, mutant = _answer_run(path, probe), _mutant_run("batchnorm", MOMENTUM_NONE, probe)
    assert type(answer.error) is type(mutant.error) is TypeError
    assert "running_mean after 1 step" in answer.rows
    assert "running_mean after 1 step" not in mutant.rows
    report = grade_file(path)
    errors = [c for c in report.checks if c.status == "ERROR"]
    assert errors and all("TypeError" in c.note for c in errors)
    assert report.diagnosis_ids == [] and all(c.diagnoses == [] for c in errors)


def test_a_mistake_that_raises_pairs_with_one_that_gives_numbers(tmp_path):
    """momentum=None unsupported and the biased running variance: the pair's mutant raises
    the TypeError on the momentum=None probe and gives the biased running_var elsewhere."""
    path = tmp_path / "no_none_biased.py"
    path.write_text(_batchnorm((MOMENTUM, "m = self.momentum"),
                               (RUNNING_VAR, "self.running_var = (1 - m) * self.running_var + m * var")))
    report = grade_file(path)
    assert report.diagnosis_ids == sorted(["bn-running-var-biased", MOMENTUM_NONE])
    errors = [c for c in report.checks if c.status == "ERROR"]
    assert errors and all(MOMENTUM_NONE in c.diagnoses for c in errors)
    assert all(c.diagnoses == ["bn-running-var-biased"] for c in _failing(report))
    assert "reproduces your numbers (together with bn-running-var-biased)" in " ".join(
        format_report(report).split())


# --- dtypes -----------------------------------------------------------------------------------
def test_a_float64_result_beside_a_catalogued_mistake_leaves_the_name_and_fails_on_its_own(tmp_path):
    """eps outside the square root, and y returned in float64 for a float32 input (a mask or a
    constant built in float64 does it in published answers): the numbers are the mistake's,
    so it is named; the dtype is a failure of its own, left without a name."""
    path = tmp_path / "eps_float64.py"
    path.write_text(_edit(solution_source("layernorm"),
                          ("np.sqrt(var + self.eps)", "(np.sqrt(var) + self.eps)"),
                          ("return y.astype(x.dtype)", "return y.astype(np.float64)")))
    report = grade_file(path)
    assert report.diagnosis_ids == ["eps-outside-sqrt"]
    dtype = [c for c in _failing(report) if c.row.endswith("dtype")]
    assert [c.label for c in dtype] == ["(4, 6) float32: output dtype"]
    assert dtype[0].diagnoses == [] and dtype[0].note == "float64, expected float32"
    assert all(c.diagnoses == ["eps-outside-sqrt"] for c in _failing(report) if c not in dtype)


# --- near-zero quantities -------------------------------------------------------------------
SOFTMAX_FUNCTIONS = '''
    """Softmax as two functions and a class; 1e-12 is added to the denominator for safety."""
    import numpy as np


    def softmax_forward(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        y = e / (e.sum(axis=axis, keepdims=True) + 1e-12)
        return y, y


    def softmax_backward(dy, cache, axis):
        y = cache
        return y * (dy - (dy * y).sum(axis=axis, keepdims=True))


    class Softmax:
        def __init__(self, axis=-1):
            self.axis = axis

        def forward(self, x):
            y, self.cache = softmax_forward(x, self.axis)
            return y.astype(x.dtype)

        def backward(self, dy):
            return softmax_backward(dy, self.cache, self.axis).astype(dy.dtype)
'''


@pytest.mark.parametrize("name", ["attention", "qk_norm"])
def test_a_1e_12_added_to_a_softmax_denominator_passes(tmp_path, name):
    """Over one position (or scores ~ 1000) the reference's dwq and dwk are 0 (or 1e-30); the
    1e-12 leaves ~1e-12 there, far below the gradients of the same backward pass."""
    path = tmp_path / f"{name}_eps.py"
    path.write_text(_edit(solution_source(name), ("attn = e / e.sum(axis=-1, keepdims=True)",
                                                  "attn = e / (e.sum(axis=-1, keepdims=True) + 1e-12)")))
    report = grade_file(path)
    assert report.passed, [(c.label, c.error) for c in report.checks if c.status != "pass"]


def test_a_1e_12_added_to_a_softmax_denominator_passes_in_a_functions_style(tmp_path):
    assert grade_file(_write(tmp_path, "softmax_eps.py", SOFTMAX_FUNCTIONS)).passed


def test_a_parameter_gradient_is_judged_at_the_scale_of_its_backward_pass():
    """The reference's dwq over one position is exactly 0: 1e-12 passes against the pass's
    largest gradient, 1e-6 does not, and dx is judged on its own size."""
    probe = _probe("attention", "one position (2, 1, 8), H=2, causal")
    ref = Mutants.of(EXERCISES["attention"]).reference(probe)
    dwq, dwo = ref.rows["dwq"], ref.rows["dwo"]
    assert not np.any(dwq.value) and dwq.scale == pytest.approx(np.abs(dwo.value).max())
    assert ref.rows["dx"].scale == 0.0
    for gap, passes in ((1e-12, True), (1e-6, False)):
        off = dwq.value + gap
        assert (distance(off, dwq.value, "rel", dwq.scale) <= dwq.tol) is passes
        assert distance(off, dwq.value, "rel") > dwq.tol  # without the scale: always fails


def test_a_wrong_dwq_over_one_position_still_fails(tmp_path):
    """The scale does not hide a real mistake: dq computed without the softmax's Jacobian is
    as large as the other gradients, and fails there."""
    path = tmp_path / "attention_dq.py"
    path.write_text(_edit(solution_source("attention"),
                          ("dq = dscores @ k / D ** 0.5", "dq = dattn @ k / D ** 0.5")))
    failing = {c.label for c in _failing(grade_file(path))}
    assert "one position (2, 1, 8), H=2, causal: dwq" in failing


# --- helper classes and --name --------------------------------------------------------------
HELPERS = '''

class Linear:
    """A helper layer the file also defines."""

    def __init__(self, n_in, n_out):
        self.w = Parameter(np.zeros((n_in, n_out)))

    def forward(self, x):
        self.x = x
        return x @ self.w.data

    def backward(self, dy):
        self.w.grad += self.x.T @ dy
        return dy @ self.w.data.T


class TinyModel:
    """Tries the answer out: a Linear, then the LayerNorm."""

    def __init__(self):
        self.linear, self.norm = Linear(3, 6), LayerNorm(6)

    def forward(self, x):
        return self.norm.forward(self.linear.forward(x))

    def backward(self, dy):
        return self.linear.backward(self.norm.backward(dy))
'''


def test_a_file_with_helper_classes_is_graded_on_the_class_its_exercise_names(tmp_path):
    """A Parameter class, a Linear with forward and backward, and a small model using the
    LayerNorm: the LayerNorm is graded, not refused."""
    path = tmp_path / "layernorm_with_helpers.py"
    path.write_text(solution_source("layernorm") + HELPERS)
    report = grade_file(path)
    assert report.class_name == "LayerNorm" and report.exercise.name == "layernorm"
    assert report.passed


def test_a_block_is_graded_rather_than_the_layernorm_it_uses(tmp_path):
    """A class that another class of the file uses is a helper, even when an exercise has its
    name: TransformerBlock uses LayerNorm, so TransformerBlock is the answer."""
    path = _write(tmp_path, "block.py", '''
        class LayerNorm:
            def forward(self, x):
                return x

            def backward(self, dy):
                return dy


        class TransformerBlock:
            def __init__(self):
                self.norm = LayerNorm()

            def forward(self, x):
                return self.norm.forward(x)

            def backward(self, dy):
                return self.norm.backward(dy)
    ''')
    assert find_class(load_module(path)).__name__ == "TransformerBlock"
    assert find_class(load_module(path), layer="layernorm").__name__ == "LayerNorm"


def test_a_model_that_tries_the_answer_out_is_a_helper(tmp_path):
    """Net uses LayerNormScratch, and Linear is a helper of both: the class whose name says
    its exercise is graded."""
    path = _write(tmp_path, "scratch.py", '''
        class Linear:
            def forward(self, x):
                return x

            def backward(self, dy):
                return dy


        class LayerNormScratch(Linear):
            pass


        class Net:
            def __init__(self):
                self.layers = [Linear(), LayerNormScratch()]

            def forward(self, x):
                return x

            def backward(self, dy):
                return dy
    ''')
    assert find_class(load_module(path)).__name__ == "LayerNormScratch"


def test_a_file_with_two_answers_is_still_refused(tmp_path):
    path = _write(tmp_path, "two.py", '''
        class MyLayerNorm:
            def forward(self, x):
                return x

            def backward(self, dy):
                return dy


        class MyRMSNorm(MyLayerNorm):
            pass
    ''')
    with pytest.raises(CannotGrade, match="several layer classes"):
        find_class(load_module(path))


def test_name_grades_that_class_in_every_file_of_a_folder(tmp_path, capsys):
    """Two files each defining MyLayerNorm and MyRMSNorm: the folder is graded with --name
    MyLayerNorm, each file on its own class of that name."""
    folder = tmp_path / "class"
    folder.mkdir()
    layernorm = solution_source("layernorm").replace("class LayerNorm", "class MyLayerNorm")
    rmsnorm = solution_source("rmsnorm").replace("class RMSNorm", "class MyRMSNorm").replace(
        "class Parameter", "class RmsParameter").replace("Parameter(", "RmsParameter(")
    wrong = _edit(layernorm, ("rstd = 1.0 / np.sqrt(var + self.eps)",
                              "rstd = 1.0 / (np.sqrt(var) + self.eps)"))
    (folder / "ann.py").write_text(layernorm + "\n\n" + rmsnorm)
    (folder / "ben.py").write_text(wrong + "\n\n" + rmsnorm)
    assert main(["practice", "check", str(folder)]) == 2  # which class? each file says so
    assert "choose one with --name" in capsys.readouterr().out
    assert main(["practice", "check", str(folder), "--name", "MyLayerNorm"]) == 1
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    rows = {line.split()[0]: line.split() for line in out.splitlines() if ".py" in line}
    assert rows["ann.py"][1] == "layernorm" and rows["ann.py"][3] == "-"
    assert rows["ben.py"][1] == "layernorm" and rows["ben.py"][3] == "eps-outside-sqrt"
    assert out.splitlines()[-1] == "2 files: 1 pass, 1 fail"


def test_grade_names_nothing_on_a_passing_answer_and_reports_within_80_columns(tmp_path):
    """The wording of the Diagnosis section fits 80 columns for a pair too."""
    path = tmp_path / "two.py"
    path.write_text(_batchnorm(
        (RUNNING_MEAN, "self.running_mean = m * self.running_mean + (1 - m) * mu"),
        (RUNNING_VAR, "self.running_var = m * self.running_var + (1 - m) * var")))
    text = format_report(grade_file(path))
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "Diagnosis (reproduces:" in text and "matches" not in text
    assert grade(find_class(load_module(ALT / "batchnorm_staged.py")),
                 EXERCISES["batchnorm"]).diagnosis_ids == []
