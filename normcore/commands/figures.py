"""``normcore figures``: run the experiments and write their figures (PNG) into a folder.

The full runs write into ``figures/`` (the committed figures); quick runs into ``figures/quick/``
(ignored by git), so that a quick run never overwrites a committed figure."""

import sys
import time

from .. import experiments

FULL_OUTDIR = "figures"
QUICK_OUTDIR = "figures/quick"


def add_arguments(parser):
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"experiments to run (default: all): {', '.join(experiments.EXPERIMENTS)}")
    parser.add_argument("--quick", action="store_true",
                        help="the small configuration the tests use (seconds each), written to "
                             f"{QUICK_OUTDIR}/ and marked as a quick run in each title")
    parser.add_argument("--outdir", default=None,
                        help=f"folder the PNGs are written to (default: {FULL_OUTDIR}, with --quick "
                             f"{QUICK_OUTDIR})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the data and the initialisations")


class ProgressLine:
    """A one-line progress display on stderr: ``[2/7] covariate_shift  |#####     | 50%  label``."""

    def __init__(self, prefix, stream=None, width=24):
        self.prefix, self.width = prefix, width
        self.stream = sys.stderr if stream is None else stream  # looked up now: tests replace sys.stderr
        self.interactive = getattr(stream, "isatty", lambda: False)()
        self._last = -1

    def __call__(self, done, total, label=""):
        frac = min(max(done / total if total else 1.0, 0.0), 1.0)
        percent = int(100 * frac)
        if not self.interactive and percent < self._last + 25 and done < total:
            return  # in a log file, print only every quarter
        self._last = percent
        bar = "#" * int(self.width * frac)
        line = f"{self.prefix} |{bar:<{self.width}}| {percent:3d}%  {label}"
        self.stream.write(("\r" + line + "\033[K") if self.interactive else line + "\n")
        self.stream.flush()

    def finish(self, message):
        self.stream.write(("\r" if self.interactive else "") + f"{self.prefix} {message}"
                          + ("\033[K" if self.interactive else "") + "\n")
        self.stream.flush()


def run(args):
    names = args.names or experiments.EXPERIMENTS
    unknown = [n for n in names if n not in experiments.EXPERIMENTS]
    if unknown:
        print(f"normcore figures: unknown experiment(s) {', '.join(unknown)}; "
              f"expected some of: {', '.join(experiments.EXPERIMENTS)}", file=sys.stderr)
        return 2
    mode = "quick" if args.quick else "full"
    if args.outdir is None:
        args.outdir = QUICK_OUTDIR if args.quick else FULL_OUTDIR
    print(f"normcore figures: {len(names)} experiment(s), {mode} mode, writing to {args.outdir}/", file=sys.stderr)
    written, skipped, start = [], [], time.perf_counter()
    for i, name in enumerate(names, 1):
        display = ProgressLine(f"[{i}/{len(names)}] {name:<18}")
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
    print(f"normcore figures: wrote {len(written)} figure(s) in {time.perf_counter() - start:.1f} s"
          + (f"; skipped {len(skipped)} missing: {', '.join(skipped)}" if skipped else ""), file=sys.stderr)
    return 0
