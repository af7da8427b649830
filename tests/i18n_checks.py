"""Checks of translated output that any test of normcore's Chinese can import:

    from i18n_checks import english_runs, wide_lines

    assert not wide_lines(out)                       # every line within 80 display columns
    assert not english_runs(out, allowed=labels)     # no English sentence fell through

``english_runs`` finds what a missing translation leaves in Chinese output: a run of three or
more English words. It does not count what stays English in Chinese text on purpose: code
identifiers (``torch.nn``, ``x_hat``, ``--seed``, ``BatchNorm1d``, ``MODEL``), layer names
(LayerNorm, Pre-Norm), formulas and single-letter symbols (``L = sum(y * dy)``, ``(N, C)``),
numbers (``1e-9``, ``(4, 6)``), file names (``layernorm.ipynb``, ``figures/``), quoted values
(``'layernorm'``) and command lines (``normcore explain layernorm --shape 2x4``, ``pip install
torch``). Lists of names that are words (``saturation, warmup, dropout``) are the caller's to
allow. What is left of a
line is split at every Chinese character and Chinese punctuation mark; within a piece, the
words are counted across spaces and ASCII punctuation, so "not causal, key padding" is one run
of four words.
"""

import re

from normcore.i18n.width import WIDTH, display_width

# a command line, from its program's name up to the next Chinese character
COMMAND = re.compile(r"\b(?:normcore|pip|python)\b[^\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]*")
# anything East Asian: a Chinese character, Chinese punctuation, a fullwidth form
CHINESE = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+")
# an English word of prose: letters (an apostrophe inside), capitalised at most at the start;
# single letters are formula symbols
WORD = re.compile(r"[A-Za-z][a-z]*(?:'[a-z]+)*(?:-[a-z]+)*")
PUNCTUATION = "()[]{}<>,.;:!?\"'`*"
UNITS = {"ms", "ns", "us"}  # units of measurement, as symbols


def wide_lines(text, width=WIDTH):
    """The lines of ``text`` wider than ``width`` display columns."""
    return [line for line in text.splitlines() if display_width(line) > width]


def _is_word(token):
    if token[:1] in "'\"`":
        return False  # a quoted value, such as argparse's 'layernorm'
    token = token.strip(PUNCTUATION)
    if len(token) < 2 or token in UNITS or not WORD.fullmatch(token):
        return False  # a symbol, a number, an identifier, a path, a flag
    return not (token.isupper() or any(part[:1].isupper() for part in token.split("-")[1:]))


def english_runs(text, words=3, allowed=()):
    """Every run of ``words`` or more English words of prose in ``text`` (a list of strings,
    empty when none fell through). ``allowed``: strings that may appear as they are (such as
    the labels of a table's rows, which are names); they are removed first, wherever a line
    breaks them."""
    for name in sorted(allowed, key=len, reverse=True):  # a name may be wrapped over lines
        text = re.sub(r"\s+".join(map(re.escape, name.split())), " ", text)
    runs = []
    for line in text.splitlines():
        for piece in CHINESE.split(COMMAND.sub(" ", line)):
            # numbers, identifiers, symbols, paths and flags are left out: they end no run
            run = [token.strip(PUNCTUATION) for token in piece.split() if _is_word(token)]
            if len(run) >= words:
                runs.append(" ".join(run))
    return runs


# --- no English word at all -----------------------------------------------------------------
# What may stay English in Chinese text besides code, formulas and layer names, which
# ``english_runs`` already leaves out (identifiers with _ . digits or inner capitals, flags,
# paths, numbers, command lines). Kept short; each line says why.
KEPT_ENGLISH = {
    # the names of tools, formats and keys, as Chinese engineers write them
    "Python", "numpy", "Markdown", "amsmath", "align", "autograd", "stdin", "stdout", "stderr", "locale",
    "docstring", "Enter", "True", "Transformer", "Jupyter",
    # terms Chinese engineers write in English (the glossary keeps logits the same way)
    "token", "rank", "worker", "id", "logits",
    # the symbols of the formulas and the parameters and methods of the layers: code
    "dy", "dx", "dtype", "gamma", "beta", "alpha", "bias", "weight", "mean", "var", "eps",
    "forward", "backward", "mask", "max", "sum", "argmax", "log-softmax", "all-reduce",
    "query", "key", "value", "count", "invstd", "nan", "inf", "None", "wo", "atol", "rtol", "Nt",
}


