"""Synthetic sequence tasks with known answers, generated from a seed (nothing to download).

Every task yields batches ``(tokens, targets)``: integer arrays of shape (B, T) for a causal
language model, where ``targets[b, t]`` is the token the model should predict at position t,
or ``IGNORE`` (-100, ``CrossEntropyLoss``'s default ``ignore_index``) where nothing is asked.

The sequence-to-sequence tasks (copy, reverse, sort) put the answer after a separator and
train with teacher forcing. With n = ``n_tokens`` and SEP the separator token::

    tokens  = src[0] ... src[n-1]  SEP     out[0] ... out[n-2]       (length 2n)
    targets = -100   ... -100      out[0]  out[1] ... out[n-1]

so position t predicts the next token, and only the answer is scored. A causal model cannot
reverse a sequence in place (position 0 would have to see the last token), hence the prompt.

``SourceReversalTask`` is for an encoder-decoder model instead: the source goes to the encoder,
the answer to the decoder, and its batches are ``((src, tgt_in, src_key_padding_mask),
tgt_out)``; ``fit`` passes a tuple of inputs to the model as separate arguments.
"""

import numpy as np

from ._array import make_rng

IGNORE = -100


def token_accuracy(logits, targets, ignore_index=IGNORE):
    """The fraction of scored positions (targets != ignore_index) where argmax(logits) == target."""
    targets = np.asarray(targets)
    keep = targets != ignore_index
    if not keep.any():
        return float("nan")
    return float(np.mean(np.argmax(logits, axis=-1)[keep] == targets[keep]))


