"""The generated pages of the site: the API reference, the derivations, the practice catalog
(in English and in Chinese), the glossary (术语表), the references (in English and in Chinese),
the figures.

Each is written from the code at build time (never copied by hand), so it cannot fall behind:
the API pages from each public module's ``__all__`` (or, without one, the public functions and
classes it defines), a page per step-through from its tape (``normcore.derivations``), the
catalog from ``normcore.practice.CATALOG`` and ``EXERCISES``, the glossary from
``normcore/i18n/glossary.toml``, the references from ``normcore/bibliography.toml``, the figures
page from ``normcore.experiments`` and the PNGs in ``figures/``.
"""

import importlib
import inspect
import pathlib
import re

from ..i18n import N_, translator

_ = translator("cli")  # the generated pages' own words; docs/ is the "cli" domain's

# The API reference, one page per part, in reading order: (page, title, intro, modules).
# Each public object is documented once, under the first module here that exports it.
API = [
    ("stack", "The stack: Parameter, Module, Sequential",
     "The autograd-free stack every layer stands on: a ``Parameter`` holds ``.data`` and "
     "``.grad``, a ``Module`` caches what its ``backward`` needs, ``Sequential`` chains them.",
     [("normcore", ("Parameter", "Module", "Sequential"))]),
    ("norms", "The norms (reference tier)",
     "The classes ``nc.LayerNorm``, ``nc.BatchNorm1d`` and the rest: each docstring gives the "
     "Forward and Backward formulas in the names the code uses (mean, var, rstd, x_hat, gamma, "
     "beta), with the shape of every line. The standardisation arithmetic that LayerNorm, "
     "BatchNorm, GroupNorm and InstanceNorm share is written once, in "
     "``normcore.norms.standardization``. DyT, which replaces a norm by a tanh, has no statistics. "
     "Batch Renorm and Ghost BatchNorm are BatchNorm with corrected or virtual-batch statistics.",
     [("normcore", ("LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm",
                    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "DyT", "BatchRenorm1d",
                    "BatchRenorm2d", "GhostBatchNorm1d", "GhostBatchNorm2d")),
      ("normcore.norms.standardization", None)]),
    ("gradcheck", "Gradient checks",
     "Numerical against analytic gradients of the input and of every parameter, with a random "
     "upstream gradient.",
     [("normcore.gradcheck", None)]),
    ("derivations", "Step-through derivations",
     "A norm's forward as a tape of elementary nodes and its backward node by node "
     "(``normcore explain`` prints the same); every step-through has its page in the "
     ":doc:`derivations <../derivations/index>`.",
     [("normcore.derivations", None)]),
    ("nn", "The Transformer stack: normcore.nn",
     "Linear, activations, Dropout, embeddings, multi-head attention (self and cross), the feed-forward, the "
     "Transformer block with the norm ``pre``, ``post``, ``deepnorm``, ``peri`` or ``reordered``, soft-capping, "
     "the small models (Mix-LN and LayerNorm Scaling set per block) and the losses; the weight "
     "normalised instead of the activations (WeightNorm, WSLinear) and the residual branch scaled "
     "instead of normalised (LayerScale, ReZero).",
     [("normcore.nn", None)]),
    ("distributed", "SyncBatchNorm across workers: normcore.distributed",
     "BatchNorm whose statistics are taken over a batch split across workers (three all-reduces "
     "per training step by default, or PyTorch's all_gather and all-reduce with "
     "``protocol=\"gather\"``, after one small all-reduce in which the workers agree on what they "
     "exchange), and the process groups it talks through: threads of one process "
     "for the classroom, ``torch.distributed`` with gloo for real processes (torch is imported only "
     "when a ``TorchGroup`` is made).",
     [("normcore.distributed", None)]),
    ("optim", "Optimizers and schedules: normcore.optim", "",
     [("normcore.optim", None)]),
    ("training", "Synthetic tasks and the training loop",
     "Problems with known answers (``normcore.tasks``) and ``fit``, the loop the experiments "
     "and notebooks train with.",
     [("normcore.tasks", None), ("normcore.train", None)]),
    ("fast", "The fast tier: normcore.fast",
     "The same classes as the reference tier with cache-blocked, in-place kernels; read the "
     "reference tier to learn the formulas, use this one where time matters.",
     [("normcore.fast", None)]),
    ("torch_bridge", "The bridge to PyTorch",
     "Imports torch only when called.",
     [("normcore.torch_bridge", None)]),
    ("practice", "Interview practice: normcore.practice",
     "The grader and its exercises; the mistakes it recognises are listed in the "
     ":doc:`practice catalog <../practice_catalog>`.",
     [("normcore.practice", None)]),
    ("experiments", "Experiments and figures: normcore.experiments",
     "Each experiment reproduces a claim of the literature and draws the figures of the "
     ":doc:`figures page <../figures>`.",
     [("normcore.experiments", None)]),
]


