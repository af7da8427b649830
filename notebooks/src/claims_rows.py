"""The record of one row of the claims notebook (claims.py), and how the rows are gathered.

A row is a write-up's claim about normalization, restated in normcore's words: which write-ups
make it, its verdict and why, the same in Chinese with the heading of the passage it judges in
each write-up (``zh``), and the practice catalog's mistake or the experiment's figure it names.
The rows live by topic in ``claims_data_TOPIC.py`` (``ROWS``, a list of ``claim(...)``); the
code cell that measures a row lives in ``claims_measure_TOPIC.py`` (``EVIDENCE``, keyed by the
row's id); ``gather`` joins the two, and the setup cell every measure runs after is
claims_measure_setup.py's.

How to add a row:

1. Add ``claim(...)`` to the ``ROWS`` of the topic it belongs to, where it should stand in the
   notebook (rows are numbered in order; a topic's rows stand together under its heading). A new
   topic is a new pair of files, named in ``claims.PARTS`` in the notebook's order, and its
   heading's Chinese in ``claims.TOPICS_ZH`` unless it is a layer's name.
2. Give the Chinese, ``zh=zh(headings, title, text, why)``: the headings are the sections of the
   write-ups as ``writeup_claims.toml`` lists them, and that listing names the row's id under
   each claim it judges (tests/test_claims.py holds the two to each other).
3. Add its cell to the topic's ``EVIDENCE`` under the same id: code that prints the numbers the
   verdict rests on, and a check in tests/test_claims.py's ``CHECKS`` that asserts the verdict on
   them. What it prints goes through ``tr(...)``: ``python -m normcore.i18n update``, then the
   Chinese in normcore/i18n/locale/zh/LC_MESSAGES/notebooks.po.
4. Update README.md's table (``claims.readme_table()``) and its verdict counts, and rebuild the
   two notebooks after the merge (python notebooks/build.py claims claims_zh).
"""

import importlib

REPRODUCED = "reproduced here"
MECHANISM = "mechanism reproduced here"
NOT_AT_SCALE = "correct but not reproducible at this scale"
DISPUTED = "disputed"
UNSUPPORTED = "unsupported"
WRONG = "wrong"
VERDICTS = (REPRODUCED, MECHANISM, NOT_AT_SCALE, DISPUTED, UNSUPPORTED, WRONG)

# Headings of the write-ups that several rows cite.
W1_BN = "1. BatchNorm（BN）：跨样本同特征归一化"
W1_LN = "2. LayerNorm（LN）：同一样本跨特征归一化"
W1_RMS = "3. RMSNorm：LN 的简化版（无均值中心化）"
W1_PRE_POST = "Pre-Norm vs Post-Norm（Transformer 残差块中的 Norm 位置）"
W3_BN, W3_LN, W3_RMS = "3. Batch Normalization", "1. Layer Normalization", "2. RMS Normalization"
W3_DROPOUT, W3_POSITION = "4. Dropout", "5. Transformer中Normalization的位置"
W4_STATS = "全局移动平均和移动方差"


def claim(id, topic, sources, title, text, verdict, why, zh, catalog=None, figure=None):
    """One row. ``topic``: the notebook's heading it stands under; ``sources``: the write-ups that
    make the claim (W1 to W4); ``title``: the claim in a line; ``text``: the claim as the write-ups
    make it; ``why``: the reasons for the verdict; ``zh``: the Chinese (``zh(...)``); ``catalog``:
    the practice catalog's id(s) of the mistake it repeats, comma-separated; ``figure``: the name
    of a normcore experiment whose figure (figures/NAME.png) is shown under the verdict."""
    if verdict not in VERDICTS:
        raise ValueError(f"claims row {id!r}: the verdict {verdict!r} is none of {VERDICTS}")
    return dict(id=id, topic=topic, sources=sources, title=title, text=text, verdict=verdict,
                why=why, catalog=catalog, figure=figure, zh=zh)


def zh(headings, title, text, why):
    """A claim in Chinese. ``headings``: for each write-up the claim cites, the heading of the
    passage it judges, as the write-up writes it (a locator: the heading only, never the text):
    'section › subsection' where a subsection's name recurs, a tuple for several passages, None
    (alone or in the tuple) for the write-up's opening, before its first heading. Then the title,
    the claim as the write-ups make it, and the reasons for the verdict."""
    return dict(headings=headings, title=title, text=text, why=why)


def gather(parts):
    """Every row of ``claims_data_PART.py`` for each part in order, each with its ``evidence``:
    the cell ``claims_measure_PART.py`` keeps under the row's id. Raises ValueError on a row
    without a cell, a cell without a row, or an id used twice."""
    rows = []
    for part in parts:
        data = importlib.import_module(f"claims_data_{part}")
        cells = importlib.import_module(f"claims_measure_{part}").EVIDENCE
        ids = [row["id"] for row in data.ROWS]
        if set(ids) != set(cells):
            raise ValueError(f"claims_data_{part}.py and claims_measure_{part}.py differ: rows "
                             f"without a cell {sorted(set(ids) - set(cells))}, cells without a "
                             f"row {sorted(set(cells) - set(ids))}")
        rows += [dict(row, evidence=cells[row["id"]]) for row in data.ROWS]
    ids = [row["id"] for row in rows]
    if len(set(ids)) != len(ids):
        raise ValueError(f"claims rows with the same id: {sorted({i for i in ids if ids.count(i) > 1})}")
    return rows
