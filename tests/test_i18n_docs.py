"""normcore's documents in Chinese: the site's Chinese section (its glossary and practice catalog
generated, its pages linked with the English ones both ways), the Chinese notebooks (built from
the English sources, their prose Chinese, each claim pointing to the write-up's heading) and the
README's Chinese introduction."""

import importlib.util
import os
import re
import tomllib
from pathlib import Path

import nbformat
import pytest

from normcore import i18n
from normcore.docs import generate
from normcore.i18n.glossary import terms
from normcore.i18n.width import display_width

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "normcore" / "docs" / "pages"
ZH_PAGES = ("index", "reading_order", "practice")      # written by hand
ZH_GENERATED = ("glossary", "practice_catalog", "questions", "references")  # written at build time


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = _load("notebook_build_i18n", ROOT / "notebooks" / "build.py")
# every notebook built in Chinese; the Chinese section of the site lists each
ZH_BUILT = tuple(t for t in build.TOPICS if build.source_and_language(t)[1] == "zh")
CJK = re.compile(r"[\u4e00-\u9fff]")


# --- the site's Chinese section ---------------------------------------------------------------
def _rows(page):
    r"""The cells of each table row, split at the pipes the page does not escape (a cell's own
    ``\|``, as in ||v||, stays in its cell)."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
            for line in page.splitlines() if line.startswith("| ")]


def test_the_glossary_page_lists_every_term_of_the_glossary():
    rows = _rows(generate.glossary_page())
    assert rows[0] == ["English", "中文", "d2l", "说明"]
    unescape = lambda cell: re.sub(r"\\(.)", r"\1", cell)  # noqa: E731
    listed = [[unescape(c) for c in row] for row in rows[1:]]
    assert len(listed) == len(terms())
    for row, term in zip(listed, terms()):
        assert row == [term.en, term.zh, term.d2l, " ".join(term.note_zh.split())], term.en
    assert any(t.d2l for t in terms()), "no term says where d2l differs"


def test_the_chinese_practice_catalog_is_the_catalog_translated():
    from normcore.practice import CATALOG, EXERCISES

    zh = generate.practice_catalog("zh")
    assert i18n.language() == "en", "the page leaves the language as it found it"
    assert zh.startswith("# 练习题目录") and zh != generate.practice_catalog("en")
    for name in EXERCISES:
        assert f"`{name}`" in zh
    _ = i18n.translator("catalog")
    with i18n.speaking("zh"):
        titles = [generate._cell(_(m.title)) for m in CATALOG]
    for mistake, title in zip(CATALOG, titles):
        assert f"### `{mistake.id}`" in zh and f"**{title}**" in zh, mistake.id
    # a notebook the catalog points to is one folder up from the Chinese section
    assert "](en:notebooks/" in zh and "- 讲解位置：" in zh and ": " not in zh.split("## 已收录")[1]


def test_every_note_of_the_glossary_has_its_chinese_for_the_chinese_page():
    for term in terms():
        assert bool(term.note) == bool(term.note_zh), f"{term.en}: note and note_zh go together"
        assert not term.note_zh or CJK.search(term.note_zh), term.en


def test_the_chinese_catalog_pages_task_column_is_chinese():
    """The tasks are the "practice" domain's messages, the mistakes the "catalog" domain's:
    each column of the Chinese page is translated by its own catalog."""
    from normcore.practice.exercises import path

    rows = [r for r in _rows(generate.practice_catalog("zh")) if len(r) == 4 and r[0].isdigit()]
    english = [r for r in _rows(generate.practice_catalog("en")) if len(r) == 4 and r[0].isdigit()]
    assert len(rows) == len(english) == len(path())
    for (_step, name, level, task), (*_, task_en) in zip(rows, english):
        assert task != task_en, f"{name}: its task is not translated: {task}"
        assert CJK.search(level), level


def test_links_to_the_other_section_become_its_pages():
    from normcore.docs.build import other_section_links

    zh = other_section_links("[a](../notebooks/dropout.ipynb) [b](../notebooks/claims_zh.ipynb#x) "
                             "[c](../api/nn.rst) [d](practice.md) [e](../figures.md#y)", "zh")
    assert zh == ("[a](en:notebooks/dropout.html) [b](notebooks/claims_zh.ipynb#x) "
                  "[c](en:api/nn.html) [d](practice.md) [e](en:figures.html#y)")
    en = other_section_links("[z](zh/index.md) [r](reading_order.md) [n](notebooks/x.ipynb)", "en")
    assert en == "[z](zh:index.html) [r](reading_order.md) [n](notebooks/x.ipynb)"


def test_the_chinese_catalog_links_a_chinese_notebook_where_there_is_one():
    assert generate._taught_in("notebooks/layernorm_zh.ipynb, §2", "zh") == (
        "[notebooks/layernorm\\_zh.ipynb](notebooks/layernorm_zh.ipynb), §2")
    assert generate._taught_in("notebooks/dropout.ipynb", "zh") == (
        "[notebooks/dropout.ipynb](en:notebooks/dropout.html)")
    assert generate._taught_in("notebooks/dropout.ipynb", "en") == (
        "[notebooks/dropout.ipynb](notebooks/dropout.ipynb)")
    with i18n.speaking("zh"):  # the catalog's pointers name the Chinese edition themselves
        page = generate.practice_catalog("zh")
    assert "](notebooks/interview_practice_zh.ipynb)" in page


def test_speaking_a_language_for_a_while_gives_back_the_choice_it_found(monkeypatch):
    monkeypatch.setenv("NORMCORE_LANG", "en")
    i18n.set_language(None)                      # the environment's choice
    with i18n.speaking("zh"):
        assert i18n.language() == "zh"
    monkeypatch.setenv("NORMCORE_LANG", "zh")
    assert i18n.language() == "zh", "the environment chooses again, as before the block"
    i18n.set_language("en")
    with pytest.raises(RuntimeError), i18n.speaking("zh"):
        raise RuntimeError("an error inside the block")
    assert i18n.language() == "en"


def test_the_chinese_pages_exist_and_are_linked_both_ways():
    for page in ZH_PAGES:
        assert (PAGES / "zh" / f"{page}.md").is_file(), page
    english = (PAGES / "index.md").read_text(encoding="utf-8")
    assert "](zh/index.md)" in english.split("\n\n", 3)[2], "the English index's first lines"
    chinese = (PAGES / "zh" / "index.md").read_text(encoding="utf-8")
    assert "](../index.md)" in chinese
    toctree = re.search(r"```\{toctree\}\n(.*?)```", chinese, flags=re.S).group(1).split()
    for page in ZH_PAGES[1:] + ZH_GENERATED:
        assert page in toctree, page
    for nb in ZH_BUILT:
        assert f"notebooks/{nb}" in toctree, nb
    for page in ZH_PAGES:
        text = (PAGES / "zh" / f"{page}.md").read_text(encoding="utf-8")
        assert CJK.search(text.split("\n", 1)[0]), f"zh/{page}.md: its title is not Chinese"


def test_the_package_ships_the_chinese_pages():
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    data = [p.strip() for p in cfg["options.package_data"]["normcore.docs"].split(",")]
    assert "pages/zh/*.md" in data


def test_chinese_code_blocks_fit_the_content_column():
    wide = []
    for page in sorted((PAGES / "zh").glob("*.md")):
        blocks = re.findall(r"^```[^\n]*\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        wide += [f"{page.name}: {line}" for block in blocks for line in block.splitlines()
                 if display_width(line) > 70]
    assert not wide, wide


# --- the README -------------------------------------------------------------------------------
def test_the_readme_links_its_chinese_introduction_in_its_first_lines():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    top = "\n".join(readme.splitlines()[:6])
    assert "](#中文简介)" in top
    section = readme.split("\n## 中文简介\n", 1)[1].split("\n## ", 1)[0]
    for command in ("--lang zh", "normcore practice new", "normcore practice check", "explain"):
        assert command in section, command
    for target in re.findall(r"\]\(([^)#]+)\)", top + section):
        assert (ROOT / target).exists(), target


# --- the Chinese notebooks --------------------------------------------------------------------
@pytest.mark.parametrize("topic", ZH_BUILT)
def test_a_chinese_notebook_is_built_from_its_english_source(topic):
    source, lang = build.source_and_language(topic)
    assert lang == "zh" and source in build.TOPICS and topic in build.TOPICS
    chinese, english = build.cells(topic), build.cells(source)
    assert [c.cell_type for c in chinese] == [c.cell_type for c in english]
    assert [c.source for c in chinese if c.cell_type == "code"] == \
        [c.source for c in english if c.cell_type == "code"], "the code cells are shared"
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    assert nb.metadata["normcore"]["language"] == "zh"  # its kernel speaks Chinese


def test_a_markdown_cell_without_its_chinese_text_stops_the_build(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    both = "md('# Title', zh='# 标题'), question('Why?', 'So.', zh=('为何？', '因此。'))"
    (src / "demo.py").write_text(f"from build import md, question\nCELLS = [{both}, md('Only English.')]\n")
    monkeypatch.setattr(build, "SOURCES", src)
    english = build.cells("demo")
    assert [c.source.split("\n")[0] for c in english[:2]] == ["# Title", "**Inline question 1.** Why?"]
    assert all("translations" not in c.metadata for c in english)
    with pytest.raises(ValueError, match="no zh text for demo_zh: 'Only English.'"):
        build.cells("demo_zh")
    (src / "demo.py").write_text(f"from build import md, question\nCELLS = [{both}]\n")
    title, asked = build.cells("demo_zh")
    assert title.source == "# 标题"
    assert asked.source.startswith("**随堂问题 1.** 为何？") and "<summary>答案</summary>" in asked.source


def test_the_notebooks_of_rmsnorm_and_pre_post_norm_are_built_in_chinese_and_print_chinese():
    assert {"rmsnorm_zh", "pre_post_norm_zh"} <= set(ZH_BUILT)
    for topic in ("rmsnorm_zh", "pre_post_norm_zh"):
        assert _prints_in_its_language(topic), topic  # what their cells print goes through tr()


# What a Chinese cell may keep in English: code, formulas, links' targets, HTML tags, and the
# step-through's node tables (generated by normcore.derivations and translated with its
# messages, the explain domain, which tests/test_i18n.py checks).
KEPT = [re.compile(p, flags=re.S | re.M) for p in (
    r"^\| # \|.*?(?=\n\n|\Z)", r"```.*?```", r"`[^`]*`", r"\$\$.*?\$\$", r"\$[^$]*\$",
    r"\]\([^)]*\)", r"<[^>]+>", r"\b\w+\([^()]*\)")]  # the last: a call, f(a, b), is code
ENGLISH = re.compile(r"[A-Za-z][a-z]+(?:[\s,;:.()-]+[A-Za-z][a-z]+){3,}")  # four words in a row


def english_paragraphs(markdown):
    """The paragraphs (and table rows) of ``markdown`` that are English prose: four English
    words in a row and no Chinese, once code, formulas and link targets are taken out."""
    text = markdown
    for pattern in KEPT:
        text = pattern.sub(" ", text)
    pieces = [p for block in text.split("\n\n") for p in
              (block.splitlines() if block.lstrip().startswith("|") else [block])]
    return [p.strip() for p in pieces if ENGLISH.search(p) and not CJK.search(p)]


def test_the_english_detector_finds_english_and_spares_code_and_formulas():
    assert english_paragraphs("This paragraph was never translated.\n\n中文段落。")
    assert not english_paragraphs("用 `np.sqrt(var + self.eps)` 计算，$\\hat{x} = (x - \\mu)\\,r$。")
    assert not english_paragraphs("```python\nprint('hello there my friend')\n```\n\n## LayerNorm")
    assert english_paragraphs("| 练习 | 题目 |\n|---|---|\n| left in English as it was |")
    assert not english_paragraphs("fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps) ->")


@pytest.mark.parametrize("topic", ZH_BUILT)
def test_the_chinese_notebooks_prose_is_chinese(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    english = [p for c in nb.cells if c.cell_type == "markdown" for p in english_paragraphs(c.source)]
    assert not english, english


def english_output_lines(nb):
    """The lines the code cells of ``nb`` printed that are English prose (as in
    english_paragraphs)."""
    printed = [line for c in nb.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "stream" for line in o.text.splitlines()]
    return [line for line in printed if english_paragraphs(line)]


def _prints_in_its_language(topic):
    """Whether the notebook's code cells print through the notebooks message domain."""
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    return 'translator("notebooks")' in next(c.source for c in nb.cells if c.cell_type == "code")


