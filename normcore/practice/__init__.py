"""Interview practice: hand-write a layer, get graded, learn which mistake you made.

Fifteen exercises, from Dropout, Softmax, DyT and folding a BatchNorm into a Linear to
multi-head attention (with and without QK-norm), a residual block with its norm, a small MLP
with BatchNorm and SyncBatchNorm across workers (``normcore practice list`` shows the path).
The commands::

    normcore practice list                 the exercises (and, with --mistakes, the catalog)
    normcore practice new batchnorm        write a skeleton to fill in (--torch, --forward-only)
    normcore practice check my_bn.py       grade it against normcore's own layer
    normcore practice solution batchnorm   print a reference answer
    normcore practice interview            a mock interview: a time box, no hints until the end
    normcore practice history              the interviews so far, and progress per exercise

``exercises`` defines what is checked, ``catalog`` the mistakes the grader recognises,
``grader`` the grading of one class, from the jobs it is made of: ``loading`` (import a
candidate's file, find its class and exercise), ``sandbox`` (run the file in a child process
with a time, memory and output limit), ``tracks`` (drive a NumPy layer or a torch.nn.Module
through one interface), ``probes`` (run one probe, compare observations), ``mutants`` and
``diagnosis`` (the catalogued mistakes that reproduce a failure), ``constants`` (a mistake's
constant, an eps or a momentum, fitted to the answer), ``verdicts`` (findings, float32 inside,
published variants), ``report`` (the printed report). ``classroom`` grades several files,
``references`` puts normcore's layers behind an exercise's contract where it differs from
theirs, ``skeletons/`` and ``solutions/`` are the files (``skeletons`` also derives the
forward-only version of each), ``interview`` runs a mock interview and ``history`` keeps them.
``torch_track`` grades a torch.nn.Module on the same probes, its gradients from autograd, with
the catalog's forward mistakes written in torch and the mistakes only a module can make.
"""

from .catalog import BY_ID, CATALOG, Mistake, mistakes_for
from .exercises import EXERCISES
from .grader import CannotGrade, Report, grade, grade_file
from .report import format_report

__all__ = ["CATALOG", "BY_ID", "Mistake", "mistakes_for", "EXERCISES", "CannotGrade", "Report",
           "grade", "grade_file", "format_report"]
