"""``normcore figures``: run the experiments and write their figures (PNG) into a folder.

The full runs write into ``figures/`` (the committed figures); quick runs into ``figures/quick/``
(ignored by git), so that a quick run never overwrites a committed figure."""

import argparse
import sys
import textwrap
import time

from .. import experiments
from ..progress import Progress
from ._options import seed

FULL_OUTDIR = "figures"
QUICK_OUTDIR = "figures/quick"


DESCRIPTION = """\
Run the experiments (each reproduces, at laptop scale and with normcore's own
layers, a claim about normalization) and write their figures as PNG files.
Data are synthetic; nothing is downloaded. Progress goes to stderr."""

EPILOG = """\
examples:
  normcore figures                                 every experiment, full size
  normcore figures invariance --quick              into figures/quick/, seconds
  normcore figures saturation warmup --outdir /tmp/figs"""


def add_arguments(parser):
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"experiments to run (default: all): {', '.join(experiments.EXPERIMENTS)}")
    parser.add_argument("--quick", action="store_true",
                        help="the small configuration the tests use, written to "
                             f"{QUICK_OUTDIR}/ and marked as a quick run in each title. Most "
                             "experiments take seconds, a few (warmup, dyt_training, "
                             "rmsnorm_vs_layernorm, peri_ln) a minute or more; all 22 take about "
                             "2.5 minutes of one core's time: 3 minutes on 2 cores at a load of 6, "
                             "20 at a load of 15")
    parser.add_argument("--outdir", default=None,
                        help=f"folder the PNGs are written to (default: {FULL_OUTDIR}, with --quick "
                             f"{QUICK_OUTDIR})")
    parser.add_argument("--seed", type=seed, default=0,
                        help="seed of the data and the initialisations (default 0)")


def run(args):
    names = args.names or experiments.EXPERIMENTS
    unknown = [n for n in names if n not in experiments.EXPERIMENTS]
    if unknown:
        print(textwrap.fill(f"normcore figures: error: argument NAME: unknown experiment(s) "
                            f"{', '.join(unknown)}; expected some of: "
                            f"{', '.join(experiments.EXPERIMENTS)}", 80, subsequent_indent="  ",
                            break_on_hyphens=False), file=sys.stderr)
        return 2
    mode = "quick" if args.quick else "full"
    if args.outdir is None:
        args.outdir = QUICK_OUTDIR if args.quick else FULL_OUTDIR
    print(textwrap.fill(f"normcore figures: {len(names)} experiment(s), {mode} mode, writing to "
                        f"{args.outdir}/", 80, break_on_hyphens=False), file=sys.stderr)
    written, skipped, start = [], [], time.perf_counter()
    for i, name in enumerate(names, 1):
        display = Progress(f"[{i}/{len(names)}] {name:<18} ")
        t0 = time.perf_counter()
        try:
            _, paths = experiments.run_and_plot(name, quick=args.quick, outdir=args.outdir, seed=args.seed,
                                                progress=display)
        except experiments.ExperimentNotFound as err:
            display.finish(f"skipped: {err}")
            skipped.append(name)
            continue
        written += paths
        display.finish(f"done in {time.perf_counter() - t0:5.1f} s: {', '.join(p.name for p in paths)}")
    print(textwrap.fill(f"normcore figures: wrote {len(written)} figure(s) in "
                        f"{time.perf_counter() - start:.1f} s"
                        + (f"; skipped {len(skipped)} missing: {', '.join(skipped)}"
                           if skipped else ""),
                        80, subsequent_indent="  ", break_on_hyphens=False), file=sys.stderr)
    return 0
