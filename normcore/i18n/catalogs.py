"""The catalogs' upkeep, for developers (needs Babel: ``pip install normcore[dev]``).

    python -m normcore.i18n update    # extract every domain's messages, merge into its .po,
                                      # compile the .mo normcore reads at run time
    python -m normcore.i18n check     # what is missing, untranslated, stale or obsolete

Each domain's messages are the ``_("...")``, ``_.ngettext(...)`` and ``N_("...")`` calls in its
source files (``SOURCES``, first matching pattern wins), and the messages a domain's module lists
for text that is no call (``LISTED``: the practice skeletons' and reference answers' docstrings
and comments).
Translations are written in the .po files by hand, following the glossary (``glossary.toml``);
``update`` never invents one.
"""

import io
from datetime import datetime, UTC
from fnmatch import fnmatch
from pathlib import Path

from . import DOMAINS, LOCALE_DIR

PACKAGE = Path(__file__).resolve().parents[1]  # normcore/
TRANSLATED = ("zh",)  # the languages with catalogs (English is the source)
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
# a fixed date in the headers, so that an update with nothing new rewrites nothing
DATE = datetime(2026, 11, 26, tzinfo=UTC)
HEADER = {"project": "normcore", "copyright_holder": "the normcore developers",
          "creation_date": DATE, "revision_date": DATE, "fuzzy": False}

# (pattern relative to normcore/, domain): the first pattern a file matches gives its domain
SOURCES = (
    ("practice/catalog/*.py", "catalog"),
    ("practice/constants.py", "catalog"),  # CANNOT_TELL, said in a report as the catalog's texts
    ("practice/torch_track/mistakes.py", "catalog"),
    ("practice/*.py", "practice"),
    ("practice/torch_track/*.py", "practice"),
    ("commands/practice*.py", "practice"),  # the practice command: its parser and its actions
    ("derivations/*.py", "explain"),
    ("*.py", "cli"),
)

# domain -> the "module:function"s returning the (message, file) pairs of text that is not a _()
# call: the practice skeletons' and reference answers' docstrings and comments, the notebooks'
# code cells' tr() calls
LISTED = {"practice": ("normcore.practice.skeletons:messages",
                       "normcore.practice.answers:messages"),
          "notebooks": ("normcore.i18n.catalogs:notebook_messages",)}
NOTEBOOK_SOURCES = PACKAGE.parent / "notebooks" / "src"  # the notebooks' sources, in a clone
# a notebook translates with tr(...) (in IPython, _ is the last result), a figure's words with
# say(...) (normcore.i18n.figures.figure_words)
NOTEBOOK_KEYWORDS = {"tr": None, "N_": None, "say": None}


def domain_of(path):
    """The domain of a source file under normcore/, or None (the i18n package's upkeep; its
    ``__init__`` has the command line's domain)."""
    rel = Path(path).resolve().relative_to(PACKAGE).as_posix()
    if rel.startswith("i18n/") and rel != "i18n/__init__.py":
        return None
    return next((domain for pattern, domain in SOURCES if fnmatch(rel, pattern)), None)


def notebook_messages(folder=NOTEBOOK_SOURCES, keywords=NOTEBOOK_KEYWORDS):
    """The (message, file) pairs the notebooks' code cells print or draw: the ``tr()``, ``N_()``
    and ``say()`` calls inside the code of ``notebooks/src/*.py`` (code that Babel cannot see,
    being strings of the source: ``_code_pieces``); ``keywords``: the calls to look for, e.g.
    ``{"say": None}`` for the figures' words alone."""
    import textwrap

    _, extract_, _, _ = _babel()
    found = []
    for path in sorted(Path(folder).glob("*.py")):
        where = path.relative_to(PACKAGE.parent).as_posix()
        for piece in _code_pieces(path.read_text(encoding="utf-8")):
            source = io.BytesIO(textwrap.dedent(piece).encode("utf-8"))
            for _lineno, message, _comments, _context in extract_.extract(
                    "python", source, keywords=keywords, options={"encoding": "utf-8"}):
                found.append((message, where))
    return found


