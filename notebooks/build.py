"""Build the classroom notebooks from their sources in ``notebooks/src/``.

    python notebooks/build.py              # every notebook, executed, written with its outputs
    python notebooks/build.py batchnorm    # just one
    python notebooks/build.py --check      # exit 1 if a committed notebook differs from its source

Each source ``notebooks/src/<topic>.py`` defines ``CELLS``, a list of ``md(...)`` and
``code(...)`` cells; it may import what it keeps in modules beside it (the claims notebook's
rows, ``claims_data_*.py``, and the cells that measure them, ``claims_measure_*.py``; a module
that is not a notebook's source is not a topic). A Markdown cell may contain ``<<tape KIND
SHAPE>>`` (e.g. ``<<tape batchnorm 4x3>>``): it is replaced by that step-through's node table (forward formula, local
derivatives, backward rules), generated from ``normcore.derivations`` so it never drifts from
the code. A Markdown cell may carry its Chinese text, ``md(english, zh=chinese)``: the topic
``<topic>_zh`` is built from the same source with the Chinese text of every Markdown cell
(a cell without one is an error) and the same code cells, run by a kernel that speaks Chinese
(``NORMCORE_LANG=zh``), so the two notebooks cannot drift apart. An image in a Markdown
cell, ``![what it shows](../figures/NAME.png)``, is embedded in the notebook as an
attachment of its cell, so the notebook shows it wherever it is copied or exported (HTML,
another folder); ``--check`` compares the attachments too, so a redrawn figure asks for a
rebuild. ``question(text, answer, zh=(text, answer))`` is an inline question: the question in
view, the answer folded away in a ``<details>`` block, numbered in order through the notebook. The
notebooks are executed with the ``python3`` kernel of the running interpreter,
from the ``notebooks/`` folder, with the repository on ``PYTHONPATH``, so they run from a
fresh clone without installing anything.
"""

import argparse
import base64
import importlib.util
import os
import re
import sys
import textwrap
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SOURCES = HERE / "src"
TOPICS = ["batchnorm", "batchnorm_in_practice", "layernorm", "rmsnorm", "groupnorm_instancenorm", "dropout",
          "batchnorm_zh", "layernorm_zh",
          "pre_post_norm", "modern_norms", "llm_norms", "weight_side", "interview_practice", "claims",
          "rmsnorm_zh", "pre_post_norm_zh",
          "interview_practice_zh", "claims_zh"]
# The languages a notebook is built in besides English: topic NAME_zh is NAME's source in Chinese.
# Per language, the words the builder itself writes: the inline questions' label and answer.
LABELS = {"en": ("Inline question", "Answer"), "zh": ("随堂问题", "答案")}
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
TAPE = re.compile(r"<<tape (\w+) ([0-9x]+)>>")
IMAGE = re.compile(r"(!\[[^\]]*\]\()([^)\s]+)(\))")  # ![alt](target)
QUESTION = "<<inline question>>"
ANSWER = "<<answer>>"
# What a notebook in another language says once, near its first figure, about the figures'
# words (normcore.i18n.figures): its Markdown writes FONT_NOTE there.
FONT_NOTE = "<<figure font note>>"
FONT_NOTES = {"zh": (
    "**图中的文字。** 代码单元格画的图，只有在 matplotlib 找得到中文字体时才用中文标注；没有中文"
    "字体时，图中文字保持英文，免得中文显示成方框。想看中文标注，就装一个中文字体，例如 "
    "Debian/Ubuntu 的 `fonts-noto-cjk` 包，再删掉 matplotlib 的字体缓存，即 `matplotlib.get_cachedir()` "
    "目录下的 `fontlist-*.json`，然后重启内核。从 `figures/` 嵌入的实验图是事先画好的，文字是英文。")}


# The class's test scores several notebooks start from: rows are students (the batch), columns
# subjects (the features).
CLASS_SCORES = """
students = ["Ana", "Ben", "Chen", "Dina"]          # the rows: samples, the batch
subjects = ["maths", "physics", "literature"]      # the columns: features
scores = np.array([[90.0, 80.0, 70.0],
                   [60.0, 50.0, 40.0],
                   [70.0, 95.0, 60.0],
                   [85.0, 65.0, 90.0]])
"""


def md(text, zh=None):
    """A Markdown cell; ``zh``, its Chinese text, is what the notebook NAME_zh shows instead."""
    cell = nbformat.v4.new_markdown_cell(textwrap.dedent(text).strip("\n"))
    if zh is not None:
        cell.metadata["translations"] = {"zh": textwrap.dedent(zh).strip("\n")}
    return cell


def code(*texts):
    """A code cell from one or more pieces of source, each dedented on its own, a blank line apart."""
    return nbformat.v4.new_code_cell("\n\n".join(textwrap.dedent(t).strip("\n") for t in texts))


def question(text, answer, zh=None):
    """An inline question: ask about what the notebook just showed, the answer folded away (a
    ``<details>`` block the reader opens after answering); numbered when the notebook is built.
    ``zh``: the question and the answer in Chinese, a pair."""
    def block(text, answer):
        text, answer = (textwrap.dedent(t).strip("\n") for t in (text, answer))
        return f"**{QUESTION}.** {text}\n\n<details>\n<summary>{ANSWER}</summary>\n\n{answer}\n\n</details>"
    return md(block(text, answer), zh=block(*zh) if zh is not None else None)


