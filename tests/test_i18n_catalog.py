"""The catalog of mistakes in Chinese: every title, symptom, hint and pointer to where a mistake
is taught has its translation; the mistakes that come from the Chinese write-ups are named in
their terms; ``practice list --mistakes`` speaks Chinese within 80 display columns."""

import re

import pytest

from normcore import i18n
from normcore.cli import main
from normcore.notebooks import in_language
from normcore.i18n.width import WIDTH, display_width
from normcore.practice import CATALOG
from normcore.practice.catalog import BY_ID
from normcore.practice.catalog.base import Where
from normcore.practice.torch_track.mistakes import TORCH_ONLY

_ = i18n.translator("catalog")
ENTRIES = CATALOG + TORCH_ONLY
FIELDS = ("title", "symptom", "hint")
CJK = re.compile(r"[\u4e00-\u9fff]")
# names in code (running_var, x_hat, normalized_shape, self.running_mean): kept as they are
IDENTIFIER = re.compile(r"\b[A-Za-z]\w*_\w+\b")


def _squeeze(text):
    return "".join(text.split())


@pytest.mark.parametrize("field", FIELDS)
def test_every_field_of_every_mistake_has_its_chinese(field):
    i18n.set_language("zh")
    untranslated = [m.id for m in ENTRIES
                    if _(getattr(m, field)) == getattr(m, field) or not CJK.search(_(getattr(m, field)))]
    assert not untranslated, f"{field} not in Chinese: {untranslated}"


@pytest.mark.parametrize("field", FIELDS)
def test_the_chinese_keeps_the_names_in_code(field):
    i18n.set_language("zh")
    lost = [(m.id, name) for m in ENTRIES
            for name in IDENTIFIER.findall(getattr(m, field)) if name not in _(getattr(m, field))]
    assert not lost, lost


def test_english_is_the_catalog_itself():
    assert i18n.language() == "en"
    for m in ENTRIES:
        assert all(_(getattr(m, f)) == getattr(m, f) for f in FIELDS), m.id
        where = getattr(m, "learn", m.taught)  # a torch-only mistake says it in ``learn``
        assert isinstance(where, Where), m.id
        assert m.taught_in == where == where.message.format(name=where.name, part=where.part)


def test_where_it_is_taught_in_chinese_keeps_the_notebook_and_the_command():
    english = {m.id: m.taught_in for m in ENTRIES}
    i18n.set_language("zh")
    for m in ENTRIES:
        zh = m.taught_in
        assert CJK.search(zh) and zh != english[m.id], (m.id, zh)
        head = re.match(r"notebooks/(\w+)\.ipynb|normcore (?:practice solution|explain) \w+", english[m.id])
        assert head, m.id
        # a notebook is its Chinese edition where there is one (interview_practice_zh)
        where = f"notebooks/{in_language(head.group(1), 'zh')}.ipynb" if head.group(1) else head.group()
        assert zh.startswith(where), (m.id, zh)
        # the section's number stays, so that the reader finds the notebook's heading
        assert re.findall(r"\d+(?:\.\d+)?", english[m.id]) == re.findall(r"\d+(?:\.\d+)?", zh), m.id


def test_the_mistake_ids_are_not_messages():
    pytest.importorskip("babel", reason="reading the .po file needs Babel")
    from normcore.i18n.catalogs import read_po
    messages = {message.id for message in read_po("catalog") if message.id}
    assert not messages & set(BY_ID)
    assert {m.title for m in ENTRIES} <= messages  # and the titles are


# The mistakes in the four Chinese write-ups normcore was conceived from, and what a reader of
# them calls each: the title says it, the rest may add the write-ups' notation.
WRITE_UPS = {
    "bn-momentum-flipped": ("动量方向反了", ("移动", "EMA")),
    "bn-eval-squared-var": ("推理时方差被平方", ("推理阶段", "running_var**2")),
    "eps-outside-sqrt": ("eps 放在根号外", ("σ + eps", "RMS + eps")),
    "rms-batch-size-normaliser": ("RMS 用 batch 做分母", ("批次大小", "行数 b")),
    "rms-over-whole-tensor": ("整个矩阵的均方根", ("每个样本",)),
}


@pytest.mark.parametrize("mistake_id", WRITE_UPS)
def test_the_write_ups_mistakes_are_named_in_their_terms(mistake_id):
    title_says, text_says = WRITE_UPS[mistake_id]
    mistake = BY_ID[mistake_id]
    i18n.set_language("zh")
    title = _(mistake.title)
    text = " ".join(_(getattr(mistake, f)) for f in FIELDS)
    assert title.startswith(title_says) or title_says in title, title
    assert all(phrase in text for phrase in text_says), (mistake_id, text)


def test_practice_list_of_mistakes_in_chinese_fits_80_columns(capsys):
    assert main(["--lang", "zh", "practice", "list", "--mistakes"]) == 0
    out = capsys.readouterr().out
    too_wide = [line for line in out.splitlines() if display_width(line) > WIDTH]
    assert not too_wide, too_wide[:5]
    i18n.set_language("zh")
    flat = _squeeze(out)
    for m in ENTRIES:
        assert m.id in out
        variants = [m.variant_in(e) for e in m.variants if m.variant_in(e)]
        for v in variants:  # a published variant: listed apart, with its source
            assert _squeeze(_(v.name)) in flat and _squeeze(_(v.source)) in flat, m.id
        if len(variants) == len(m.variants):  # a variant in every exercise it applies to
            continue
        assert _squeeze(_(m.title)) in flat, m.id
        assert _squeeze(_(m.symptom)) in flat, m.id
        assert _squeeze(m.symptom) not in flat, m.id  # no English falls through