# The step-through of each class's backward: the API entry of the class links to its page.
# Kinds not (yet) in normcore.derivations.KINDS are left out.
DERIVATION_OF = {
    "LayerNorm": "layernorm", "RMSNorm": "rmsnorm", "DyT": "dyt",
    "BatchNorm1d": "batchnorm", "BatchNorm2d": "batchnorm", "BatchNorm3d": "batchnorm",
    "GroupNorm": "groupnorm",
    "InstanceNorm1d": "instancenorm", "InstanceNorm2d": "instancenorm", "InstanceNorm3d": "instancenorm",
    "Dropout": "dropout", "Softmax": "softmax", "LogSoftmax": "log_softmax",
    "CrossEntropyLoss": "cross_entropy", "GELU": "gelu",
    "MultiheadSelfAttention": "attention", "CausalSelfAttention": "attention",
    "MultiheadAttention": "attention", "TransformerBlock": "residual",
    "ResidualSublayers": "residual", "SyncBatchNorm": "sync_batchnorm",
    "Linear": "linear", "ReLU": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "MSELoss": "mse",
    "FeedForward": "feedforward", "Embedding": "embedding", "SoftCap": "softcap",
    "BatchRenorm1d": "batch_renorm", "BatchRenorm2d": "batch_renorm", "WeightNorm": "weight_norm",
    "LayerScale": "layer_scale", "ReZero": "rezero",
}
# the input each page is worked on: small enough to read every number
DERIVATION_SHAPES = {"batchnorm": (4, 3), "groupnorm": (2, 4, 2), "instancenorm": (2, 2, 3),
                     "softmax": (2, 4), "cross_entropy": (3, 4), "batch_renorm": (4, 3)}


def _derivation_kind(name):
    from ..derivations import KINDS
    kind = DERIVATION_OF.get(name)
    return kind if kind in KINDS else None


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and getattr(obj, "__module__", None) == module.__name__]


def _heading(text, char):
    return [text, char * len(text), ""]


def _directive(module_name, name, obj):
    if inspect.isclass(obj):
        kind = _derivation_kind(name)
        link = (f"\n   Its backward step by step, node by node: :doc:`/derivations/{kind}` "
                f"(``normcore explain {kind}``).\n" if kind else "")
        return f".. autoclass:: {module_name}.{name}\n   :members:\n{link}"
    if inspect.isfunction(obj):
        return f".. autofunction:: {module_name}.{name}\n"
    return None  # data (tables, constants) and submodules are described in their module's text


def api_pages():
    """{file name: reStructuredText} of the API reference, and the index page listing them.

    reStructuredText, not Markdown: autodoc's output is reStructuredText, and the docstrings'
    Forward/Backward blocks are its literal blocks.
    """
    seen, pages = set(), {}
    for page, title, intro, parts in API:
        lines = _heading(title, "=")
        if intro:
            lines += [intro, ""]
        for module_name, names in parts:
            module = importlib.import_module(module_name)
            if names is None:
                doc = inspect.getdoc(module)
                if doc and module_name != "normcore":
                    lines += _heading(f"``{module_name}``", "-")
                    lines += [f".. automodule:: {module_name}", "   :no-members:", ""]
                names = _public_names(module)
            for name in names:
                obj = getattr(module, name)
                if id(obj) in seen:
                    continue
                text = _directive(module_name, name, obj)
                if text:
                    seen.add(id(obj))
                    lines += [text]
        pages[f"{page}.rst"] = "\n".join(lines)
    index = _heading("API reference", "=")
    index += ["Generated from the docstrings: every public class and function of normcore, once.",
              "", ".. toctree::", "   :maxdepth: 1", ""]
    index += [f"   {page}" for page, *_ in API] + [""]
    pages["index.rst"] = "\n".join(index)
    return pages


