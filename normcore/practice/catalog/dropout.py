"""Dropout mistakes: the scale, the mask, training against evaluation."""

from ...i18n import N_
from ..constants import FRACTION, Constant, WithConstant
from .base import Anchor, Mistake, notebook, solution


# The pieces of the reference answers that the mutants replace (see base.Anchor).
DROP_SCALE = Anchor("scale", "scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)")
DROP_KEEP = Anchor("keep", "keep = self.rng.random(x.shape) >= self.p")
DROP_EVAL = Anchor("eval", "if not self.training or self.p == 0.0:")
DROP_EVAL_RETURN = Anchor("eval-return", "return x")
DROP_EVAL_MASK = Anchor("eval-mask", "self.mask = None")
DROP_BACKWARD = Anchor("dx", "return (dy * self.mask).astype(dy.dtype)")
# a keep probability written as a number instead of 1 - p (constants.py fits it)
KEEP = Constant("keep", 0.5, FRACTION, N_("with the keep probability {value} hard-coded"))

MISTAKES = [
    Mistake(
        "dropout-no-scale",
        N_("Dropout without the 1 / (1 - p) scale"),
        N_("kept units pass through unchanged in training, so the expected activation shrinks to "
           "(1 - p) * x in training while evaluation returns x"),
        N_("Inverted dropout scales the kept units by 1 / (1 - p) in training (forward and "
           "backward), so that the expected output equals the input and evaluation needs nothing."),
        {"dropout": [((DROP_SCALE, "scale = 1.0"),)]},
        taught=notebook("dropout", N_("7 (Forgetting the scale)")),
    ),
    Mistake(
        "dropout-eval-scaling",
        N_("Dropout that scales at evaluation time"),
        N_("evaluation is not the identity: the output is multiplied by (1 - p) (the old, "
           "non-inverted convention) or by 1 / (1 - p)"),
        N_("With inverted dropout all the scaling happens in training; in evaluation the layer "
           "returns its input unchanged."),
        {"dropout": [
            ((DROP_EVAL_RETURN, "return x * (1.0 - self.p)"),),
            ((DROP_EVAL_RETURN, "return x / (1.0 - self.p)"),),
        ]},
        taught=notebook("dropout", N_("7 (Train vs eval)")),
    ),
    Mistake(
        "dropout-active-in-eval",
        N_("Dropout still dropping in evaluation"),
        N_("eval() changes nothing: units are still zeroed (and the kept ones scaled) at "
           "evaluation time, so predictions are random"),
        N_("Check the mode: in evaluation (training flag off) Dropout returns its input."),
        {"dropout": [((DROP_EVAL, "if self.p == 0.0:"),)]},
        taught=notebook("dropout", N_("7 (Train vs eval)")),
    ),
    Mistake(
        "dropout-fresh-mask",
        N_("Dropout backward draws a fresh mask"),
        N_("the forward is right, but the units whose gradient is zeroed are not the units that "
           "were dropped: about 2p(1 - p) of the positions disagree"),
        N_("The backward must reuse the mask of the forward pass: cache it in forward, and use the "
           "cached mask (with the same scale) in backward."),
        {"dropout": [((DROP_BACKWARD, "return (dy * (self.rng.random(dy.shape) >= self.p) / (1.0 - self.p))"
                                      ".astype(dy.dtype)"),)]},
        taught=notebook("dropout", N_("7 (A new mask in the backward is wrong)")),
    ),
    Mistake(
        "dropout-p-is-keep",
        N_("p taken as the keep probability"),
        N_("the fraction of zeroed units is 1 - p instead of p (the units are kept with "
           "probability p, and the kept ones scaled by 1 / p or by 1 / (1 - p))"),
        N_("In Dropout(p) (PyTorch's convention) p is the probability of *dropping* a unit; each "
           "unit is kept with probability 1 - p."),
        {"dropout": [
            ((DROP_KEEP, "keep = self.rng.random(x.shape) < self.p"),
             (DROP_SCALE, "scale = 1.0 / self.p")),
            ((DROP_KEEP, "keep = self.rng.random(x.shape) < self.p"),),
            # consistently: kept with probability p, scaled by 1 / p, no shortcut at p = 0
            ((DROP_KEEP, "keep = self.rng.random(x.shape) < self.p"),
             (DROP_SCALE, "scale = 0.0 if self.p == 0.0 else 1.0 / self.p"),
             (DROP_EVAL, "if not self.training:")),
            # at another p: a keep probability written as a number (CS231n's p = 0.5, "the
            # probability of keeping a unit active"), whatever p the layer was built with; with
            # or without the reference's shortcut at p = 0
            ((DROP_KEEP, WithConstant("keep = self.rng.random(x.shape) < {keep}", KEEP)),
             (DROP_SCALE, WithConstant("scale = 1.0 / {keep}", KEEP)),
             (DROP_EVAL, "if not self.training:")),
            ((DROP_KEEP, WithConstant("keep = self.rng.random(x.shape) < {keep}", KEEP)),
             (DROP_SCALE, WithConstant("scale = 1.0 / {keep}", KEEP))),
        ]},
        taught=notebook("dropout", N_("7 (p is the probability of dropping)")),
    ),
    Mistake(
        "dropout-scale-1-over-p",
        N_("Dropout kept units scaled by 1 / p"),
        N_("the right fraction of units is dropped, but the kept ones are scaled by 1 / p instead "
           "of 1 / (1 - p), so the expected output is (1 - p) / p times the input"),
        N_("The kept units are the fraction 1 - p, so inverted dropout divides them by 1 - p (the "
           "keep probability), not by p."),
        {"dropout": [((DROP_SCALE, "scale = 0.0 if self.p == 1.0 else 1.0 / self.p"),),
                     ((DROP_SCALE, "scale = 1.0 / self.p"),)]},
        taught=notebook("dropout", N_("7 (Forgetting the scale)")),
    ),
    Mistake(
        "dropout-backward-no-scale",
        N_("Dropout backward without the 1 / (1 - p) scale"),
        N_("the forward is right and the right units get a zero gradient, but the kept gradients "
           "pass through unscaled: the backward multiplies by the 0/1 mask only"),
        N_("y = x * mask / (1 - p), so dy/dx = mask / (1 - p): the backward applies the same mask "
           "*and* the same scale as the forward (cache the scaled mask once)."),
        {"dropout": [((DROP_BACKWARD, "return (dy * (self.mask != 0)).astype(dy.dtype)"),)]},
        taught=notebook("dropout", N_("4 (The backward, step by step)")),
    ),
    Mistake(
        "dropout-p-one-nan",
        N_("Dropout(p=1) gives nan"),
        N_("every p < 1 is right; p = 1 gives nan (or inf) outputs and gradients instead of "
           "zeros: the scale 1 / (1 - p) divides by zero, and 0 * inf is nan"),
        N_("p = 1 drops every unit, so the output and dx are zeros: special-case it (a scale of "
           "0, or return zeros) before dividing by 1 - p."),
        {"dropout": [((DROP_SCALE, "scale = 1.0 / np.float64(1.0 - self.p)"),)]},
        taught=solution("dropout"),
    ),
    Mistake(
        "dropout-stale-mask",
        N_("Dropout backward after an evaluation forward reuses the training mask"),
        N_("training and a fresh layer in evaluation are right; after a training forward, the "
           "backward of an evaluation forward zeroes and scales dy with the mask that training "
           "step drew, where evaluation's dx is dy itself"),
        N_("The backward belongs to the last forward: when the forward is the identity "
           "(evaluation, or p = 0), clear the cached mask (or remember the mode), so that the "
           "backward passes dy through unchanged."),
        {"dropout": [((DROP_EVAL_MASK, "pass"),)]},
        taught=notebook("dropout", N_("7 (Train vs eval, and dropout before a norm)")),
    ),
    Mistake(
        "dropout-batch-shared-mask",
        N_("one Dropout mask shared by every row of the batch"),
        N_("the fraction of dropped units and the scale are right, but every sample drops the "
           "same units: the mask was drawn with shape x.shape[1:] and broadcast over the batch, "
           "so a column is dropped in every row or in none"),
        N_("Draw one independent keep/drop decision per ELEMENT: a mask of the input's full "
           "shape, rng.random(x.shape) >= p, not one per feature."),
        {"dropout": [((DROP_KEEP, "keep = self.rng.random(x.shape[1:]) >= self.p"),)]},
        taught=notebook("dropout", N_("3 (The forward in code: the mask and the expectation)")),
    ),
]
