"""normcore's one bibliography: every citation of the material (README, notebooks' sources in
English and Chinese, docs pages, the practice catalog and its Chinese, docstrings) resolves to
an entry of ``normcore/bibliography.toml``, every model and codebase the material names has
one, and every entry is cited somewhere and says where to find the work."""

import re
from pathlib import Path

import pytest

from normcore import bibliography

ROOT = Path(__file__).resolve().parents[1]


def material():
    """Every file of normcore's material: what a reader reads and what a lecturer projects."""
    package = ROOT / "normcore"
    return [ROOT / "README.md", *sorted((ROOT / "notebooks" / "src").glob("*.py")),
            *sorted((package / "docs" / "pages").rglob("*.md")),
            *sorted(p for p in package.rglob("*.py") if p.name != "bibliography.py"),
            *sorted((package / "i18n" / "locale").rglob("*.po")),
            package / "i18n" / "glossary.toml"]


def unresolved(text):
    """(line, citation) of each citation in ``text`` that names no single entry."""
    return [(text.count("\n", 0, c.start) + 1, c.text) for c in bibliography.citations(text)
            if c.entry is None]


# The models and codebases the material names: each must have an entry (its alias).
NAMES = ["LLaMA", "Llama", "PaLM", "T5", "BERT", "GPT-2", "GPT-3", "GPT-4", "ViT", "ViT-22B", "DiT",
         "wav2vec 2.0", "Swin v2", "ResNet", "ConvNeXt", "Mamba", "Gemma", "Gemma 2", "Gemma 3",
         "Qwen3", "OLMo 2", "CogView", "DeepNorm", "DeepNet", "Admin", "Fixup", "SkipInit", "NFNet",
         "nanoGPT", "minGPT", "llm.c", "picoGPT", "makemore", "numpy-ml", "CS231n", "d2l", "timm",
         "x-transformers", "ncnn", "PVANet", "Pelee", "Liger-Kernel", "Hugging Face",
         "Annotated Transformer", "Deep Learning from Scratch", "PyTorch", "torch.nn.SyncBatchNorm",
         "Keras", "TensorFlow", "Flax"]


@pytest.fixture(scope="module")
def texts():
    return {path.relative_to(ROOT).as_posix(): bibliography.read_text(path) for path in material()}


def test_every_citation_of_the_material_resolves_to_one_entry(texts):
    missing = [f"{name}:{line}: {cited!r}" for name, text in texts.items()
               for line, cited in unresolved(text)]
    assert not missing, "citations with no entry in normcore/bibliography.toml (or more than one):\n" + \
        "\n".join(missing)


def test_the_material_is_scanned_in_both_languages(texts):
    assert any(name.endswith(".po") for name in texts) and "README.md" in texts
    claims = "".join(text for name, text in texts.items() if name.startswith("notebooks/src/claims_data_"))
    cited = {c.text for c in bibliography.citations(claims)}
    assert "Xiong et al. (2020" in cited and "Xiong 等（2020" in cited, "English and Chinese forms"


@pytest.mark.parametrize("text", [
    "as Someone et al. 2027 show", "Someone et al. (2027) show", "(Someone, 2027)",
    "(Someone et al., 2027)", "Someone & Other 2027", "Someone and Other, 2027",
    "Someone 等人（2027）", "Someone 等（2027）", "Someone 和 Other 2027", "Someone、Other 和 Third 2027",
    "arXiv:2701.00001", "https://arxiv.org/abs/2701.00001",
    "Someone et al. find",         # no year, and no entry by Someone
    "Xiong et al. 2021",           # a known author, another year
    "Zhang 2019",                  # three entries fit: the citation must say which
])
def test_a_citation_without_its_entry_fails(text):
    assert unresolved(f"Some sentence of the material: {text}, and more."), text


def test_a_new_citation_in_a_notebook_fails_the_material_test(texts):
    source = texts["notebooks/src/modern_norms.py"] + '\nmd("As Someone et al. 2027 found.")\n'
    assert unresolved(source) == [(source.count("\n"), "Someone et al. 2027")]


