"""``normcore bench``: time the norms and a Transformer training step against NumPy and PyTorch."""

from ..bench import run_bench


def add_arguments(parser):
    parser.add_argument("--quick", action="store_true",
                        help="only float32 at (4096, 768), fewer repeats (well under a minute)")
    parser.add_argument("--no-torch", action="store_true", help="do not compare with PyTorch even if installed")


def run(args):
    run_bench(quick=args.quick, torch=None if args.no_torch else "auto")
    return 0
