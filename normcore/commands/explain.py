"""``normcore explain NORM``: one norm's gradient, from the loss back to x, one node at a time."""

import argparse

from ..derivations import KINDS, step_through


def parse_shape(text):
    """'2x4' -> (2, 4); argparse reports anything else as a usage error."""
    try:
        shape = tuple(int(n) for n in text.lower().split("x"))
    except ValueError:
        shape = ()
    if not shape or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"expected a shape such as 2x4 or 2x3x4 (positive sizes), got {text!r}")
    return shape


def add_arguments(parser):
    parser.add_argument("norm", choices=list(KINDS), help="which computation to step through")
    parser.add_argument("--shape", type=parse_shape, default=(3, 4), metavar="AxB",
                        help="input shape, e.g. 2x4 (default 3x4). BatchNorm takes (N, C), (N, C, L) or "
                             "(N, C, H, W); the others work over the last axis")
    parser.add_argument("--seed", type=int, default=0, help="seed of x, gamma, beta and dy (default 0)")
    parser.add_argument("--causal", action="store_true",
                        help="softmax only: mask the scores above the diagonal with -inf, as causal "
                             "attention does (needs a square shape such as 4x4)")
    parser.add_argument("--no-latex", action="store_true", help="leave out the LaTeX lines")


def run(args):
    try:
        st = step_through(args.norm, shape=args.shape, seed=args.seed, causal=args.causal)
    except ValueError as err:
        print(f"normcore explain: {err}")
        return 2
    print(st.text(width=80, latex=not args.no_latex))
    return 0 if st.passed else 1
