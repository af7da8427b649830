"""Sphinx configuration of normcore's documentation site.

``python -m normcore.docs`` stages the pages, the notebooks and the figures in a temporary
source folder and builds it with this configuration, warnings as errors (``-W -n``).
Nothing here runs a notebook: they are rendered with the outputs they were committed with.
"""

import re

project = "normcore"
author = "normcore contributors"
copyright = "normcore contributors, MIT licence"

extensions = [
    "myst_nb",                 # Markdown pages and notebooks (also loads myst_parser)
    "sphinx.ext.autodoc",      # the API reference, from the docstrings
    "sphinx.ext.mathjax",      # $...$ in the notebooks
    # MathJax from the docs extra's package, copied into _static/mathjax/ of the built site
    # (it sets mathjax_path): the formulas render in a classroom without internet.
    "sphinx-mathjax-offline",
]

# The notebooks are committed with their outputs; the site shows those and never runs them.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
# The site is two Sphinx projects (normcore.docs.build): the English section at the root and
# the Chinese one, in its own language, in zh/. A page links to the other section's pages with
# these schemes ("zh:practice.html" from the root, "en:notebooks/dropout.html" from zh/).
myst_url_schemes = {
    "http": None, "https": None, "mailto": None,
    "zh": {"url": "zh/{{path}}#{{fragment}}", "title": "", "classes": ["other-language"]},
    "en": {"url": "../{{path}}#{{fragment}}", "title": "", "classes": ["other-language"]},
}

# The docstrings are reStructuredText: their Forward/Backward blocks are literal blocks,
# shown as plain monospaced text (formulas and shape comments, not Python to colour).
highlight_language = "text"
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_default_options = {"members": True, "undoc-members": False}
autoclass_content = "class"

# Unresolved references fail the build (-n), except types of other projects: the site is
# built offline, without intersphinx inventories.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|npt|numpy\.typing|typing|typing_extensions|collections\.abc"
               r"|builtins|os|pathlib|io|collections|dataclasses|types)(\..*)?"),
    (r"py:class", r"(int|float|str|bool|bytes|complex|object|None|tuple|list|dict|set"
                  r"|frozenset|type|callable|Callable|Iterable|Iterator|Sequence|Mapping"
                  r"|Any|Optional|Union|Literal|Self|ArrayLike|NDArray|DTypeLike)"),
]

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
smartquotes = False          # quotes stay as written: the pages quote code and its messages
html_theme = "furo"
html_title = "normcore"
html_show_sourcelink = False
html_copy_source = False


# The docstrings are written to be read as plain text too (help(), a projector): their prose
# uses * for products and shapes ("(N, C, *S)", "*inputs") and |a| for absolute values. In
# reStructuredText those would start emphasis or substitutions, so outside inline literals
# and literal blocks they are escaped; a well-formed *word* stays emphasis.
_LITERAL = re.compile(r"(``.+?``)")
_EMPHASIS = re.compile(r"(?<![\w*\\])(\*\*?)(?=[A-Za-z])([^*\n]*?[A-Za-z.])\1(?![\w*])")


def _escape_plain(part):
    """Escape * and | in a piece of prose without inline literals, keeping *emphasis*."""
    pieces, start = [], 0
    for match in _EMPHASIS.finditer(part):
        pieces.append(part[start:match.start()].replace("*", r"\*").replace("|", r"\|"))
        pieces.append(match.group(0))
        start = match.end()
    pieces.append(part[start:].replace("*", r"\*").replace("|", r"\|"))
    return "".join(pieces)


def _escape_prose(text):
    parts = _LITERAL.split(text)  # odd indices are ``inline literals``, left as they are
    return "".join(part if i % 2 else _escape_plain(part) for i, part in enumerate(parts))


def _escape_docstring(app, what, name, obj, options, lines):
    block_indent = None  # the indentation of the paragraph that opened a literal block
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block_indent is not None:
            if not line.strip() or indent > block_indent:
                continue
            block_indent = None
        lines[i] = _escape_prose(line)
        if line.rstrip().endswith("::"):
            block_indent = indent


# numpy.typing's aliases (ArrayLike, DTypeLike) would show expanded into their long unions of
# private NumPy types; signatures show the alias names instead.
def _numpy_aliases():
    import numpy.typing as npt
    from sphinx.util.typing import stringify_annotation

    pairs = []
    for alias in ("ArrayLike", "DTypeLike"):
        for mode, name in (("smart", f"~numpy.typing.{alias}"),
                           ("fully-qualified-except-typing", f"numpy.typing.{alias}")):
            pairs.append((stringify_annotation(getattr(npt, alias), mode), name))
    return sorted(pairs, key=lambda pair: -len(pair[0]))


_ALIASES = []


def _alias_signature(app, what, name, obj, options, signature, return_annotation):
    if not _ALIASES:
        _ALIASES.extend(_numpy_aliases())
    for expanded, alias in _ALIASES:
        signature = signature.replace(expanded, alias) if signature else signature
        if return_annotation:
            return_annotation = return_annotation.replace(expanded, alias)
    return signature, return_annotation


def setup(app):
    app.connect("autodoc-process-docstring", _escape_docstring)
    app.connect("autodoc-process-signature", _alias_signature)
