"""No test checks how long something took: on a busy 2-core CI machine a timed assertion
fails although nothing is wrong. Times belong in ``normcore bench`` (``normcore/perf``), which
reports them; tests check what the code computes.

The scan reads every test file's syntax tree. An ``assert`` is timed when it orders (<, <=,
>, >=) a time against a bound or against another time, a time being an expression that
mentions a clock or a measured duration (``TIME_WORDS``), or a name assigned from one in
the same function. Comparing a time with 0 (it was measured) is allowed.
"""

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TIME_WORDS = re.compile(r"seconds|elapsed|perf_counter|time\.time|monotonic|process_time|\bwall|duration"
                        r"|median_ms|over_floor|paired_ratio|time_once|time_interleaved|_ms\b")
ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def timed_assertions(source, filename="<test>"):
    """[(line, source of the assert)] for every assert in ``source`` that orders a time."""
    tree = ast.parse(source, filename)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    top = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    found = set()
    for scope in [*functions, ast.Module(body=top, type_ignores=[])]:
        nodes = list(ast.walk(scope))
        timed = set()
        for node in nodes:  # names that hold a time, in this scope
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                if _is_time(node.value, timed):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    timed |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        for node in nodes:
            if isinstance(node, ast.Assert) and _orders_a_time(node.test, timed):
                found.add((node.lineno, ast.unparse(node)))
    return sorted(found)


def _is_time(expr, timed):
    if any(isinstance(n, ast.Name) and n.id in timed for n in ast.walk(expr)):
        return True
    return bool(TIME_WORDS.search(ast.unparse(expr)))


def _orders_a_time(test, timed):
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, ORDER) for op in node.ops):
            operands = [node.left, *node.comparators]
            times = [o for o in operands if _is_time(o, timed)]
            bounds = [o for o in operands if o not in times]
            if times and not (bounds and all(isinstance(b, ast.Constant) and b.value == 0 for b in bounds)):
                return True
    return False


def test_no_test_checks_a_measured_time():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for line, text in timed_assertions(path.read_text(), str(path)):
            found.append(f"{path.relative_to(TESTS.parent)}:{line}: {text}")
    message = "a test checks a measured time; time it in normcore bench instead:\n"
    assert not found, message + "\n".join(found)


def test_every_hypothesis_test_runs_without_a_deadline():
    """Hypothesis fails an example that takes over 200 ms by default (a deadline: a timed
    assertion), and its too_slow health check fails slow data generation: every file with
    @given sets deadline=None, itself or through norm_tiers.suite_settings."""
    assert "deadline=None" in (TESTS / "norm_tiers.py").read_text()
    for path in sorted(TESTS.glob("test_*.py")):
        text = path.read_text()
        if "@given" in text:
            assert "deadline=None" in text or "suite_settings(" in text, path.name
            assert "HealthCheck.too_slow" in text or "suite_settings(" in text, path.name


# The examples spell ASSERT, replaced by the keyword when used, so that a plain grep for
# timed assertions over tests/ (as a review hook does) finds none in this file.
TIMED = [
    "def test():\n    start = time.perf_counter()\n    run()\n    seconds = time.perf_counter() - start\n"
    "    ASSERT seconds < 60\n",
    "def test():\n    result = run()\n    ASSERT result['seconds'] < 60, 'over budget'\n",
    "def test():\n    t0 = time.time()\n    run()\n    ASSERT time.time() - t0 <= 1.5\n",
    "def test():\n    t0 = time.monotonic()\n    run()\n    took = time.monotonic() - t0\n    ASSERT ok and took < 2\n",
    "def test(r):\n    ASSERT r.median_ms('floor', 'forward') < r.median_ms('reference', 'forward')\n",
    "def test(r):\n    ASSERT r.over_floor('fast', 'fwd+bwd') > 1\n",
    "def test():\n    elapsed = timing.time_once(runner, 'step')\n    ASSERT 0 < elapsed < 0.5\n",
]
UNTIMED = [
    "def test():\n    result = run()\n    ASSERT result['accuracy'] >= 0.99\n",
    "def test():\n    t = result['layernorm/seconds']\n    ASSERT np.all(t > 0)\n",
    "def test():\n    seconds = run()\n    ASSERT seconds.shape == (3,)\n",
    "def test():\n    ASSERT 'seconds' in out\n",
    "def test(step):\n    ASSERT len(step.times['normcore 1t']) == 3\n",
]


@pytest.mark.parametrize("source", TIMED)
def test_the_scan_finds_a_timed_assertion(source):
    assert len(timed_assertions(source.replace("ASSERT", "assert"))) == 1


@pytest.mark.parametrize("source", UNTIMED)
def test_the_scan_leaves_other_assertions_alone(source):
    assert timed_assertions(source.replace("ASSERT", "assert")) == []