def _cell(text):
    """Text for a Markdown table cell or list item: one line, every markup character escaped
    but a word in asterisks (``*new*``), the catalog's emphasis, which stays emphasis."""
    text = " ".join(str(text).split())
    for char in "\\`*_[]<>$|":
        text = text.replace(char, "\\" + char)
    return re.sub(r"\\\*(\w+)\\\*", r"*\1*", text)


def _taught_in(where, lang="en"):
    """The catalog's pointer (already in the page's language: ``Mistake.taught_in`` names a
    notebook's edition in it where there is one), its notebook (notebooks/NAME.ipynb, ...) a
    link to the notebook's page: in the Chinese section, the English section's page (the "en:"
    scheme of conf.py) for a notebook that has no Chinese edition."""
    match = re.match(r"notebooks/(\w+)\.ipynb(.*)", where, flags=re.DOTALL)
    if not match:
        return _cell(where)
    name, rest = match.groups()
    shown = f"notebooks/{name}.ipynb"
    target = shown if lang == "en" or name.endswith(f"_{lang}") else f"en:notebooks/{name}.html"
    return f"[{_cell(shown)}]({target}){_cell(rest)}"


# The catalog page's own words; the exercises' tasks come from the "practice" catalog, the
# mistakes from the "catalog" one, and all of it is translated when the page is Chinese.
CATALOG_WORDS = dict(
    title=N_("Practice: the exercises and the catalog of mistakes"),
    intro=N_("Generated from `normcore.practice.EXERCISES` and `normcore.practice.CATALOG`. "
             "`normcore practice new NAME` writes a skeleton, `normcore practice check FILE` "
             "grades it and names the catalogued mistake whose numbers match yours."),
    exercises=N_("The exercises"),
    order=N_("In the order to practise them, as `normcore practice list` shows them; the task "
             "begins with the class (or function) to write."),
    head=N_("| | exercise | level | task |"), minutes=N_("min"),
    mistakes=N_("The mistakes"),
    mistakes_intro=N_("Each is the reference answer with one line written wrong; the grader "
                      "runs it on the same checks as your layer."),
    field_exercises=N_("exercises"), field_symptom=N_("symptom"), field_hint=N_("hint"),
    field_taught=N_("taught in"), field=N_("{field}: {value}"))


def practice_catalog(lang="en"):
    """The exercises and the catalog of mistakes, as one Markdown page in ``lang``."""
    from .. import i18n
    from ..practice import CATALOG
    from ..practice.exercises import DIFFICULTY, path

    with i18n.speaking(lang):
        words = {key: _(text) for key, text in CATALOG_WORDS.items()}
        mistake = i18n.translator("catalog")   # the mistakes' titles, symptoms, hints
        task = i18n.translator("practice")     # the exercises' tasks; easy, medium, hard
        lines = [f"# {words['title']}", "", words["intro"], "", f"## {words['exercises']}", "",
                 words["order"], "", words["head"], "|---|---|---|---|"]
        for step, e in enumerate(path(), 1):
            level = task(DIFFICULTY.get(e.difficulty, str(e.difficulty)))
            lines.append(f"| {step} | `{e.name}` | {level}, {e.minutes}\u00a0{words['minutes']} "
                         f"| {_cell(task(e.summary))} |")  # "15 min" on one line
        lines += ["", f"## {words['mistakes']} ({len(CATALOG)})", "", words["mistakes_intro"], ""]
        for m in CATALOG:
            fields = [("field_exercises", ", ".join(f"`{x}`" for x in m.exercises)),
                      ("field_symptom", _cell(mistake(m.symptom))),
                      ("field_hint", _cell(mistake(m.hint))),
                      ("field_taught", _taught_in(mistake(m.taught_in), lang))]
            lines += [f"### `{m.id}`", "", f"**{_cell(mistake(m.title))}**", "",
                      *(f"- {words['field'].format(field=words[key], value=value)}"
                        for key, value in fields), ""]
    return "\n".join(lines)


