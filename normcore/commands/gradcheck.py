"""``normcore gradcheck``: every layer's analytic gradients against central differences."""

import argparse
import sys
import textwrap

from ..gradcheck import NOISE_NOTE, gradcheck
from ..layer_cases import all_cases
from ._options import positive_float, seed

WIDTH = 80

DESCRIPTION = """\
Check every layer's hand-derived backward (the gradient of the input and of
each parameter) against central differences of L = sum(y * dy), in float64,
with random parameters and a random upstream gradient dy. One row per tensor,
under its layer; exit status 1 if any gradient fails, 2 for a usage error
(such as --only matching no layer)."""

EPILOG = """\
examples:
  normcore gradcheck                  every layer, in training and evaluation
  normcore gradcheck --only batchnorm the cases whose label contains batchnorm
  normcore gradcheck --tol 1e-9       a stricter tolerance"""

NORM_NAMES = "in the norms, weight is gamma and bias is beta (PyTorch's names)"


def add_arguments(parser):
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--tol", type=positive_float, default=1e-7,
                        help="largest relative error that passes (default 1e-7)")
    parser.add_argument("--seed", type=seed, default=0,
                        help="seed of the inputs, parameters and upstream gradients (default 0)")
    parser.add_argument("--only", metavar="TEXT",
                        help="check only the cases whose label contains TEXT (any case)")


def has_norm(module):
    """True when ``module`` is or contains a norm, whose ``weight`` and ``bias`` are gamma and
    beta."""
    return any(hasattr(type(m), "gamma") for _, m in module.named_modules())


def run(args):
    cases = all_cases(args.seed)
    if args.only is not None:
        chosen = [c for c in cases if args.only.lower() in c.label.lower()]
        if not chosen:
            families = sorted({c.label.split()[0] for c in cases})
            message = (f"normcore gradcheck: error: argument --only: {args.only!r} matches no "
                       f"layer; the labels start with {', '.join(families)}")
            print(textwrap.fill(message, WIDTH, subsequent_indent="  "), file=sys.stderr)
            return 2
        cases = chosen
    reports = [(case, gradcheck(case.module, *case.inputs, tol=args.tol, seed=args.seed))
               for case in cases]
    checks = [c for _, report in reports for c in report.checks]
    name_w = max([len("layer / tensor")] + [2 + len(c.name) for c in checks])
    shape_w = max([len("shape")] + [len(str(c.shape)) for c in checks])
    head = f"{'layer / tensor':<{name_w}}  {'shape':<{shape_w}}  {'rel error':>9}  result"
    print(head)
    print("-" * len(head))
    failed = 0
    for case, report in reports:
        print(case.label)
        for c in report.checks:
            failed += not c.passed
            print(f"{'  ' + c.name:<{name_w}}  {str(c.shape):<{shape_w}}  {c.rel_error:>9.1e}  "
                  f"{c.verdict}")
    print("-" * len(head))
    if any(c.at_noise_floor for c in checks):
        print(NOISE_NOTE)
    if any(has_norm(case.module) for case in cases):
        print(NORM_NAMES)
    print(f"{len(cases)} {'layer' if len(cases) == 1 else 'layers'} checked in float64 with a random "
          "upstream gradient:")
    print(f"{'all gradients pass' if not failed else f'{failed} gradient(s) FAIL'} "
          f"(tolerance {args.tol:g})")
    return 1 if failed else 0
