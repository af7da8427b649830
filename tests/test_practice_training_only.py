"""A training-only BatchNorm (no running statistics, no evaluation mode), graded as what it is.

``normcore practice new batchnorm --no-running-stats`` writes the skeleton (NumPy, or with
``--torch``); a file with ``NO_RUNNING_STATS = True``, or whose layer has neither
``running_mean`` nor ``running_var``, is graded on the rest, its running statistics' and
evaluation's checks "not written". Check counts come from grading, never written down.
"""

import doctest
import types

import pytest

from normcore.cli import main
from normcore.practice import format_report, grade_file
from normcore.practice.grader import NOT_WRITTEN
from normcore.practice.exercises import is_running_statistics
from normcore.practice.mutants import solution_source
from normcore.practice.skeletons import NO_RUNNING_STATS_FLAG, NoTrainingOnly, skeleton

NUMPY = '''
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5):
        self.eps = eps
        self.gamma = Parameter(np.ones(num_features))
        self.beta = Parameter(np.zeros(num_features))

    def forward(self, x):
        self.axes = (0,) + tuple(range(2, x.ndim))
        self.view = (1, -1) + (1,) * (x.ndim - 2)
        mean = x.mean(axis=self.axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=self.axes, keepdims=True)
        self.rstd = 1 / np.sqrt(var + self.eps)
        self.x_hat = (x - mean) * self.rstd
        return self.gamma.data.reshape(self.view) * self.x_hat + self.beta.data.reshape(self.view)

    def backward(self, dy):
        axes = self.axes
        self.gamma.grad += (dy * self.x_hat).sum(axis=axes)
        self.beta.grad += dy.sum(axis=axes)
        d = dy * self.gamma.data.reshape(self.view)
        return self.rstd * (d - d.mean(axis=axes, keepdims=True)
                            - self.x_hat * (d * self.x_hat).mean(axis=axes, keepdims=True))
'''

TORCH = '''
import torch
from torch import nn


class BatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        dims = [0] + list(range(2, x.dim()))
        shape = [1, -1] + [1] * (x.dim() - 2)
        mean = x.mean(dim=dims, keepdim=True)
        var = x.var(dim=dims, keepdim=True, unbiased=False)
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        return x_hat * self.weight.view(shape) + self.bias.view(shape)
'''
ANSWERS = {"numpy": NUMPY, "torch": TORCH}
# a catalogued mistake written into a training-only answer: (track, what it replaces, by what)
MISTAKES = {
    "backward-no-mean-term": ("numpy", "d - d.mean(axis=axes, keepdims=True)", "d"),
    "var-unbiased-in-normalization": ("numpy", "((x - mean) ** 2).mean(axis=self.axes, keepdims=True)",
                                      "x.var(axis=self.axes, ddof=1, keepdims=True)"),
    "eps-outside-sqrt": ("torch", "torch.sqrt(var + self.eps)", "(torch.sqrt(var) + self.eps)"),
}