# The questions page's own words (translated when the page is Chinese); the questions come
# from the bank (normcore/practice/questions), in the page's language.
QUESTION_WORDS = dict(
    title=N_("Interview questions on normalization"),
    intro=N_("The conceptual questions interviews ask about normalization, each with an answer "
             "of interview length that quotes what normcore measures (every number is "
             "recomputed by a test), where normcore shows it, and the common wrong answers, "
             "with the write-up (W1 to W4, the claims notebook) that makes one. Generated from "
             "the bank in `normcore/practice/questions/`; in a terminal, "
             "`normcore practice questions --random 5` asks them one at a time."),
    answer=N_("Answer"), evidence=N_("Where normcore shows it"), wrong=N_("Common wrong answers"),
    why=N_("Why it is wrong"), made_by=N_("made by {writeup}"), claim=N_("claims row {row}"),
    field=N_("{field}: {value}"), pair=N_("{first}, {second}"), aside=N_("{text} ({aside})"),
    wrong_answer=N_("{answer} {label}: {why}"))
# the link at the top of the page to its other language's edition (the "zh:" / "en:" schemes)
OTHER_EDITION = {"en": "中文：[面试八股题](zh:questions.html)", "zh": "[English](en:questions.html)"}


def _evidence(pointer, lang, words):
    """An evidence pointer of the bank as Markdown: a notebook (its edition in the page's
    language where there is one) and a figure as links, a claims row to the claims notebook;
    what the Chinese section does not hold links to the English section."""
    from ..notebooks import in_language
    from ..practice.questions.quiz import command_in_language

    def notebook_link(name, rest=""):
        name = in_language(name, lang)
        shown = f"notebooks/{name}"
        here = lang == "en" or name.endswith(f"_{lang}.ipynb")
        target = shown if here else f"en:notebooks/{name[:-len('.ipynb')]}.html"
        return f"[{shown}]({target}){rest}"

    if match := re.fullmatch(r"claims row ([a-z0-9-]+)", pointer):
        row = words["claim"].format(row=f"`{match.group(1)}`")
        return words["pair"].format(first=notebook_link("claims.ipynb"), second=row)
    if match := re.fullmatch(r"notebooks/(\w+\.ipynb) (§\d+)", pointer):
        return notebook_link(match.group(1), " " + match.group(2))
    if pointer.startswith("figures/"):
        return f"[{pointer}]({pointer if lang == 'en' else 'en:figures.html'})"
    if match := re.fullmatch(r"experiment (\w+)", pointer):
        pointer = f"normcore figures {match.group(1)} --quick"
    return f"`{command_in_language(pointer, lang)}`"


def _made_by(text, wrong, words):
    """``text`` with "(made by W3, claims row ROW)" after it in the page's language, or as it
    is when no write-up makes the wrong answer."""
    if not wrong.writeup:
        return text
    head, _sep, row = wrong.writeup.partition(", claims row ")
    note = words["made_by"].format(writeup=head)
    if row:
        note = words["pair"].format(first=note, second=words["claim"].format(row=f"`{row}`"))
    return words["aside"].format(text=text, aside=note)


