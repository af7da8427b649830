"""The smoke check: a newcomer's first run, one touch of each part (README command 2b).

Every layer class's gradient check (its first case in ``normcore gradcheck``'s list), the PyTorch
parity of each class once, the grader on one right answer and one wrong answer (each in its own
child process, as ``normcore practice check`` runs them), one notebook in a fresh kernel and one
step-through. It runs alone (``pytest tests/test_smoke.py``) in under 2 minutes on 2 busy cores;
the full suite (command 2, what CI runs) checks each of these parts in every configuration.
"""

import importlib.util
from pathlib import Path

import nbformat
import numpy as np
import pytest

from normcore.derivations import step_through
from normcore.gradcheck import gradcheck
from normcore.layer_cases import all_cases
from normcore.nn import Dropout
from normcore.practice.grader import grade_file

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "normcore" / "practice" / "solutions"


def _size(case):
    """How many numbers a case holds: its parameters and its inputs."""
    return (sum(p.data.size for p in case.module.parameters())
            + sum(np.size(x) for x in case.inputs if x is not None))


def _smallest_per_class():
    """The labels of each layer class's smallest case (the first of equals), in list order."""
    cases = all_cases()
    smallest = {}
    for case in cases:
        name = type(case.module).__name__
        if name not in smallest or _size(case) < _size(smallest[name]):
            smallest[name] = case
    return [case.label for case in cases if smallest[type(case.module).__name__] is case]


ONE_PER_CLASS = _smallest_per_class()


def _case(label):
    """A fresh copy of the case: no test sees another's forward or mode."""
    return next(case for case in all_cases() if case.label == label)


def test_one_case_per_layer_class():
    names = [type(case.module).__name__ for case in all_cases() if case.label in ONE_PER_CLASS]
    assert len(names) == len(set(names)) >= 20
    assert {"BatchNorm1d", "LayerNorm", "RMSNorm", "GroupNorm", "DyT", "TransformerBlock",
            "MultiheadAttention", "TinyTransformer", "CrossEntropyLoss"} <= set(names)


@pytest.mark.parametrize("label", ONE_PER_CLASS)
def test_gradient_check(label):
    case = _case(label)
    report = gradcheck(case.module, *case.inputs)
    assert report.passed, str(report)


@pytest.mark.parametrize("label", ONE_PER_CLASS)
def test_matches_pytorch(label):
    pytest.importorskip("torch", reason="the PyTorch parity needs torch (README: the CPU build)")
    from normcore.torch_bridge import compare, supported
    case = _case(label)
    if type(case.module).__name__ not in supported():
        pytest.skip(f"{type(case.module).__name__} has no twin in normcore.torch_bridge")
    if isinstance(case.module, Dropout):
        case.module.eval()  # torch draws its own mask: compared where both are the identity
    report = compare(case.module, *case.inputs, out=None)
    assert report.passed, report


@pytest.mark.parametrize("mistake", [None, "backward-no-mean-term"])
def test_grader_passes_a_right_answer_and_names_a_wrong_one(mistake):
    wrong = sorted((ROOT / "tests" / "practice_bugs").glob(f"{mistake}@layernorm*.py"))
    path = SOLUTIONS / "layernorm.py" if mistake is None else wrong[0]
    report = grade_file(path)
    assert report.passed == (mistake is None)
    assert report.diagnosis_ids == ([] if mistake is None else [mistake])


def test_a_notebook_runs_in_a_fresh_kernel():
    spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    nb = nbformat.read(ROOT / "notebooks" / "rmsnorm.ipynb", as_version=4)
    build.execute(nb)  # raises nbclient's CellExecutionError on the first failing cell
    assert any(cell.get("outputs") for cell in nb.cells if cell.cell_type == "code")


def test_a_step_through():
    st = step_through("layernorm", shape=(3, 4), seed=0)
    assert st.passed, st.text()
