"""Pointing a reader at the notebook in their language (normcore.notebooks): the Chinese edition
NAME_zh where notebooks/ holds it or notebooks/build.py builds it, the English notebook where
there is none; the practice messages, the mistakes catalog and the tour point there."""

import json
from pathlib import Path

import pytest

from normcore import i18n, notebooks
from normcore.practice import CATALOG

ROOT = Path(__file__).resolve().parents[1]


def _notebook(folder, name, title):
    cell = {"cell_type": "markdown", "metadata": {}, "source": [f"# {title}\n", "text"]}
    (folder / f"{name}.ipynb").write_text(json.dumps({"cells": [cell]}), encoding="utf-8")


@pytest.fixture
def folder(tmp_path):
    """A notebooks/ folder: batchnorm and dropout in English, claims in both languages, and a
    build.py that builds batchnorm_zh (not built yet)."""
    _notebook(tmp_path, "batchnorm", "BatchNorm, one node at a time")
    _notebook(tmp_path, "dropout", "Dropout: a random mask, and the scale that keeps the expectation")
    _notebook(tmp_path, "claims", "Four write-ups' claims on normalization, tested")
    _notebook(tmp_path, "claims_zh", "四篇文章的论断")
    (tmp_path / "build.py").write_text('import nbformat\nTOPICS = ["batchnorm", "dropout", "claims",\n'
                                       '          "claims_zh", "batchnorm_zh"]\n', encoding="utf-8")
    return tmp_path


def test_a_notebook_is_its_chinese_edition_where_there_is_one(folder):
    assert notebooks.in_language("claims", "zh", folder) == "claims_zh"  # held in the folder
    assert notebooks.in_language("batchnorm.ipynb", "zh", folder) == "batchnorm_zh.ipynb"  # built by build.py
    assert notebooks.in_language("dropout", "zh", folder) == "dropout"  # none: the English one
    assert notebooks.in_language("claims", "en", folder) == "claims"
    assert notebooks.in_language("claims_zh", "zh", folder) == "claims_zh"
    assert notebooks.in_language("claims", "zh", folder / "missing") == "claims"  # no notebooks/ at all


def test_the_chinese_listing_names_each_notebook_once_and_marks_the_english_ones(folder):
    with i18n.speaking("zh"):
        listed = dict(notebooks.listing("zh", folder))
    assert set(listed) == {"batchnorm_zh.ipynb", "claims_zh.ipynb", "dropout.ipynb"}
    assert listed["claims_zh.ipynb"] == "四篇文章的论断"  # the edition's own heading
    assert listed["dropout.ipynb"] == "Dropout：随机掩码，以及保持期望不变的缩放（英文）"
    assert listed["batchnorm_zh.ipynb"] == "BatchNorm，逐个节点推导"  # not built yet: its title translated
    english = dict(notebooks.listing("en", folder))
    assert set(english) == {"batchnorm.ipynb", "dropout.ipynb", "claims.ipynb", "claims_zh.ipynb"}


def test_the_titles_are_the_notebooks_own_headings():
    for name, title in notebooks.TITLES.items():
        path = ROOT / "notebooks" / f"{name}.ipynb"
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = next(c for c in cells if c["cell_type"] == "markdown")
        assert "".join(first["source"]).splitlines()[0] == f"# {title}", name
    english = {p.stem for p in (ROOT / "notebooks").glob("*.ipynb") if not p.stem.endswith("_zh")}
    assert english == set(notebooks.TITLES)


def test_practice_points_a_chinese_reader_at_the_chinese_notebook():
    assert "interview_practice_zh" in notebooks.available()
    with i18n.speaking("zh"):
        taught = [str(m.taught_in) for m in CATALOG]
    assert any("notebooks/interview_practice_zh.ipynb" in t for t in taught)
    assert not any("notebooks/interview_practice.ipynb" in t for t in taught)
    with i18n.speaking("en"):
        assert any("notebooks/interview_practice.ipynb" in str(m.taught_in) for m in CATALOG)


def test_a_failing_report_sends_a_chinese_reader_to_the_chinese_notebook():
    from normcore.practice.report import _teaching
    with i18n.speaking("zh"):
        assert "notebooks/interview_practice_zh.ipynb 第 9.1 节" in _teaching("softmax", True)
    with i18n.speaking("en"):
        assert "notebooks/interview_practice.ipynb, section 9.1" in _teaching("softmax", True)