def _code_pieces(text):
    """The strings of a notebook source that are code: every string constant that parses as
    Python and has a call in it (a ``code(...)`` cell's text, the claims' evidence cells and
    their setup cell); Markdown does not parse."""
    import ast
    import textwrap

    pieces = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "(" in node.value:
            try:
                ast.parse(textwrap.dedent(node.value))
            except SyntaxError:
                continue
            pieces.append(node.value)
    return pieces


def _babel():
    try:
        from babel.messages import catalog, extract, mofile, pofile
    except ImportError as err:
        raise SystemExit("the catalogs' upkeep needs Babel: pip install 'normcore[dev]' "
                         "(or pip install babel)") from err
    return catalog, extract, mofile, pofile


def extract(domain):
    """A Babel catalog of the messages the domain's sources use, with their places."""
    catalog, extract_, _, _ = _babel()
    template = catalog.Catalog(domain=domain, **HEADER)
    for path in sorted(PACKAGE.rglob("*.py")):
        if domain_of(path) != domain:
            continue
        with open(path, "rb") as f:
            for lineno, message, _comments, _context in extract_.extract(
                    "python", f, keywords=KEYWORDS, options={"encoding": "utf-8"}):
                where = (path.relative_to(PACKAGE.parent).as_posix(), lineno)
                template.add(message, locations=[where])
    if domain in LISTED:
        import importlib
        for listed in LISTED[domain]:
            module, _, function = listed.partition(":")
            for message, where in getattr(importlib.import_module(module), function)():
                template.add(message, locations=[(where, None)])
    return template


def po_path(domain, lang="zh"):
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{domain}.po"


def read_po(domain, lang="zh"):
    _, _, _, pofile = _babel()
    path = po_path(domain, lang)
    if not path.exists():
        from babel.messages.catalog import Catalog
        return Catalog(locale=lang, domain=domain, **HEADER)
    with open(path, "rb") as f:
        return pofile.read_po(f, locale=lang, domain=domain)


def compiled(catalog):
    """The .mo bytes of a catalog (untranslated and fuzzy messages left out)."""
    _, _, mofile, _ = _babel()
    out = io.BytesIO()
    mofile.write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def update(domains=DOMAINS, langs=TRANSLATED):
    """Merge the sources' messages into each .po (keeping its translations, dropping messages no
    source uses) and compile each .mo. Returns the paths written."""
    _, _, _, pofile = _babel()
    written = []
    for lang in langs:
        for domain in domains:
            template = extract(domain)
            catalog = read_po(domain, lang)
            catalog.update(template, no_fuzzy_matching=True)
            catalog.obsolete.clear()
            catalog.revision_date = DATE
            path = po_path(domain, lang)
            path.parent.mkdir(parents=True, exist_ok=True)
            out = io.BytesIO()
            pofile.write_po(out, catalog, width=100, sort_by_file=True, include_lineno=False)
            path.write_bytes(out.getvalue())
            path.with_suffix(".mo").write_bytes(compiled(catalog))
            written += [path, path.with_suffix(".mo")]
    return written


def problems(domains=DOMAINS, langs=TRANSLATED):
    """Every way the shipped catalogs differ from their sources, as sentences ([] if none)."""
    found = []
    for lang in langs:
        for domain in domains:
            template, catalog = extract(domain), read_po(domain, lang)
            path = po_path(domain, lang)
            used = {m.id for m in template if m.id}
            have = {m.id: m for m in catalog if m.id}
            for mid in sorted(used - set(have), key=str):
                found.append(f"{path.name}: not in the catalog (run update): {mid!r}")
            for mid in sorted(set(have) - used, key=str):
                found.append(f"{path.name}: no source uses it any more (run update): {mid!r}")
            for mid in sorted(used & set(have), key=str):
                m = have[mid]
                strings = m.string if isinstance(m.string, tuple) else (m.string,)
                if not all(strings) or m.fuzzy:
                    found.append(f"{path.name}: not translated{' (fuzzy)' if m.fuzzy else ''}: {mid!r}")
            mo = path.with_suffix(".mo")
            if not mo.exists() or mo.read_bytes() != compiled(catalog):
                found.append(f"{mo.name}: not compiled from the current {path.name} (run update)")
    return found
