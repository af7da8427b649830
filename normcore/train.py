"""The training loop: ``fit`` trains a model on a task and returns its per-step history as arrays."""


import numpy as np

from .nn.losses import CrossEntropyLoss
from .optim.optimizers import clip_grad_norm, grad_norm
from ._array import flag
from .i18n import translator
from .progress import Progress, Stopwatch
from .tasks import Task, token_accuracy

_ = translator("cli")


def _block_params(model):
    blocks = getattr(model, "blocks", None)
    return [b.parameters() for b in blocks] if blocks is not None else []


def loss_and_backward(model, loss_fn, logits, targets):
    """``loss_fn(logits, targets)``, then ``model.backward`` from its gradient; returns the loss.

    With integer (class) targets the logits (*, V) go in flattened to (N, V) and the targets
    to (N,): PyTorch's layout, with the classes on axis 1; dL/dlogits comes back in the
    logits' shape. Other targets (e.g. ``MSELoss``'s) go in as they are.
    """
    targets = np.asarray(targets)
    if np.issubdtype(targets.dtype, np.integer):  # (B*T, V) logits, (B*T,) targets
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    else:
        loss = loss_fn(logits, targets)
    model.backward(loss_fn.backward().reshape(logits.shape))
    return float(loss)


def fit(model, batches_or_task, optimizer, steps, schedule=None, clip=None, progress=True,
        loss_fn=None, batch_size=32, seed=0):
    """Train ``model`` for ``steps`` optimizer steps; return the history as NumPy arrays.

    Each step::

        tokens, targets = next batch
        optimizer.lr = schedule(step)              if a schedule is given
        zero_grad; logits = model(tokens)                       (B, T, V)
        loss = loss_fn(logits.reshape(-1, V), targets.reshape(-1))   PyTorch's (N, C) layout
        model.backward(loss_fn.backward().reshape(B, T, V))
        record the gradient norms (before clipping)
        clip_grad_norm(params, clip)               if clip is given
        optimizer.step()

    Parameters
    ----------
    batches_or_task : Task or iterable of (tokens, targets)
        A ``Task`` is sampled with ``batch_size`` and ``seed``; an iterable must supply at
        least ``steps`` batches. ``tokens`` may be a tuple of inputs, passed to the model as
        separate arguments (``SourceReversalTask``'s (src, tgt_in, src_key_padding_mask)).
    loss_fn : a loss module, default ``CrossEntropyLoss()``. With integer (class) targets it
        gets the logits flattened to (B*T, V) and the targets to (B*T,), as PyTorch's
        cross-entropy expects the classes on axis 1; with float targets (e.g. ``MSELoss``)
        it gets both as they are.
    progress : bool
        Draw a progress bar on stderr.

    Returns
    -------
    dict of arrays: ``loss`` (steps,), ``accuracy`` (steps,) token accuracy on the training
    batch (before the step; NaN for float targets), ``lr`` (steps,), ``grad_norm`` (steps,) the global gradient
    norm, ``block_grad_norm`` (steps, n_blocks) the gradient norm of each ``model.blocks[i]``
    (0 columns if the model has no ``blocks``), and ``seconds`` the wall time of the run.
    The model is put in training mode first (Dropout active). A loss that turns NaN or inf
    is recorded as it is; training goes on.
    """
    if steps < 1:
        raise ValueError(f"fit: steps must be >= 1, got {steps}")
    progress = flag(progress, "progress", "fit")
    loss_fn = CrossEntropyLoss() if loss_fn is None else loss_fn
    if isinstance(batches_or_task, Task):
        batches = batches_or_task.batches(batch_size, seed)
    else:
        batches = iter(batches_or_task)
    params = model.parameters()
    blocks = _block_params(model)
    history = {
        "loss": np.zeros(steps), "accuracy": np.zeros(steps), "lr": np.zeros(steps),
        "grad_norm": np.zeros(steps), "block_grad_norm": np.zeros((steps, len(blocks))),
    }
    bar = Progress(total=steps, width=20) if progress else None
    watch = Stopwatch()
    model.train()
    for step in range(steps):
        try:
            tokens, targets = next(batches)
        except StopIteration:
            raise ValueError(f"fit: expected at least {steps} batches, one per step; the batches ran out "
                             f"after {step} of {steps} steps") from None
        if schedule is not None:
            optimizer.lr = schedule(step)
        optimizer.zero_grad()
        logits = model(*tokens) if isinstance(tokens, tuple) else model(tokens)  # (B, T, V); a tuple:
        # several inputs, e.g. an encoder-decoder's (source, target, source padding mask)
        classes = np.issubdtype(np.asarray(targets).dtype, np.integer)
        loss = loss_and_backward(model, loss_fn, logits, targets)
        history["loss"][step] = loss
        history["accuracy"][step] = (token_accuracy(logits, targets, getattr(loss_fn, "ignore_index", -100))
                                     if classes else np.nan)
        history["lr"][step] = optimizer.lr
        history["grad_norm"][step] = grad_norm(params)
        history["block_grad_norm"][step] = [grad_norm(b) for b in blocks]
        if clip is not None:
            clip_grad_norm(params, clip)
        optimizer.step()
        if bar is not None:
            bar.update(step + 1, label=_("step {step}/{steps} loss {loss} lr {lr}").format(
                step=step + 1, steps=steps, loss=f"{loss:.4f}", lr=f"{optimizer.lr:.2e}"))
    if bar is not None:
        bar.finish()
    history["seconds"] = np.array(watch.elapsed())
    return history
