"""Interview practice: hand-write a norm layer (or Dropout), get graded, learn which mistake you made.

    normcore practice list                 the exercises (and, with --mistakes, the catalog)
    normcore practice new batchnorm        write a skeleton to fill in
    normcore practice check my_bn.py       grade it against normcore's own layer
    normcore practice solution batchnorm   print a reference answer

``exercises`` defines what is checked, ``catalog`` the mistakes the grader recognises,
``grader`` the comparison and the diagnosis, ``skeletons/`` and ``solutions/`` the files.
"""

from .catalog import BY_ID, CATALOG, Mistake, mistakes_for
from .exercises import EXERCISES
from .grader import CannotGrade, Report, grade, grade_file

__all__ = ["CATALOG", "BY_ID", "Mistake", "mistakes_for", "EXERCISES", "CannotGrade", "Report",
           "grade", "grade_file"]
