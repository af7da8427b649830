"""``normcore gradcheck``: every layer's analytic gradients against central differences."""

import sys

from ..gradcheck import NOISE_NOTE, gradcheck
from ..i18n import N_, translator
from ..i18n.width import display_width, fill, pad
from ..layer_cases import all_cases
from ._options import positive_float, seed

_ = translator("cli")
WIDTH = 80

DESCRIPTION = N_("""\
Check every layer's hand-derived backward (the gradient of the input and of
each parameter) against central differences of L = sum(y * dy), in float64,
with random parameters and a random upstream gradient dy. One row per tensor,
under its layer; exit status 1 if any gradient fails, 2 for a usage error
(such as --only matching no layer).""")

EPILOG = N_("""\
examples:
  normcore gradcheck                  every layer, in training and evaluation
  normcore gradcheck --only batchnorm the cases whose label contains batchnorm
  normcore gradcheck --tol 1e-9       a stricter tolerance""")

NORM_NAMES = N_("in the norms, weight is gamma and bias is beta (PyTorch's names)")


def add_arguments(parser):
    parser.description = _(DESCRIPTION)
    parser.epilog = _(EPILOG)
    parser.add_argument("--tol", type=positive_float, default=1e-7,
                        help=_("largest relative error that passes (default {tol})").format(tol="1e-7"))
    parser.add_argument("--seed", type=seed, default=0,
                        help=_("seed of the inputs, parameters and upstream gradients "
                               "(default %(default)s)"))
    parser.add_argument("--only", metavar="TEXT",
                        help=_("check only the cases whose label contains TEXT (any case)"))


def has_norm(module):
    """True when ``module`` is or contains a norm, whose ``weight`` and ``bias`` are gamma and
    beta."""
    return any(hasattr(type(m), "gamma") for _, m in module.named_modules())


def verdict(check):
    """A check's verdict as the tables show it: pass, pass* (at the noise floor) or FAIL."""
    return _("FAIL") if not check.passed else _("pass") + "*" * check.at_noise_floor


def run(args):
    cases = all_cases(args.seed)
    if args.only is not None:
        chosen = [c for c in cases if args.only.lower() in c.label.lower()]
        if not chosen:
            families = sorted({c.label.split()[0] for c in cases})
            message = _("normcore gradcheck: error: argument --only: {text!r} matches no layer; "
                        "the labels start with {families}").format(text=args.only,
                                                                   families=", ".join(families))
            print(fill(message, WIDTH, subsequent_indent="  "), file=sys.stderr)
            return 2
        cases = chosen
    reports = [(case, gradcheck(case.module, *case.inputs, tol=args.tol, seed=args.seed))
               for case in cases]
    checks = [c for _case, report in reports for c in report.checks]
    heads = [_("layer / tensor"), _("shape"), _("rel error"), _("result")]
    name_w = max([display_width(heads[0])] + [2 + len(c.name) for c in checks])
    shape_w = max([display_width(heads[1])] + [len(str(c.shape)) for c in checks])
    error_w = max(9, display_width(heads[2]))
    head = f"{pad(heads[0], name_w)}  {pad(heads[1], shape_w)}  {pad(heads[2], error_w, '>')}  {heads[3]}"
    rule = "-" * display_width(head)
    print(head)
    print(rule)
    failed = 0
    for case, report in reports:
        print(case.shown)
        for c in report.checks:
            failed += not c.passed
            print(f"{'  ' + c.name:<{name_w}}  {str(c.shape):<{shape_w}}  {c.rel_error:>{error_w}.1e}  "
                  f"{verdict(c)}")
    print(rule)
    if any(c.at_noise_floor for c in checks):
        print(_(NOISE_NOTE))
    if any(has_norm(case.module) for case in cases):
        print(_(NORM_NAMES))
    print(_.ngettext("{n} layer checked in float64 with a random upstream gradient:",
                     "{n} layers checked in float64 with a random upstream gradient:",
                     len(cases)).format(n=len(cases)))
    result = (_("all gradients pass") if not failed
              else _("{failed} gradient(s) FAIL").format(failed=failed))
    print(_("{result} (tolerance {tol})").format(result=result, tol=f"{args.tol:g}"))
    return 1 if failed else 0