ZH_PRINTING = tuple(t for t in ZH_BUILT if _prints_in_its_language(t))


def test_the_chinese_notebooks_of_the_write_ups_subjects_print_in_chinese():
    assert {"batchnorm_zh", "layernorm_zh"} <= set(ZH_PRINTING)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(x)")])
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text=(
        "column means after BatchNorm: [0. 0. 0.]\nBatchNorm 之后各列的均值： [0. 0. 0.]\n"
        "模块                         张量           形状               相对误差  结果\n"))]
    assert english_output_lines(nb) == ["column means after BatchNorm: [0. 0. 0.]"]


def test_a_gradcheck_report_prints_its_table_in_the_language_in_use():
    import numpy as np

    import normcore as nc

    x = np.random.default_rng(0).standard_normal((3, 4))
    with i18n.speaking("zh"):
        zh = str(nc.gradcheck(nc.LayerNorm(4), x))
    en = str(nc.gradcheck(nc.LayerNorm(4), x))
    assert en.split("\n")[0].split() == ["module", "tensor", "shape", "rel", "error", "result"]
    assert zh.split("\n")[0].split() == ["模块", "张量", "形状", "相对误差", "结果"]
    assert all(line.endswith("通过") for line in zh.split("\n")[1:])
    assert [line.split()[2:4] for line in zh.split("\n")[1:]] == [
        line.split()[2:4] for line in en.split("\n")[1:]]  # the same numbers


