"""``normcore figures``: run the experiments and write their figures (PNG) into a folder."""

import argparse
import sys
import textwrap
import time

from .. import experiments
from ._options import seed


DESCRIPTION = """\
Run the experiments (each reproduces, at laptop scale and with normcore's own
layers, a claim about normalization) and write their figures as PNG files.
Data are synthetic; nothing is downloaded. Progress goes to stderr."""

EPILOG = """\
examples:
  normcore figures                                 every experiment, full size
  normcore figures invariance --quick --outdir /tmp/figs
  normcore figures saturation warmup               two of them, into figures/"""


def add_arguments(parser):
    parser.description = DESCRIPTION
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"experiments to run (default: all): {', '.join(experiments.EXPERIMENTS)}")
    parser.add_argument("--quick", action="store_true",
                        help="the small configuration the tests use (seconds each)")
    parser.add_argument("--outdir", default="figures",
                        help="folder the PNGs are written to (default: figures)")
    parser.add_argument("--seed", type=seed, default=0,
                        help="seed of the data and the initialisations (default 0)")


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
        line = f"{self.prefix} |{bar:<{self.width}}| {percent:3d}%  "
        room = 80 - len(line)  # the label is cut to keep the line within 80 columns
        line += label if len(label) <= room else label[:max(0, room - 3)] + "..."
        self.stream.write(("\r" + line + "\033[K") if self.interactive else line + "\n")
        self.stream.flush()

    def finish(self, message):
        """The last line, ``prefix message``; a long message goes on in lines aligned under it."""
        indent = len(self.prefix) + 1
        first, *rest = textwrap.wrap(message, max(30, 80 - indent), break_on_hyphens=False) or [""]
        self.stream.write(("\r" if self.interactive else "") + f"{self.prefix} {first}"
                          + ("\033[K" if self.interactive else "") + "\n")
        for line in rest:
            self.stream.write(" " * indent + line + "\n")
        self.stream.flush()


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
    print(textwrap.fill(f"normcore figures: {len(names)} experiment(s), {mode} mode, writing to "
                        f"{args.outdir}/", 80, break_on_hyphens=False), file=sys.stderr)
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
    print(textwrap.fill(f"normcore figures: wrote {len(written)} figure(s) in "
                        f"{time.perf_counter() - start:.1f} s"
                        + (f"; skipped {len(skipped)} missing: {', '.join(skipped)}"
                           if skipped else ""),
                        80, subsequent_indent="  ", break_on_hyphens=False), file=sys.stderr)
    return 0