def _write(tmp_path, text, name="my_batchnorm.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _running(report):
    return [c for c in report.checks if is_running_statistics(c.probe, c.row)]


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_a_correct_training_only_answer_passes_with_the_running_statistics_not_written(track, tmp_path):
    report = grade_file(_write(tmp_path, ANSWERS[track]))
    assert report.passed and report.no_running_stats == "the layer has no running_mean and no running_var"
    running = _running(report)
    assert running and {c.status for c in running} == {NOT_WRITTEN}
    assert {c.status for c in report.checks if c not in running} == {"pass"}
    text = format_report(report)
    assert "Training only (the layer has no running_mean and no running_var)" in text
    assert "not written (training only)" in text and "All checks pass." in text
    assert all(len(line) <= 80 for line in text.splitlines())


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_a_training_only_answer_with_a_catalogued_mistake_gets_its_name(mistake, tmp_path):
    track, old, new = MISTAKES[mistake]
    assert old in ANSWERS[track]
    report = grade_file(_write(tmp_path, ANSWERS[track].replace(old, new)))
    assert not report.passed and report.mistake_ids == [mistake]
    assert {c.status for c in _running(report)} == {NOT_WRITTEN}


@pytest.mark.parametrize("track", ["numpy", "torch"])
def test_a_full_answer_still_needs_its_running_statistics(track, tmp_path):
    """An answer with running statistics is graded on them; the flag alone leaves them out."""
    key = "torch/batchnorm" if track == "torch" else "batchnorm"
    source = solution_source(key)
    report = grade_file(_write(tmp_path, source))
    assert report.passed and not report.no_running_stats and _running(report)
    assert all(c.status == "pass" for c in _running(report))
    never = source.replace("self.running_mean = (1 - m)", "running_mean = (1 - m)") if track == "numpy" \
        else source.replace("self.running_mean.mul_(", "self.running_mean.clone().mul_(")
    assert never != source
    report = grade_file(_write(tmp_path, never, "never.py"))
    assert not report.passed and not report.no_running_stats
    assert any(c.status == "FAIL" for c in _running(report))
    flagged = grade_file(_write(tmp_path, never + "\n" + NO_RUNNING_STATS_FLAG, "flagged.py"))
    assert flagged.passed and flagged.no_running_stats == "NO_RUNNING_STATS = True in the file"


@pytest.mark.parametrize("torch", [False, True])
def test_the_training_only_skeleton_is_derived_and_its_example_holds(torch, tmp_path):
    text = skeleton("batchnorm", "my_file.py", torch=torch, no_running_stats=True)
    assert NO_RUNNING_STATS_FLAG in text and "training-only" in text.splitlines()[0]
    code = text.split('"""\n', 2)[-1]
    for word in ("running_mean", "running_var", "num_batches_tracked", "momentum", "def eval"):
        assert word not in code
    module = types.ModuleType("example")
    module.__doc__ = text.split('"""')[1]
    exec(ANSWERS["torch" if torch else "numpy"], module.__dict__)
    result = doctest.testmod(module)
    assert result.attempted >= 6 and result.failed == 0
    full = skeleton("batchnorm", "my_file.py", torch=torch)
    assert "NO_RUNNING_STATS" not in full and "running_mean" in full


def test_new_no_running_stats_writes_it_and_the_grader_reads_the_flag(tmp_path, capsys):
    assert main(["practice", "new", "batchnorm", "--no-running-stats", "--dir", str(tmp_path)]) == 0
    written = tmp_path / "my_batchnorm.py"
    assert written.read_text() == skeleton("batchnorm", written, no_running_stats=True)
    report = grade_file(written)
    assert report.no_running_stats == "NO_RUNNING_STATS = True in the file"
    assert {c.status for c in report.checks} == {"TODO", NOT_WRITTEN}
    assert main(["practice", "new", "layernorm", "--no-running-stats", "--dir", str(tmp_path)]) == 2
    assert "no running statistics" in capsys.readouterr().err
    with pytest.raises(NoTrainingOnly):
        skeleton("layernorm", no_running_stats=True)


def test_running_statistics_made_in_the_first_forward_are_still_graded(tmp_path):
    """A layer that makes running_mean and running_var in its first forward is a full answer."""
    source = solution_source("batchnorm")
    made = ("        self.running_mean = np.zeros(num_features, dtype)\n"
            "        self.running_var = np.ones(num_features, dtype)\n")
    lazy = source.replace(made, "        self.made = lambda: (np.zeros(num_features, dtype), "
                                "np.ones(num_features, dtype))\n").replace(
        "    def forward(self, x):\n", "    def forward(self, x):\n"
        "        if not hasattr(self, 'running_mean'):\n"
        "            self.running_mean, self.running_var = self.made()\n", 1)
    assert made in source and "self.made()" in lazy
    report = grade_file(_write(tmp_path, lazy))
    assert report.passed and not report.no_running_stats
    assert all(c.status == "pass" for c in _running(report))


def test_the_class_table_and_records_say_a_file_is_training_only(tmp_path):
    from normcore.practice.classroom import format_table, grade_many
    training = _write(tmp_path, NUMPY, "alice.py")
    full = _write(tmp_path, solution_source("batchnorm"), "bob.py")
    rows = grade_many([str(training), str(full)])
    assert [r.passed for r in rows] == [True, True]
    assert [r.record()["no_running_stats"] for r in rows] == [True, False]
    lines = format_table(rows).splitlines()
    assert "(training only: no running statistics)" in next(line for line in lines if "alice" in line)
    assert "training only" not in next(line for line in lines if "bob" in line)
