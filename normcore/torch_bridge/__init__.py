"""The bridge to PyTorch: the same model in ``torch.nn``, and a side-by-side comparison.

    from normcore.torch_bridge import to_torch, compare
    tmodel = to_torch(model)         # a torch.nn.Module with model's weights, buffers and mode
    report = compare(model, x)       # forward and backward in both; a table; report.passed
    report = compare_optimizer(opt)  # 5 steps of opt and its torch.optim twin; a table

torch is imported inside the functions, never at import time: ``import normcore`` (and even
``import normcore.torch_bridge``) works without it.

One file per family, each short enough to read at once:

    core.py         the registries, to_torch, key_map, from_torch (both directions)
    norms.py        LayerNorm, RMSNorm, BatchNorm (and Renorm, Ghost), InstanceNorm, GroupNorm, DyT
    layers.py       Linear, activations, SoftCap, Softmax, Dropout, Embedding, positions, Sequential
    attention.py    attention (torch's nn.MultiheadAttention; a twin for QK-norm and soft-capping)
    blocks.py       feed-forward, TransformerBlock (every position), the tiny language model
    decoder.py      the decoder block, the encoder-decoder model
    losses.py       CrossEntropyLoss (and its z-loss), MSELoss
    weights.py      WeightNorm (torch's weight_norm parametrization), WSLinear, LayerScale, ReZero
    comparison.py   compare, its rows and report, the tolerances
    optimizers.py   compare_optimizer

How the mapping works: ``CONVERTERS`` maps a normcore class to a function ``(module, sub)``
returning the torch module, where ``sub(child)`` converts a child. Subclasses (the fast tier,
a layer you derived) use their nearest registered base class. Parameter and buffer names are
the same on both sides (normcore uses PyTorch's), so the weights travel as a state dict with
``strict=True``: a mapping that forgot a parameter fails loudly instead of comparing against
a default. Where torch's layer stores the same numbers under other names
(``nn.MultiheadAttention``'s ``in_proj_weight`` holds q, k and v stacked;
``nn.TransformerEncoderLayer`` calls the feed-forward ``linear1``, ``linear2``), the torch
module carries ``normcore_keys``: normcore key -> (torch key, rows of it), and ``key_map``
resolves every key of a model through it (``WeightNorm`` becomes torch's Linear under the
``weight_norm`` parametrization: weight_g, weight_v -> ``parametrizations.weight.original0``,
``original1``). Where torch has no one-to-one layer (learned positions, DyT, SoftCap, the
z-loss, the Transformer block with RMSNorm or DyT, DeepNorm's alpha, no norm, Peri-LN's two
norms, the reordered norm, LayerNorm Scaling, attention with QK-norm or soft-capped scores, the
tiny language model, WSLinear, Batch Renorm, Ghost BatchNorm, LayerScale, ReZero), a family file defines
small ``torch.nn.Module`` twins in a function cached with ``functools.cache`` (built on first
use, written in torch ops with torch's own norms); they also hold the subclasses of torch's
own layers that are called as normcore's are (attention returning its output alone unless
asked for its weights, normcore's ``causal`` flag; BatchNorm whose training forward is Batch
Renorm's, or BatchNorm applied chunk by chunk).

The other way, ``from_torch(torch_module)`` builds the normcore twin of a torch module and
loads its weights (``from_torch_supported()`` lists the torch classes it knows), e.g. to run
PyTorch's own test samples of ``nn.MultiheadAttention`` through normcore. A module under a
``torch.nn.utils.parametrize`` parametrization is looked up by its parametrization first
(``_WeightNorm``: a Linear under ``weight_norm`` becomes a ``WeightNorm``).

Dropout: in evaluation both sides are the identity and compare equal. In training the two
draw their masks from different generators, so outputs differ; ``compare`` then reports a
failure, which is the truth, not a bug of the bridge.

Adding the twin of a new layer (say ``nc.SoftCap``) touches one family file (a new family:
a new file, imported below):

1. A converter: ``@converts(nn.SoftCap)`` on ``def _softcap(m, sub)`` returning the torch
   module with the layer's arguments (``_torch().nn`` for torch's own layer; children
   through ``sub(child)``). Never ``import torch`` at the top of the file.
2. If torch has no such layer: its twin, a ``torch.nn.Module`` whose parameters and buffers
   have normcore's state dict names, defined inside a ``@functools.cache`` function of the
   family file (``dyt_twin()`` in norms.py is the smallest example). Where torch's module
   names an array otherwise (``torch.nn.utils.parametrizations.weight_norm`` keeps
   ``WeightNorm``'s ``weight_g``, ``weight_v`` as ``parametrizations.weight.original0``,
   ``original1``), the torch module's ``normcore_keys`` maps the names.
3. The other way, if wanted: an entry in the family's ``@builds_from_torch`` function,
   ``{torch class: lambda t, sub: normcore module}``.
4. A case in tests/test_torch_bridge.py's ``cases()``: ``compare`` in float64, every row to
   1e-9 (``test_every_supported_class_has_a_round_trip_case`` fails until there is one).
   ``supported()`` then lists the layer.
"""

from . import attention, blocks, decoder, layers, losses, norms, weights  # noqa: F401 (they register their layers)
from .attention import attention_keys
from .comparison import TOLERANCES, BridgeReport, Row, compare
from .core import (CONVERTERS, builds_from_torch, converts, from_torch, from_torch_supported, key_map, supported,
                   to_torch)
from .decoder import decoder_keys
from .norms import RUNNING_NORMS
from .optimizers import OptimizerReport, compare_optimizer

__all__ = [
    "to_torch", "key_map", "supported", "from_torch", "from_torch_supported",
    "compare", "compare_optimizer", "Row", "BridgeReport", "OptimizerReport", "TOLERANCES",
    "attention_keys", "decoder_keys", "CONVERTERS", "converts", "builds_from_torch", "RUNNING_NORMS",
]