def questions_page(lang="en"):
    """The interview question bank as one Markdown page in ``lang``: per topic, each question
    with its answer, its evidence and the common wrong answers."""
    from .. import i18n
    from ..practice import questions

    catalog = i18n.translator("practice")
    bank = questions.bank()
    with i18n.speaking(lang):
        words = {key: _(text) for key, text in QUESTION_WORDS.items()}
        field = words["field"]
        lines = [f"# {words['title']}", "", OTHER_EDITION[lang], "", words["intro"], ""]
        for topic in questions.TOPICS:
            chosen = [q for q in bank if q.topic == topic]
            if not chosen:
                continue
            lines += [f"## {catalog(questions.TOPIC_TITLES[topic])}", ""]
            for q in chosen:
                lines += [f"### {_cell(q.text('question'))}", "", f"`{q.id}`", "",
                          field.format(field=f"**{words['answer']}**", value=_cell(q.text("answer"))),
                          "", field.format(field=f"**{words['evidence']}**", value="").rstrip(), ""]
                lines += [f"- {_evidence(e, lang, words)}" for e in q.evidence]
                lines += ["", field.format(field=f"**{words['wrong']}**", value="").rstrip(), ""]
                for w in q.wrong:
                    line = words["wrong_answer"].format(answer=_cell(w.text("answer")),
                                                        label=f"**{words['why']}**",
                                                        why=_cell(w.text("why")))
                    lines.append(f"- {_made_by(line, w, words)}")
                lines.append("")
    return "\n".join(lines)


def _derivations():
    """(page name, kind, options) of every derivation page: one per step-through, and one per
    further norm position of the residual block (its page is Pre-Norm's)."""
    from ..derivations import KINDS
    from ..derivations.blocks import POSITIONS

    for kind in KINDS:
        yield kind, kind, {}
        if kind == "residual":
            yield from ((f"residual_{p}", kind, {"position": p}) for p in POSITIONS if p != "pre")


def derivation_pages(folder):
    """{file name: Markdown} of the derivations: a page per step-through (per norm position for
    the residual block), generated from its tape (the forward table, the backward node by node
    with display math, the checks), with its computation graph written as ``folder/PAGE.svg``;
    and the index page listing them."""
    from ..derivations import step_through
    from ..derivations.render import export_markdown

    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pages, rows = {}, []
    for page, kind, options in _derivations():
        shape = DERIVATION_SHAPES.get(kind, (2, 3))
        st = step_through(kind, shape=shape, seed=0, **options)
        st.graph().save(folder / f"{page}.svg")
        flags = "".join(f" --{name} {value}" for name, value in options.items())
        command = f"normcore explain {kind} --shape {'x'.join(map(str, shape))}{flags}"
        call = ", ".join([repr(kind), f"shape={shape}", "seed=0", *(f"{n}={v!r}" for n, v in options.items())])
        title_line, *body = export_markdown(st).split("\n")
        pages[f"{page}.md"] = "\n".join([
            title_line, "",
            f"Generated from the tape of `step_through({call})`; "
            f"`{command}` prints the same in a terminal, `--step` one node at a time, "
            f"`--format md` or `--format tex` this page for lecture notes.", "",
            f"![The computation graph of {_cell(str(st.title))}: every node of the tape, the routes "
            f"from x coloured]({page}.svg)", *body, "",
            "## The numbers", "", f"What `{command}` prints: every value and every gradient.", "",
            "```text", st.text(width=100, latex=False), "```", ""])
        rows.append(f"| [{_cell(str(st.title))}]({page}.md) | `{command}` | {len(st.tape.nodes)} | "
                    f"{'all pass' if st.passed else 'FAIL'} |")
    pages["index.md"] = "\n".join([
        "# Derivations: every backward, node by node", "",
        "Each layer's forward as a tape of elementary nodes and its backward walked in reverse, "
        "each node's local derivative and the share of the gradient it sends to its inputs, "
        "with the numbers. Every page is generated from the tape when the site is built, and "
        "its staged gradients are checked against the layer's compact backward and against "
        "central differences: the last column says whether they agreed.", "",
        "| computation | in a terminal | nodes | checks |", "|---|---|---|---|", *rows, "",
        "```{toctree}", ":hidden:", "", *[page for page, _, _ in _derivations()], "```", ""])
    return pages


