"""Every test starts in English whatever the machine's locale: tests that want Chinese ask for
it (``normcore --lang zh``, ``set_language("zh")`` or ``NORMCORE_LANG=zh`` for a subprocess)."""

import os

import pytest

from normcore import i18n

for _name in ("NORMCORE_LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE"):
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"


@pytest.fixture(autouse=True)
def _language_from_environment():
    i18n.set_language(None)
    yield
    i18n.set_language(None)


# The longest test files first (their time in a run on 2 cores, longest first). With
# ``--dist loadfile`` a file runs whole on one worker, in the order collected; a long file
# collected last (test_torch_samples, test_types) kept one worker busy while the other idled.
LONGEST_FIRST = (
    "test_torch_samples.py", "test_experiments_warmup.py", "test_docs.py", "test_practice.py",
    "test_seq2seq.py", "test_practice_real.py", "test_practice_consistent.py", "test_notebooks.py",
    "test_experiments_dyt_training.py", "test_experiments_sync_batchnorm.py",
    "test_experiments_layernorm_tanh.py", "test_experiments_rmsnorm_vs_layernorm.py",
    "test_experiments_qk_norm.py", "test_differential_torch.py", "test_nn_transformer.py",
    "test_derivations.py", "test_nn_layers.py", "test_types.py", "test_qk_norm_peri.py",
    "test_experiments_peri_ln.py", "test_practice_torch.py", "test_tasks_train.py",
)


def pytest_collection_modifyitems(items):
    """Run the longest files first; the others after them in their usual order, and the tests
    of each file in theirs (the sort is stable)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
