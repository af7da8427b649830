"""``normcore compare MODEL``: a built-in model in normcore and in PyTorch, side by side."""

import argparse
import sys

import numpy as np

DESCRIPTION = """\
Build MODEL in normcore with random parameters, convert it to torch.nn with
normcore.torch_bridge.to_torch (the same weights and running statistics), run
both forward and backward on the same random input and upstream gradient,
and print, for the output, the input gradient, every parameter gradient and
every buffer, the largest absolute and relative difference, the index where
they differ most, and ok/FAIL at a tolerance fitting the dtype (float64 1e-9,
float32 1e-4). Needs PyTorch. Exit status 0 when everything matches, 1 when
something differs, 2 for a usage error or when PyTorch is not installed."""

EPILOG = """\
models:
  {models}

examples:
  normcore compare layernorm               a LayerNorm, float64, training mode
  normcore compare block-deepnorm --eval   a DeepNorm block in evaluation mode
  normcore compare batchnorm --fast        the fast tier's BatchNorm1d
  normcore compare tiny-transformer --dtype float32"""


def _models():
    """name -> (description, build(nc_namespace, rng) -> (module, inputs))."""
    def norm(name, *args, shape):
        def build(ns, rng):
            from ..zoo import randomize_parameters
            m = randomize_parameters(getattr(ns, name)(*args), rng)
            return m, (rng.standard_normal(shape) * 2 + 0.5,)
        return build

    def block(position):
        def build(ns, rng):
            from ..zoo import perturb_parameters
            tier = "fast" if ns.__name__ == "normcore.fast" else "reference"
            import normcore as nc
            m = nc.TransformerBlock(8, 2, 16, position=position, n_layers=3, rng=rng,
                                    norm_tier=tier)
            return perturb_parameters(m, rng), (rng.standard_normal((2, 5, 8)),)
        return build

    def attention(ns, rng):
        import normcore as nc
        from ..zoo import perturb_parameters
        m = perturb_parameters(nc.CausalSelfAttention(8, 2, rng=rng), rng)
        return m, (rng.standard_normal((2, 5, 8)),)

    def tiny(ns, rng):
        import normcore as nc
        from ..zoo import perturb_parameters
        tier = "fast" if ns.__name__ == "normcore.fast" else "reference"
        m = nc.TinyTransformer(11, 8, 2, 2, 6, d_ff=16, rng=rng, norm_tier=tier)
        return perturb_parameters(m, rng, scale=0.2), (rng.integers(0, 11, (2, 6)),)

    def cross_entropy(ns, rng):
        import normcore as nc
        loss = nc.CrossEntropyLoss(weight=rng.uniform(0.5, 2.0, 5), label_smoothing=0.1)
        return loss, (rng.standard_normal((2, 5, 4)), rng.integers(0, 5, (2, 4)))

    def masked(ns, rng):
        import normcore as nc
        from ..zoo import perturb_parameters
        m = perturb_parameters(nc.MultiheadSelfAttention(8, 2, rng=rng), rng)
        padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)
        return m, (rng.standard_normal((2, 5, 8)), padding)

    return {
        "layernorm": ("LayerNorm(6) on (4, 6)", norm("LayerNorm", 6, shape=(4, 6))),
        "rmsnorm": ("RMSNorm(6) on (4, 6)", norm("RMSNorm", 6, shape=(4, 6))),
        "batchnorm": ("BatchNorm1d(3) on (5, 3, 4)",
                      norm("BatchNorm1d", 3, shape=(5, 3, 4))),
        "batchnorm2d": ("BatchNorm2d(3) on (4, 3, 2, 2)",
                        norm("BatchNorm2d", 3, shape=(4, 3, 2, 2))),
        "groupnorm": ("GroupNorm(2, 4) on (3, 4, 5)",
                      norm("GroupNorm", 2, 4, shape=(3, 4, 5))),
        "instancenorm": ("InstanceNorm1d(3) on (2, 3, 5)",
                         norm("InstanceNorm1d", 3, shape=(2, 3, 5))),
        "attention": ("CausalSelfAttention(8, 2) on (2, 5, 8)", attention),
        "attention-masked": ("MultiheadSelfAttention, not causal, key padding",
                             masked),
        "block-pre": ("TransformerBlock, Pre-Norm", block("pre")),
        "block-post": ("TransformerBlock, Post-Norm", block("post")),
        "block-deepnorm": ("TransformerBlock, DeepNorm (N=3)", block("deepnorm")),
        "block-none": ("TransformerBlock without norms", block("none")),
        "tiny-transformer": ("TinyTransformer, 2 Pre-Norm blocks", tiny),
        "cross-entropy": ("CrossEntropyLoss, (N, C, d) logits, weights, smoothing",
                          cross_entropy),
    }


MODELS = _models()


def _model_name(text):
    if text not in MODELS:
        raise argparse.ArgumentTypeError(
            f"unknown {text[:20]!r}, see --help")
    return text


def add_arguments(parser):
    parser.description = DESCRIPTION
    width = max(map(len, MODELS))
    parser.epilog = EPILOG.format(models="\n  ".join(
        f"{name:<{width}}  {desc}" for name, (desc, _) in MODELS.items()))
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("model", metavar="MODEL", type=_model_name,
                        help="which built-in model (listed below)")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                        help="parameters and inputs (default float64)")
    parser.add_argument("--eval", action="store_true",
                        help="evaluation mode (default: training mode)")
    parser.add_argument("--fast", action="store_true",
                        help="the norms of the fast tier, normcore.fast")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of parameters, inputs and dy (default 0)")


def _cast(module, dtype):
    """The module with every floating parameter and buffer in ``dtype``."""
    for p in module.parameters():
        p.data = p.data.astype(dtype)
        p.grad = np.zeros_like(p.data)
    for mod_name, mod in module.named_modules():
        for name, b in list(vars(mod).get("_buffers", {}).items()):
            if b is not None and np.issubdtype(b.dtype, np.floating):
                setattr(mod, name, b.astype(dtype))
    return module


def run(args):
    try:
        import torch  # noqa: F401
    except ImportError:
        print("normcore compare: PyTorch is not installed; it is the oracle this "
              "command\ncompares against: pip install torch "
              "(or pip install -e '.[torch]')", file=sys.stderr)
        return 2
    import normcore
    from .. import fast
    from ..torch_bridge import compare
    rng = np.random.default_rng(args.seed)
    module, inputs = MODELS[args.model][1](fast if args.fast else normcore, rng)
    dtype = np.dtype(args.dtype)
    _cast(module, dtype)
    inputs = tuple(x.astype(dtype) if np.issubdtype(x.dtype, np.floating) else x
                   for x in inputs)
    if args.eval:
        module.eval()
    report = compare(module, *inputs, seed=args.seed)
    return 0 if report.passed else 1