def glossary_page():
    """术语表: every term of ``normcore/i18n/glossary.toml``, the one glossary, as a Chinese page
    (its notes in Chinese, ``note_zh``)."""
    from ..i18n.glossary import terms

    lines = ["# 术语表", "",
             "normcore 的中文输出、文档和 notebook 都使用这一份术语表（由 "
             "`normcore/i18n/glossary.toml` 在构建文档时生成，不会与代码脱节）。用词沿用 "
             "normcore 所依据的几篇中文文章；《动手学深度学习》（d2l）中文版用词不同时，"
             "列在“d2l”一栏。层的名字（BatchNorm、LayerNorm、RMSNorm、Pre-Norm……）、"
             "代码标识符和公式一律不译。", "",
             "| English | 中文 | d2l | 说明 |", "|---|---|---|---|"]
    for t in terms():
        lines.append(f"| {_cell(t.en)} | {_cell(t.zh)} | {_cell(t.d2l)} | {_cell(t.note_zh)} |")
    return "\n".join(lines) + "\n"


# The references page's own words; the entries come from the bibliography.
BIBLIOGRAPHY_INTRO = N_(
    "Every paper, model and codebase that normcore's material names (README, notebooks, these "
    "pages, the practice catalog, docstrings), with its authors, year, venue, arXiv id or URL, "
    "the names the material cites it by, and what it supports in normcore. Generated from "
    "`normcore/bibliography.toml` (`normcore.bibliography` reads it); "
    "`tests/test_bibliography.py` holds every citation of the material to an entry here.")


def bibliography_page(lang="en"):
    """The references: every entry of ``normcore/bibliography.toml`` as a Markdown page in
    ``lang``, grouped into papers, models and codebases."""
    from .. import bibliography, i18n

    title, rest = bibliography.markdown(lang=lang).split("\n", 1)
    with i18n.speaking(lang):
        intro = _(BIBLIOGRAPHY_INTRO)
    return "\n".join([title, "", intro, rest])


def figures_page(figures_dir):
    """Each experiment's title, lesson and figures, then any figure no experiment claims."""
    from .. import experiments

    pngs = sorted(p.name for p in pathlib.Path(figures_dir).glob("*.png"))
    owner = {}
    names = sorted(experiments.EXPERIMENTS, key=len, reverse=True)  # longest prefix wins
    for png in pngs:
        owner[png] = next((n for n in names if png.startswith(n)), None)
    lines = ["# Figures", "",
             "Experiments that test, at laptop scale with normcore's own layers and synthetic data, "
             "what the literature claims about normalization; several fall short of the claim, and "
             "each lesson below says where. `normcore figures NAME` reruns one and rewrites its PNGs "
             "in `figures/`; its test asserts the lesson on the measured numbers.", ""]
    for name in experiments.EXPERIMENTS:
        module = experiments.load(name)
        lines += [f"## {_cell(module.TITLE)}", "", f"`normcore figures {name}`", ""]
        for png in (p for p in pngs if owner[p] == name):
            lines += [f"![{_cell(module.TITLE)}: {png}](figures/{png})", ""]
        lines += [_cell(module.TAKEAWAY), ""]
    rest = [p for p in pngs if owner[p] is None]
    if rest:
        lines += ["## Other figures", ""] + [f"![{p}](figures/{p})\n" for p in rest]
    return "\n".join(lines)


def write_all(src, lang="en"):
    """Write every generated page of the ``lang`` section into its staged source folder ``src``."""
    src = pathlib.Path(src)
    if lang != "en":  # the Chinese section: the catalog, the glossary, the references, the questions
        (src / "practice_catalog.md").write_text(practice_catalog(lang), encoding="utf-8")
        (src / "glossary.md").write_text(glossary_page(), encoding="utf-8")
        (src / "references.md").write_text(bibliography_page(lang), encoding="utf-8")
        (src / "questions.md").write_text(questions_page(lang), encoding="utf-8")
        return
    (src / "api").mkdir(exist_ok=True)
    for name, text in api_pages().items():
        (src / "api" / name).write_text(text, encoding="utf-8")
    for name, text in derivation_pages(src / "derivations").items():
        (src / "derivations" / name).write_text(text, encoding="utf-8")
    (src / "practice_catalog.md").write_text(practice_catalog(), encoding="utf-8")
    (src / "questions.md").write_text(questions_page(), encoding="utf-8")
    (src / "references.md").write_text(bibliography_page(), encoding="utf-8")
    (src / "figures.md").write_text(figures_page(src / "figures"), encoding="utf-8")
