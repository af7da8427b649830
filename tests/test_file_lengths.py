"""No source file a reader opens to learn something passes about 500 lines, unless its module
docstring says why it is one piece.

A long file is split by family (the torch bridge, the exercises, the claims' rows); the few that
stay long are listed here with the words of their docstring that give the reason, so that a file
growing past the limit fails this test until it is split or its docstring says why, and an entry
whose file has been split (or lost its reason) fails too.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 520  # "about 500 lines": a file may pass 500 by a screenful, not by a family

# path -> words of its module docstring that say why it is one piece
ONE_PIECE = {
    "normcore/fast/kernels.py": "One file of about 600 lines, on purpose",
    "normcore/nn/attention.py": "One file, though longer than most",
    "normcore/nn/transformer.py": "One file, though a little longer than most",
    "normcore/derivations/tape.py": "One file, though longer than most",
    "normcore/practice/catalog/norms.py": "One file, though longer than the others",
    "notebooks/src/batchnorm.py": "It is one piece, though long",
    "notebooks/src/batchnorm_in_practice.py": "It is one piece, though long",
    "notebooks/src/modern_norms.py": "It is one piece, though long",
    "notebooks/src/layernorm.py": "It is one piece, though long",
    "notebooks/src/interview_practice.py": "It is one piece, though long",
    "notebooks/src/pre_post_norm.py": "It is one piece, though long",
    "notebooks/src/rmsnorm.py": "It is one piece, though long",
}


def _sources():
    """Every hand-written Python source of the package and of the notebooks."""
    return sorted((ROOT / "normcore").rglob("*.py")) + sorted((ROOT / "notebooks" / "src").glob("*.py"))


def _lines(path):
    return len(path.read_text(encoding="utf-8").splitlines())


def _docstring(path):
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_long_file_says_why_it_is_one_piece(path):
    name = str(path.relative_to(ROOT))
    if _lines(path) <= LIMIT:
        return
    assert name in ONE_PIECE, (f"{name} has {_lines(path)} lines (more than {LIMIT}): split it by family, "
                               f"or say in its docstring why it is one piece and list it in ONE_PIECE")
    assert ONE_PIECE[name] in " ".join(_docstring(path).split()), f"{name}: its docstring no longer says why"


@pytest.mark.parametrize("name", sorted(ONE_PIECE))
def test_every_listed_file_is_still_long(name):
    """An entry whose file was split leaves the list, so the list stays the list of long files."""
    assert _lines(ROOT / name) > LIMIT, f"{name} is short now: remove it from ONE_PIECE"
