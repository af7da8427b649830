"""``normcore bench``: time both tiers of the norms against PyTorch and the memory floor, a
Transformer training step against PyTorch, and the learning run against its budget."""

from ..i18n import N_, translator
from ..perf.bench import FULL, QUICK, run_bench
from ..perf.cases import SHAPES

_ = translator("cli")

DESCRIPTION = N_("""\
Time forward, backward and forward+backward of LayerNorm, RMSNorm, BatchNorm1d
and GroupNorm in both tiers of normcore (the reference tier nc.LayerNorm, ...,
and the fast tier normcore.fast), and of DyT in its one tier (nc.DyT serves
both), against PyTorch on one thread and on all threads (for DyT, which PyTorch
lacks, the torch bridge's autograd twin), and against the memory floor: the
copies of x and dy that no implementation can avoid. Everything runs
interleaved in one process, round by round. Then a Transformer training step
against the same model in PyTorch, the learning run (4 Pre-Norm blocks learning
to reverse 8 tokens, as the learning test trains them) against its one-minute
budget, and the fast tier's targets beside the measured ratios. The tables go
to stdout as each part ends; a progress display for each part goes to stderr.""")

EPILOG = N_("""\
examples:
  normcore bench --quick             float32 at (4096, 768) only, fewer rounds,
                                     the step on one thread, no learning run
  normcore bench --quick --no-torch  without PyTorch, even if it is installed
  normcore bench                     both shapes, float32 and float64

cost: --quick took 32 s on 2 cores with one of them kept busy (17 s of CPU
time), 20 s of it the norms; the full run takes several minutes, the learning
run alone up to a minute, the steps on all threads far longer on a busy machine.""")


def add_arguments(parser):
    parser.description = _(DESCRIPTION)
    parser.epilog = _(EPILOG)
    parser.add_argument("--quick", action="store_true",
                        help=_("only float32 at {shape}; {quick} rounds of the norms instead of "
                               "{full}, after {quick_warmup} warm-up round instead of {full_warmup}; "
                               "{quick_steps} rounds of the Transformer step instead of {full_steps}, "
                               "on one thread only; no learning run").format(
                            shape=tuple(SHAPES[0]), quick=QUICK["repeats"], full=FULL["repeats"],
                            quick_warmup=QUICK["warmup"], full_warmup=FULL["warmup"],
                            quick_steps=QUICK["step_repeats"], full_steps=FULL["step_repeats"]))
    parser.add_argument("--no-torch", action="store_true",
                        help=_("do not compare with PyTorch even if installed"))


def run(args):
    run_bench(quick=args.quick, torch=None if args.no_torch else "auto",
              out=lambda line: print(line, flush=True), progress=True)
    return 0