@pytest.mark.parametrize("topic", ZH_PRINTING)
def test_what_a_chinese_notebook_prints_is_chinese(topic):
    nb = nbformat.read(ROOT / "notebooks" / f"{topic}.ipynb", as_version=4)
    english = english_output_lines(nb)
    assert not english, english


def _claims():
    import sys

    folders = [str(ROOT / "notebooks"), str(ROOT / "notebooks" / "src")]  # build.py, the rows' modules
    sys.path[:0] = folders
    try:
        return _load("claims_source_i18n", ROOT / "notebooks" / "src" / "claims.py")
    finally:
        for folder in folders:
            sys.path.remove(folder)


def test_each_claim_in_chinese_names_a_heading_for_each_write_up_it_cites():
    claims = _claims()
    for c in claims.CLAIMS:
        z = c["zh"]
        assert list(z["headings"]) == c["sources"], c["id"]
        assert CJK.search(z["title"]) and CJK.search(z["text"]) and CJK.search(z["why"]), c["id"]
    nb = nbformat.read(ROOT / "notebooks" / "claims_zh.ipynb", as_version=4)
    shown = [cell.source for cell in nb.cells if cell.source.startswith("### ")]
    assert len(shown) == len(claims.CLAIMS)
    for text, c in zip(shown, claims.CLAIMS):
        assert f"**原文位置**：{claims.locators(c['zh']['headings'])}" in text, c["id"]


