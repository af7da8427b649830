"""Step-through derivations: a norm's forward as a tape of elementary nodes, its backward node
by node, and the staged gradient checked against the compact backward and central differences.

    from normcore.derivations import step_through
    print(step_through("batchnorm", shape=(4, 3), seed=0).text())
"""

from .steps import KINDS, GradientComparison, StepThrough, step_through
from .tape import Edge, Node, Tape

__all__ = ["step_through", "StepThrough", "GradientComparison", "KINDS", "Tape", "Node",
           "Edge"]