class Task:
    """A generator of (tokens, targets) batches. Subclasses set ``vocab_size`` and ``seq_len``
    and write ``sample(batch_size, rng)``."""

    name = "task"
    vocab_size = 0  # the model's vocabulary (inputs and predicted classes)
    seq_len = 0  # T of every batch; the model's max_len must be at least this

    def sample(self, batch_size, rng):
        raise NotImplementedError

    def batch(self, batch_size=32, seed=0):
        """One batch from ``seed`` (an int or a np.random.Generator)."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        tokens, targets = self.sample(int(batch_size), make_rng(seed))
        return tokens.astype(np.int64), targets.astype(np.int64)

    def batches(self, batch_size=32, seed=0):
        """An endless stream of fresh batches, reproducible from ``seed``."""
        rng = make_rng(seed)
        while True:
            yield self.batch(batch_size, rng)

    def __repr__(self):
        fields = ", ".join(f"{k}={v}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


class _SeqToSeq(Task):
    """A prompt of ``n_tokens`` symbols from [0, n_symbols), then SEP = n_symbols, then the answer."""

    def __init__(self, n_tokens=8, n_symbols=10):
        if n_tokens < 1 or n_symbols < 2:
            raise ValueError(f"{type(self).__name__} needs n_tokens >= 1 and n_symbols >= 2, "
                             f"got {n_tokens}, {n_symbols}")
        self.n_tokens, self.n_symbols = int(n_tokens), int(n_symbols)
        self.vocab_size = self.n_symbols + 1  # + SEP
        self.seq_len = 2 * self.n_tokens

    @property
    def sep(self):
        return self.n_symbols

    def answer(self, src):
        """(B, n) -> (B, n): the output sequence for each prompt."""
        raise NotImplementedError

    def sample(self, batch_size, rng):
        src = rng.integers(0, self.n_symbols, (batch_size, self.n_tokens))
        out = self.answer(src)
        sep = np.full((batch_size, 1), self.sep)
        tokens = np.concatenate([src, sep, out[:, :-1]], axis=1)  # (B, 2n)
        targets = np.concatenate([np.full_like(src, IGNORE), out], axis=1)  # (B, 2n)
        return tokens, targets


class CopyTask(_SeqToSeq):
    """Repeat the prompt: out = src."""

    name = "copy"

    def answer(self, src):
        return src.copy()


class ReverseTask(_SeqToSeq):
    """Reverse the prompt: out[i] = src[n - 1 - i]."""

    name = "reverse"

    def answer(self, src):
        return src[:, ::-1].copy()


class SortTask(_SeqToSeq):
    """Sort the prompt in ascending order."""

    name = "sort"

    def answer(self, src):
        return np.sort(src, axis=1)


class ModularAdditionTask(Task):
    """tokens = a b EQ, target at EQ = (a + b) mod p; a, b uniform in [0, p), EQ = p."""

    name = "modadd"

    def __init__(self, p=11):
        if p < 2:
            raise ValueError(f"ModularAdditionTask needs a modulus p >= 2, got {p}")
        self.p = int(p)
        self.vocab_size = self.p + 1
        self.seq_len = 3

    def sample(self, batch_size, rng):
        a, b = rng.integers(0, self.p, (2, batch_size, 1))
        tokens = np.concatenate([a, b, np.full_like(a, self.p)], axis=1)  # (B, 3)
        targets = np.concatenate([np.full_like(a, IGNORE), np.full_like(a, IGNORE), (a + b) % self.p], axis=1)
        return tokens, targets


class TeacherLabellingTask(Task):
    """Label every position by a fixed random teacher: label_t = table[x_{t-1}, x_t] (x_{-1} = 0).

    The teacher is a random (n_symbols, n_symbols) table of labels in [0, n_labels), drawn once
    from ``teacher_seed``; the model must learn it by looking at the current and previous token.
    """

    name = "teacher"

    def __init__(self, seq_len=8, n_symbols=8, n_labels=4, teacher_seed=0):
        if not 1 <= n_labels <= n_symbols or seq_len < 1:
            raise ValueError(f"TeacherLabellingTask needs seq_len >= 1 and 1 <= n_labels <= n_symbols, "
                             f"got seq_len={seq_len}, n_labels={n_labels}, n_symbols={n_symbols}")
        self.seq_len, self.n_symbols, self.n_labels = int(seq_len), int(n_symbols), int(n_labels)
        self.vocab_size = self.n_symbols
        self.teacher_seed = teacher_seed
        self._table = make_rng(teacher_seed).integers(0, self.n_labels, (self.n_symbols, self.n_symbols))

    def sample(self, batch_size, rng):
        tokens = rng.integers(0, self.n_symbols, (batch_size, self.seq_len))
        previous = np.concatenate([np.zeros_like(tokens[:, :1]), tokens[:, :-1]], axis=1)
        return tokens, self._table[previous, tokens]


class SourceReversalTask(Task):
    """Reverse a source sequence of varying length, for an encoder-decoder model (``TinySeq2Seq``).

    The source is L symbols from [0, n_symbols), L uniform in [min_tokens, n_tokens], padded to
    n = ``n_tokens`` with PAD = n_symbols; the target is the source reversed, then an end token.
    The two sides have vocabularies of their own: the source's is the symbols and PAD
    (n_symbols + 1), the target's the symbols, BOS = n_symbols (the start token) and
    EOS = n_symbols + 1 (``vocab_size`` = n_symbols + 2, the classes predicted). A batch is
    ``((src, tgt_in, src_key_padding_mask), tgt_out)``, the model's inputs and the targets::

        src                   (B, n)      s[0] ... s[L-1]  PAD ... PAD
        src_key_padding_mask  (B, n)      False ...        True ... True    (src == PAD)
        tgt_out               (B, n + 1)  s[L-1] ... s[0]  EOS  -100 ... -100
        tgt_in                (B, n + 1)  BOS  tgt_out[0] ... tgt_out[n-1]  (EOS after the end)

    so ``TinySeq2Seq(src_vocab_size, vocab_size, ..., max_src_len=n, max_tgt_len=n + 1)`` and
    ``fit`` train it directly (teacher forcing: position t sees BOS and the answer before t).
    The target is one token longer than the source and ends at a place set by L, so the
    decoder must read the source, through the cross-attention: its own input (the answer
    so far) says nothing about what comes next.
    """

    name = "source-reversal"

    def __init__(self, n_tokens=8, n_symbols=10, min_tokens=1):
        if not 1 <= min_tokens <= n_tokens or n_symbols < 2:
            raise ValueError(f"SourceReversalTask needs 1 <= min_tokens <= n_tokens and n_symbols >= 2, "
                             f"got min_tokens={min_tokens}, n_tokens={n_tokens}, n_symbols={n_symbols}")
        self.n_tokens, self.n_symbols, self.min_tokens = int(n_tokens), int(n_symbols), int(min_tokens)
        self.src_vocab_size = self.n_symbols + 1  # + PAD
        self.vocab_size = self.n_symbols + 2  # + BOS, EOS
        self.seq_len = self.n_tokens + 1  # the target's length

    @property
    def pad(self):
        return self.n_symbols

    @property
    def bos(self):
        return self.n_symbols

    @property
    def eos(self):
        return self.n_symbols + 1

    def sample(self, batch_size, rng):
        n = self.n_tokens
        lengths = rng.integers(self.min_tokens, n + 1, batch_size)  # (B,)
        padding = np.arange(n)[None, :] >= lengths[:, None]  # (B, n), True past the end
        src = np.where(padding, self.pad, rng.integers(0, self.n_symbols, (batch_size, n)))  # (B, n)
        tgt_out = np.full((batch_size, n + 1), IGNORE)  # (B, n + 1)
        for b, L in enumerate(lengths):
            tgt_out[b, :L] = src[b, :L][::-1]
            tgt_out[b, L] = self.eos
        tgt_in = np.concatenate([np.full((batch_size, 1), self.bos), tgt_out[:, :-1]], axis=1)  # (B, n + 1)
        tgt_in[tgt_in == IGNORE] = self.eos  # after the end: never scored, never seen by a scored position
        return src, tgt_in, padding, tgt_out

    def batch(self, batch_size=32, seed=0):
        """One batch ``((src, tgt_in, src_key_padding_mask), tgt_out)`` from ``seed``."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        src, tgt_in, padding, tgt_out = self.sample(int(batch_size), make_rng(seed))
        return (src.astype(np.int64), tgt_in.astype(np.int64), padding), tgt_out.astype(np.int64)

    def answer(self, src):
        """The target sequences (without EOS) of a batch of sources, as a list of arrays."""
        return [row[row != self.pad][::-1] for row in np.asarray(src)]


def sequence_accuracy(predicted, targets, ignore_index=IGNORE):
    """The fraction of sequences whose every scored position (targets != ignore_index) is right.

    ``predicted`` (B, T) integer tokens, e.g. from greedy decoding, or logits (B, T, V) (their
    argmax is taken); ``targets`` (B, T)."""
    predicted, targets = np.asarray(predicted), np.asarray(targets)
    if predicted.ndim == targets.ndim + 1:
        predicted = np.argmax(predicted, axis=-1)
    keep = targets != ignore_index
    return float(np.mean(np.all((predicted == targets) | ~keep, axis=1)))


TASKS = {t.name: t for t in (CopyTask, ReverseTask, SortTask, ModularAdditionTask, TeacherLabellingTask,
                             SourceReversalTask)}


def make_task(name, **kwargs):
    """A task by name: "copy", "reverse", "sort", "modadd", "teacher" or "source-reversal"."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose one of {sorted(TASKS)}")
    return TASKS[name](**kwargs)