# The write-ups are not part of normcore; where a copy is at hand (NORMCORE_WRITEUPS, a folder
# of the four as text, W1 to W4 in the order of their file names), every heading is looked up.
WRITEUPS = Path(os.environ.get("NORMCORE_WRITEUPS", "/work/shared/seeds"))


def _headings(path):
    """The headings of a write-up: its Markdown headings or, in the one written without markup,
    its short unindented lines that end without punctuation (its headings stand on lines of
    their own; its text is indented, long, or a sentence leading into what follows)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = {line.strip().lstrip("#").strip().strip("*").strip() for line in lines
             if line.strip().startswith("#")}
    if not found:
        found = {line.strip() for line in lines if 0 < len(line) <= 40 and not line[0].isspace()
                 and not line.rstrip().endswith((":", "：", "。", ",", "，"))}
    return found


@pytest.mark.skipif(not WRITEUPS.is_dir(), reason=f"the write-ups are not at {WRITEUPS} (NORMCORE_WRITEUPS)")
def test_each_heading_a_claim_names_occurs_in_its_write_up():
    claims = _claims()
    files = sorted(WRITEUPS.glob("*.txt"))
    assert len(files) == len(claims.WRITEUPS)
    headings = {w: _headings(f) for w, f in zip(claims.WRITEUPS, files)}
    missing = []
    for c in claims.CLAIMS:
        for source, where in c["zh"]["headings"].items():
            for heading in where if isinstance(where, tuple) else (where,):
                if heading is None:
                    continue  # the write-up's opening, before its first heading
                missing += [(c["id"], source, part) for part in heading.split(" › ")
                            if part not in headings[source]]
    # and every section of the listing of the write-ups' claims ("" is a write-up's opening)
    listing = tomllib.loads((ROOT / "notebooks" / "src" / "writeup_claims.toml").read_text(encoding="utf-8"))
    for source, sections in listing.items():
        missing += [("writeup_claims.toml", source, part) for section in sections if section["section"]
                    for part in section["section"].split(" › ") if part not in headings[source]]
    assert not missing, missing


def test_a_chinese_paragraph_has_no_line_break_between_two_chinese_characters():
    """In HTML a line break inside a paragraph is a space: between two Chinese characters, a gap."""
    from normcore.i18n.width import join_wide_lines

    text = "第一行，\n第二行\n`code`\n- 列表\n\n```\n代码，\n不动\n```\n下一段"
    assert join_wide_lines(text) == "第一行，第二行\n`code`\n- 列表\n\n```\n代码，\n不动\n```\n下一段"
    wide_break = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]\n[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
    for topic in [t for t in build.TOPICS if build.source_and_language(t)[1] == "zh"]:
        for cell in build.cells(topic):
            if cell.cell_type == "markdown":
                assert not wide_break.search(cell.source.split("```")[0]), (topic, cell.source[:60])
