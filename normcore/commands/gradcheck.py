"""``normcore gradcheck``: every layer's analytic gradients against central differences."""

from ..gradcheck import gradcheck
from ..layer_cases import all_cases


def add_arguments(parser):
    parser.add_argument("--tol", type=float, default=1e-7, help="largest relative error that passes (default 1e-7)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inputs, parameters and upstream gradients")
    parser.add_argument("--only", metavar="TEXT", help="check only the cases whose label contains TEXT")


def run(args):
    cases = [c for c in all_cases(args.seed) if not args.only or args.only.lower() in c.label.lower()]
    width = max(len(c.label) for c in cases) if cases else 10
    print(f"{'layer':<{width}}  {'tensor':<8} {'shape':<14} {'rel error':>9}  result")
    print("-" * (width + 44))
    failed = 0
    for case in cases:
        report = gradcheck(case.module, *case.inputs, tol=args.tol, seed=args.seed)
        for c in report.checks:
            failed += not c.passed
            print(f"{case.label:<{width}}  {c.name:<8} {str(c.shape):<14} {c.rel_error:>9.1e}  "
                  f"{'pass' if c.passed else 'FAIL'}")
    print("-" * (width + 44))
    print(f"{len(cases)} layers checked in float64 with a random upstream gradient:")
    print(f"{'all gradients pass' if not failed else f'{failed} gradient(s) FAIL'} (tolerance {args.tol:g})")
    return 1 if failed else 0