def _embed_images(cell):
    """Replace each image path of a Markdown cell by an attachment holding the image itself."""
    attachments = {}

    def attach(match):
        target = match.group(2)
        if target.startswith(("attachment:", "data:", "http://", "https://")):
            return match.group(0)
        path = (HERE / target).resolve()
        if path.suffix.lower() != ".png" or not path.is_file():
            raise FileNotFoundError(f"the image {target} of a notebook is not a PNG file under {HERE}")
        attachments[path.name] = {"image/png": base64.b64encode(path.read_bytes()).decode("ascii")}
        return f"{match.group(1)}attachment:{path.name}{match.group(3)}"

    cell.source = IMAGE.sub(attach, cell.source)
    if attachments:
        cell["attachments"] = attachments
    return cell


def _tape_table(match, lang="en"):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from normcore import i18n
    from normcore.derivations import step_through

    shape = tuple(int(n) for n in match.group(2).split("x"))
    with i18n.speaking(lang):  # the table speaks the notebook's language
        return step_through(match.group(1), shape=shape).markdown()


def source_and_language(topic):
    """'claims_zh' -> ('claims', 'zh'): the source a topic is built from, and its language."""
    base, _, lang = topic.rpartition("_")
    return (base, lang) if base and lang in LABELS and lang != "en" else (topic, "en")


def cells(topic):
    """The notebook's cells from its source, in the topic's language, the tape tables filled in."""
    # the sources import normcore, md and code from this module, and the modules beside them
    for folder in (ROOT, HERE, SOURCES):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    from normcore.i18n.width import join_wide_lines

    source, lang = source_and_language(topic)
    spec = importlib.util.spec_from_file_location(f"notebook_src_{topic}", SOURCES / f"{source}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out, asked = [], 0
    label, answer = LABELS[lang]
    for cell in module.CELLS:
        if cell.cell_type == "markdown":
            translations = cell.metadata.pop("translations", {})
            if lang != "en":
                if lang not in translations:
                    raise ValueError(f"notebooks/src/{source}.py: a Markdown cell has no {lang} "
                                     f"text for {topic}: {cell.source[:70]!r}")
                cell.source = join_wide_lines(translations[lang])  # no gaps inside Chinese
            cell.source = TAPE.sub(lambda m: _tape_table(m, lang), cell.source).replace(ANSWER, answer)
            if FONT_NOTE in cell.source:
                if lang not in FONT_NOTES:
                    raise ValueError(f"notebooks/src/{source}.py: no figure font note in {lang} for {topic}")
                cell.source = cell.source.replace(FONT_NOTE, FONT_NOTES[lang])
            if QUESTION in cell.source:
                asked += 1
                cell.source = cell.source.replace(QUESTION, f"{label} {asked}")
            _embed_images(cell)
        out.append(cell)
    return out


def notebook(topic):
    nb = nbformat.v4.new_notebook(cells=cells(topic))
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    lang = source_and_language(topic)[1]
    if lang != "en":
        nb.metadata["normcore"] = {"language": lang}  # the language its kernel speaks
    return nb


def kernel_env(lang="en"):
    """The environment the kernel runs in: the repository importable, no GUI backend, normcore
    speaking ``lang`` whatever the caller's locale."""
    env = dict(os.environ)
    env["NORMCORE_LANG"] = lang
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    return env


def execute(nb, timeout=120):
    """Run every cell top to bottom in a fresh kernel of this interpreter; raises on any error.

    The kernel is ipykernel's own ``python3`` spec, which runs ``sys.executable``: kernel specs
    installed elsewhere (in the user's Jupyter folders) are not consulted, so the notebooks run
    against exactly the interpreter and packages of the caller. normcore speaks the language
    the notebook's metadata names (``NORMCORE_LANG``), English by default.
    """
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    saved = dict(os.environ)
    lang = nb.metadata.get("normcore", {}).get("language", "en")
    os.environ.update(kernel_env(lang))  # the kernel process inherits it
    try:
        km = KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
        # a kernel's start on two busy cores can take more than nbclient's default minute
        NotebookClient(nb, km=km, timeout=timeout, startup_timeout=300, kernel_name="python3",
                       record_timing=False, resources={"metadata": {"path": str(HERE)}}).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return nb


def _sources(nb):
    return [(c.cell_type, c.source, c.get("attachments")) for c in nb.cells]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("topics", nargs="*", metavar="TOPIC",
                        help=f"which notebooks (default: all of {', '.join(TOPICS)})")
    parser.add_argument("--check", action="store_true",
                        help="only compare the committed notebooks' cells with their sources")
    args = parser.parse_args(argv)
    unknown = [t for t in args.topics if t not in TOPICS]
    if unknown:
        parser.error(f"unknown topic(s) {', '.join(unknown)}; choose from {', '.join(TOPICS)}")
    stale = []
    for topic in args.topics or TOPICS:
        path = HERE / f"{topic}.ipynb"
        nb = notebook(topic)
        if args.check:
            if not path.exists() or _sources(nbformat.read(path, as_version=4)) != _sources(nb):
                stale.append(path.name)
            continue
        execute(nb)
        nbformat.write(nb, path)
        print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("out of date (run python notebooks/build.py): " + ", ".join(stale))
        return 1
    if args.check:
        checked = len(args.topics or TOPICS)
        print(f"{checked} notebook{'s' * (checked != 1)} checked against notebooks/src/: "
              "all current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