@pytest.mark.parametrize("text, key", [
    ("Xiong et al. 2020", "xiong2020layer"), ("Xiong et al. (2020)", "xiong2020layer"),
    ("(Xiong et al., 2020)", "xiong2020layer"), ("Xiong 等人（2020）", "xiong2020layer"),
    ("Zhang & Sennrich 2019", "zhang2019rmsnorm"), ("Zhang and Sennrich, 2019", "zhang2019rmsnorm"),
    ("Zhang 和 Sennrich（2019）", "zhang2019rmsnorm"), ("Zhang, Dauphin & Ma 2019", "zhang2019fixup"),
    ("Zhang et al. 2019", "zhang2019three"),
    ("Zhu, Chen, He, LeCun and Liu, 2025", "zhu2025dyt"), ("Zhu et al., CVPR 2025", "zhu2025dyt"),
    ("arXiv:2503.10622", "zhu2025dyt"), ("arxiv.org/abs/2503.10622", "zhu2025dyt"),
    ("the DyT paper", "zhu2025dyt"), ("Transformers without Normalization", "zhu2025dyt"),
    ("Henry et al. 2020", "henry2020qknorm"), ("Ding et al. 2021", "ding2021cogview"),
    ("Team OLMo, 2 OLMo 2 Furious, 2024", "olmo2_2024"), ("van Laarhoven 2017", "vanlaarhoven2017l2"),
    ("ViT-22B", "dehghani2023vit22b"), ("ViT", "dosovitskiy2021vit"), ("Gemma 3", "gemma3_2025"),
])
def test_each_form_of_citation_resolves(text, key):
    assert bibliography.resolve(text).key == key


def test_name_et_al_without_a_year_is_the_entry_cited_last_under_that_name():
    assert bibliography.resolve("as Zhu et al. plot").key == "zhu2025dyt"  # one entry by Zhu
    text = "Liu et al. (2020) argue so; Liu et al. also observe it."
    assert [c.entry.key for c in bibliography.citations(text)] == ["liu2020admin", "liu2020admin"]
    assert unresolved("Liu et al. observe it.") == [(1, "Liu et al.")]  # three entries by a Liu
    assert unresolved("Liu et al. 2022") == [(1, "Liu et al. 2022")]    # Swin V2 or ConvNeXt?


@pytest.mark.parametrize("text", ["Since 2020", "in 2017", "CVPR 2025", "NeurIPS 2019", "seed 2020",
                                  "Layer Normalization"])
def test_a_year_or_a_phrase_is_not_a_citation(text):
    assert bibliography.citations(f"Words. {text}: more words.") == []


def test_every_model_and_codebase_the_material_names_has_an_entry(texts):
    everything = "\n".join(texts.values())
    for name in NAMES:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w]|-\w)", everything), \
            f"{name} is not named in the material: take it off NAMES"
        assert bibliography.resolve(name), name


def test_every_entry_is_cited_somewhere(texts):
    cited = {e.key for text in texts.values() for e in bibliography.cited_in(text)}
    dead = [e.key for e in bibliography.entries() if e.key not in cited]
    assert not dead, f"entries no text of the material cites: {dead}"


def test_every_entry_says_where_to_find_the_work():
    for e in bibliography.entries():
        assert e.arxiv or e.url, e.key
        if e.arxiv:
            assert re.fullmatch(r"\d{4}\.\d{4,5}", e.arxiv), e.key
        if e.url:
            assert e.url.startswith(("https://", "http://")), e.key
        assert e.kind != "code" or e.url, f"{e.key}: a codebase needs its repository's URL"
        assert e.files == () or e.url, f"{e.key}: files without the repository they are in"
        assert 1900 < e.year < 2100 and e.authors and e.title and e.venue and e.supports, e.key


def test_a_citation_shared_by_two_entries_is_an_error(monkeypatch):
    twin = bibliography.entry("xiong2020layer")
    monkeypatch.setattr(bibliography, "entries", lambda: (twin, twin))
    assert bibliography.citations("Xiong et al. 2020")[0].entry is None
    with pytest.raises(LookupError, match="no single bibliography entry"):
        bibliography.resolve("Xiong et al. 2020")


def test_an_entry_without_arxiv_or_url_is_refused():
    table = dict(key="x", kind="paper", authors=["A B"], year=2020, title="T", venue="V", supports="S")
    with pytest.raises(ValueError, match="neither an arxiv id nor a url"):
        bibliography._entry(table)
    with pytest.raises(ValueError, match="kind 'book'"):
        bibliography._entry(dict(table, kind="book", url="https://example.org"))


def test_the_list_renders_in_english_and_chinese():
    en, zh = bibliography.markdown(), bibliography.markdown(lang="zh")
    assert en.startswith("# References") and "## Papers" in en and "## Codebases" in en
    assert zh.startswith("# 参考文献") and "## 论文" in zh and "## 代码库" in zh
    for e in bibliography.entries():
        assert e.link in en and e.link in zh, e.key
    with pytest.raises(ValueError, match="lang must be one of"):
        bibliography.markdown(lang="fr")


def test_a_notebook_lists_what_it_cites():
    text = bibliography.notebook_references(ROOT / "notebooks" / "src" / "modern_norms.py")
    assert text.startswith("## References")
    assert "arxiv.org/abs/2503.10622" in text and "arxiv.org/abs/1502.03167" not in text
