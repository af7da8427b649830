"""Synthetic tasks, the training loop, and a 4-layer Pre-Norm model learning to reverse 8 tokens."""

import re
from pathlib import Path

import numpy as np
import pytest

import normcore as nc
from normcore import optim, tasks
from normcore.perf.cases import ReverseRun
from normcore.perf.threads import single_thread


def test_reverse_task_layout():
    task = tasks.ReverseTask(n_tokens=4, n_symbols=6)
    tokens, targets = task.batch(5, seed=0)
    assert tokens.shape == targets.shape == (5, 8) and task.seq_len == 8 and task.vocab_size == 7
    src = tokens[:, :4]
    assert np.all(tokens[:, 4] == task.sep)
    assert np.all(targets[:, :4] == tasks.IGNORE)
    np.testing.assert_array_equal(targets[:, 4:], src[:, ::-1])
    np.testing.assert_array_equal(tokens[:, 5:], targets[:, 4:7])  # teacher forcing
    assert tokens.max() < task.vocab_size and tokens.min() >= 0


@pytest.mark.parametrize("name,answer", [
    ("copy", lambda s: s), ("sort", lambda s: np.sort(s, axis=1)),
])
def test_copy_and_sort_answers(name, answer):
    task = tasks.make_task(name, n_tokens=5, n_symbols=9)
    tokens, targets = task.batch(16, seed=1)
    np.testing.assert_array_equal(targets[:, 5:], answer(tokens[:, :5]))


def test_modular_addition_and_teacher_labelling():
    task = tasks.ModularAdditionTask(p=7)
    tokens, targets = task.batch(50, seed=0)
    np.testing.assert_array_equal(targets[:, 2], (tokens[:, 0] + tokens[:, 1]) % 7)
    assert np.all(tokens[:, 2] == 7) and np.all(targets[:, :2] == tasks.IGNORE)
    teacher = tasks.TeacherLabellingTask(seq_len=6, n_symbols=5, n_labels=3, teacher_seed=4)
    tokens, labels = teacher.batch(20, seed=0)
    assert labels.min() >= 0 and labels.max() < 3
    same_teacher = tasks.TeacherLabellingTask(seq_len=6, n_symbols=5, n_labels=3, teacher_seed=4)
    np.testing.assert_array_equal(same_teacher.batch(20, seed=0)[1], labels)
    # The label depends on exactly (previous, current): equal pairs give equal labels.
    prev = np.concatenate([np.zeros((20, 1), int), tokens[:, :-1]], axis=1)
    table = {}
    for key, lab in zip(zip(prev.ravel(), tokens.ravel()), labels.ravel()):
        assert table.setdefault(key, lab) == lab


def test_batches_are_reproducible_from_the_seed():
    task = tasks.SortTask()
    a, b, c = task.batches(4, seed=3), task.batches(4, seed=3), task.batches(4, seed=4)
    first = next(a)
    np.testing.assert_array_equal(first[0], next(b)[0])
    assert not np.array_equal(first[0], next(c)[0])
    assert not np.array_equal(first[0], next(a)[0])
    with pytest.raises(ValueError, match="unknown task"):
        tasks.make_task("parity")


def test_fit_records_history_and_writes_progress_to_stderr(capsys):
    task = tasks.CopyTask(n_tokens=3, n_symbols=5)
    model = nc.TinyTransformer(task.vocab_size, 8, 2, 2, task.seq_len, rng=0)
    hist = nc.fit(model, task, nc.AdamW(model.parameters(), lr=1e-2), steps=6,
                  schedule=optim.linear_warmup(1e-2, 3), clip=0.1, batch_size=4)
    err = capsys.readouterr().err
    assert "6/6" in err and "loss" in err
    assert hist["loss"].shape == hist["lr"].shape == hist["grad_norm"].shape == (6,)
    assert hist["block_grad_norm"].shape == (6, 2)
    np.testing.assert_allclose(hist["lr"], [1e-2 / 3, 2e-2 / 3, 1e-2, 1e-2, 1e-2, 1e-2])
    # The global norm squared is the sum over blocks plus the parameters outside them.
    assert np.all(hist["grad_norm"] ** 2 > (hist["block_grad_norm"] ** 2).sum(1))
    assert np.all(np.isfinite(hist["loss"])) and np.all(hist["grad_norm"] > 0.1)  # recorded before clipping
    nc.fit(model, task, nc.SGD(model.parameters(), lr=1e-2), steps=2, progress=False)
    assert capsys.readouterr().err == ""


def test_fit_with_an_iterable_of_batches():
    task = tasks.ReverseTask(n_tokens=2, n_symbols=4)
    model = nc.TinyTransformer(task.vocab_size, 8, 1, 2, task.seq_len, rng=0)
    batches = [task.batch(3, seed=s) for s in range(2)]
    hist = nc.fit(model, batches, nc.SGD(model.parameters(), lr=0.1), steps=2, progress=False)
    assert hist["loss"].shape == (2,)
    with pytest.raises(ValueError, match="ran out after 2 of 3"):
        nc.fit(model, batches, nc.SGD(model.parameters(), lr=0.1), steps=3, progress=False)


@pytest.mark.slow
def test_four_layer_pre_norm_model_learns_to_reverse_8_tokens():
    """THE LEARNING TEST (slow, about 10 s alone): 4 Pre-Norm blocks reach >= 99% token accuracy on
    fresh reversal problems, and the training loss falls tenfold.

    NumPy's BLAS runs on one thread: for matrices this small, OpenBLAS's threads only add
    synchronisation. How long the training takes is not asserted (a busy machine would fail
    the test although nothing is wrong): ``normcore bench`` times this same run
    (``normcore.perf.cases.ReverseRun``) against its one-minute budget.
    """
    run = ReverseRun()
    with single_thread():
        hist = run.train()
        accuracy = run.held_out_accuracy()
    print(f"reverse 8 tokens: {len(hist['loss'])} steps, held-out token accuracy {accuracy:.4f}")
    assert len(hist["loss"]) == 250
    assert accuracy >= 0.99
    assert hist["loss"][-10:].mean() < 0.1 * hist["loss"][:10].mean()


def test_readme_transformer_example_runs_in_a_few_steps():
    """The README's Transformer example, shortened to 3 steps, runs and returns its history."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = re.search(r"## The Transformer stack\n.*?```python\n(.*?)```", readme, flags=re.S).group(1)
    code = code.replace("steps=250", "steps=3").replace("batch_size=64)", "batch_size=4, progress=False)")
    namespace = {}
    exec(compile(code, "README Transformer example", "exec"), namespace)
    assert namespace["history"]["loss"].shape == (3,)
    assert namespace["history"]["block_grad_norm"].shape == (3, 4)
