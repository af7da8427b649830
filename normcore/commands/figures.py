"""``normcore figures``: run the experiments and write their figures (PNG) into a folder.

The full runs write into ``figures/`` (the committed figures); quick runs into ``figures/quick/``
(ignored by git), so that a quick run never overwrites a committed figure."""

import sys

from .. import experiments
from ..i18n import N_, translator
from ..i18n.width import fill
from ..progress import Progress, Stopwatch
from ._options import seed

_ = translator("cli")

FULL_OUTDIR = "figures"
QUICK_OUTDIR = "figures/quick"


DESCRIPTION = N_("""\
Run the experiments (each reproduces, at laptop scale and with normcore's own
layers, a claim about normalization) and write their figures as PNG files.
Data are synthetic; nothing is downloaded. Progress goes to stderr.""")

# What a full run costs, measured: the first seven experiments in a full run on 2 cores at a
# load of 15 (the rest were not timed in that run; several of them are the longest).
FULL_COST = N_("Without --quick, each experiment runs the full configuration its committed figure "
               "comes from and overwrites that figure in {full}/: minutes to tens of minutes each. "
               "The first {timed} alone took {elapsed} minutes on {cores} cores at a load of {load} "
               "({cpu} minutes of one core's time), so all {n} take hours.")

EPILOG = N_("""\
examples:
  normcore figures                                 every experiment, full size
  normcore figures invariance --quick              into figures/quick/, seconds
  normcore figures saturation warmup --outdir /tmp/figs""")


def add_arguments(parser):
    parser.description = _(DESCRIPTION) + "\n\n" + fill(_(FULL_COST).format(
        full=FULL_OUTDIR, timed=7, elapsed=65, cores=2, load=15, cpu=10, n=len(experiments.EXPERIMENTS)), 80)
    parser.epilog = _(EPILOG)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=_("experiments to run (default: all): {names}").format(
                            names=", ".join(experiments.EXPERIMENTS)))
    parser.add_argument("--quick", action="store_true",
                        help=_("the small configuration the tests use, written to {quick}/ and "
                               "marked as a quick run in each title. Most experiments take "
                               "seconds, a few (warmup, dyt_training, rmsnorm_vs_layernorm, "
                               "peri_ln) a minute or more; all {n} take about {minutes} minutes "
                               "of one core's time: {busy} minutes on {cores} cores at a load of "
                               "{load}, {busier} at a load of {heavier}").format(
                            quick=QUICK_OUTDIR, n=len(experiments.EXPERIMENTS), minutes=2.5,
                            busy=3, cores=2, load=6, busier=20, heavier=15))
    parser.add_argument("--outdir", default=None,
                        help=_("folder the PNGs are written to (default: {full}, with --quick "
                               "{quick})").format(full=FULL_OUTDIR, quick=QUICK_OUTDIR))
    parser.add_argument("--seed", type=seed, default=0,
                        help=_("seed of the data and the initialisations (default %(default)s)"))


def _say(message, subsequent_indent="  "):
    """One message of the run on stderr, wrapped at 80 display columns."""
    print(fill(message, 80, subsequent_indent=subsequent_indent), file=sys.stderr)


def run(args):
    names = args.names or experiments.EXPERIMENTS
    unknown = [n for n in names if n not in experiments.EXPERIMENTS]
    if unknown:
        _say(_("normcore figures: error: argument NAME: unknown experiment(s) {unknown}; expected "
               "some of: {names}").format(unknown=", ".join(unknown),
                                          names=", ".join(experiments.EXPERIMENTS)))
        return 2
    if args.outdir is None:
        args.outdir = QUICK_OUTDIR if args.quick else FULL_OUTDIR
    mode = (N_("normcore figures: {n} experiment(s), quick mode, writing to {outdir}/") if args.quick
            else N_("normcore figures: {n} experiment(s), full mode, writing to {outdir}/"))
    _say(_(mode).format(n=len(names), outdir=args.outdir), subsequent_indent="")
    written, skipped, whole = [], [], Stopwatch()
    for i, name in enumerate(names, 1):
        display = Progress(f"[{i}/{len(names)}] {name:<18} ")
        try:
            _figure, paths = experiments.run_and_plot(name, quick=args.quick, outdir=args.outdir, seed=args.seed,
                                                progress=display)
        except experiments.ExperimentNotFound as err:
            display.finish(_("skipped: {reason}").format(reason=err))
            skipped.append(name)
            continue
        written += paths
        display.finish(_("done in {seconds} s: {files}").format(
            seconds=f"{display.watch.elapsed():5.1f}", files=", ".join(p.name for p in paths)))
    message = _("normcore figures: wrote {n} figure(s) in {seconds} s").format(
        n=len(written), seconds=f"{whole.elapsed():.1f}")
    if skipped:
        message += _("; skipped {n} missing: {names}").format(n=len(skipped), names=", ".join(skipped))
    _say(message)
    return 0
