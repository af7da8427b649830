"""Synthetic tasks, the training loop, and a 4-layer Pre-Norm model learning to reverse 8 tokens."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import normcore as nc
from normcore import optim, tasks


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


def train_reverse(steps=250):
    """Train 4 Pre-Norm blocks to reverse 8 tokens; return (seconds, held-out token accuracy, history)."""
    task = tasks.ReverseTask(n_tokens=8, n_symbols=10)
    model = nc.TinyTransformer(task.vocab_size, d_model=32, n_layers=4, n_heads=4, max_len=task.seq_len, rng=0)
    opt = nc.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    start = time.perf_counter()
    hist = nc.fit(model, task, opt, steps, schedule=optim.warmup_cosine(3e-3, 30, steps), clip=1.0,
                  batch_size=64, seed=0, progress=False)
    seconds = time.perf_counter() - start
    model.eval()
    tokens, targets = task.batch(1000, seed=12345)  # fresh problems, never trained on
    return seconds, tasks.token_accuracy(model(tokens), targets), hist


@pytest.mark.slow
def test_four_layer_pre_norm_model_learns_to_reverse_8_tokens():
    """THE LEARNING TEST (slow, about 10 s alone): 4 Pre-Norm blocks reach >= 99% token accuracy on
    fresh reversal problems, training in under a minute.

    It runs in a child process with one BLAS thread: for matrices this small, OpenBLAS's
    threads only add synchronisation, and on a busy 2-core machine they make a step ten times
    slower. The wall time measured is that of the training loop alone.
    """
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(Path(nc.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"reverse 8 tokens: {result['steps']} steps in {result['seconds']:.1f} s, "
          f"held-out token accuracy {result['accuracy']:.4f}")
    assert result["accuracy"] >= 0.99
    assert result["final_loss"] < 0.1 * result["first_loss"]
    assert result["seconds"] < 60, f"training took {result['seconds']:.1f} s, over the one-minute budget"


if __name__ == "__main__":  # the child process of the learning test
    seconds, accuracy, hist = train_reverse()
    print(json.dumps({"steps": len(hist["loss"]), "seconds": seconds, "accuracy": accuracy,
                      "first_loss": float(hist["loss"][:10].mean()),
                      "final_loss": float(hist["loss"][-10:].mean())}))


def test_readme_transformer_example_runs_in_a_few_steps():
    """The README's Transformer example, shortened to 3 steps, runs and returns its history."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = re.search(r"## The Transformer stack\n.*?```python\n(.*?)```", readme, flags=re.S).group(1)
    code = code.replace("steps=250", "steps=3").replace("batch_size=64)", "batch_size=4, progress=False)")
    namespace = {}
    exec(compile(code, "README Transformer example", "exec"), namespace)
    assert namespace["history"]["loss"].shape == (3,)
    assert namespace["history"]["block_grad_norm"].shape == (3, 4)