def _glossary_keeps_english():
    """The glossary's terms whose Chinese is the English word itself (batch, notebook, logits):
    a Chinese text writes them so on purpose (each word of a name such as LayerNorm Scaling)."""
    from normcore.i18n.glossary import terms

    return {part for t in terms() if t.zh == t.en for word in t.words for part in word.split()}


KEPT_ENGLISH |= _glossary_keeps_english()
NO_VOWEL = re.compile(r"[b-df-hj-np-tv-z]+")


def _is_symbol(word, names):
    """A formula's symbol: a word without a vowel (wq, dk, xc, rstd), or d and a symbol or name
    (dgamma, dkey, dlogits: a gradient)."""
    return bool(NO_VOWEL.fullmatch(word)) or (
        word.startswith("d") and len(word) > 2 and (word[1:] in names or _is_symbol(word[1:], names)))


def english_words(text, allowed=()):
    """Every English word of prose in ``text`` that is neither code nor a formula nor in
    ``KEPT_ENGLISH`` nor in ``allowed`` (names a user types: commands, choices, exercises, the
    nodes of a derivation): what a Chinese reader should not meet. Empty when there is none."""
    names = set(allowed) | KEPT_ENGLISH
    text = re.sub(r"[A-Z][a-z]+(?: (?:&|and|和) [A-Z][a-z]+| 等人?)? \d{4}", " ", text)  # a citation
    text = re.sub(r"\S*\.[A-Za-z]+\b", " ", text)  # a file or dotted name: my_layernorm.py, *.py, nn.Module
    text = re.sub(r"\((?:[^()，。\u4e00-\u9fff]*,)+[^()，。\u4e00-\u9fff]*\)", " ", text)  # a tuple: (in, out)
    return [word for run in english_runs(text, words=1) for word in run.split()
            if word not in names and not _is_symbol(word, names)]


def typed_names():
    """The names a user types and normcore prints in lists as they are: the commands, every
    choice and option of their parsers, the experiments, the computations explain steps through,
    the models compare builds, the exercises and the class names of the layers and optimizers."""
    import argparse
    import inspect

    from normcore import cli, experiments, nn, norms, optim
    from normcore.commands import compare
    from normcore.derivations import KINDS
    from normcore.practice import EXERCISES

    names = {*cli.COMMANDS, *experiments.EXPERIMENTS, *KINDS, *compare.MODELS, *EXERCISES}
    layers = [getattr(module, name) for module in (nn, norms, optim) for name in dir(module) if name[:1].isupper()]
    names |= {layer.__name__ for layer in layers}
    for layer in layers:  # their arguments (kdim, momentum, affine...): code
        try:
            names |= set(inspect.signature(layer).parameters)
        except (TypeError, ValueError):
            pass
    parsers = [cli.build_parser()]
    while parsers:
        parser = parsers.pop()
        for action in parser._actions:
            names.update(str(c) for c in (action.choices or ()) if not isinstance(c, argparse.ArgumentParser))
            names.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                parsers.extend(action.choices.values())
    return {part for name in names for part in re.split(r"[\s_\-]+", str(name).strip("-")) if part} | names


def run_cli(argv, capsys):
    """(exit status, stdout, stderr) of ``normcore argv`` in this process."""
    from normcore import cli

    try:
        status = cli.main(argv)
    except SystemExit as done:
        status = done.code
    out, err = capsys.readouterr()
    return status, out, err
