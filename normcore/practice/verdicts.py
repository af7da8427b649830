"""Verdicts beside the diagnosis: findings, float32 inside, published variants.

``settle`` runs once the diagnosis (``diagnosis.py``) has named what it can, and adds three
verdicts to a grader ``Report``:

- **Findings.** Some observations are facts about the answer rather than numbers of the
  layer: the module's parameters, buffers and state_dict keys (the PyTorch track), a dtype,
  and whether the caller's arrays are left unchanged (``FINDINGS``). A failing one is a
  failure of its own, reported with what was expected, and must not hide what the numbers
  show: when the diagnosis named nothing, it runs again with the answer's findings set to
  the reference's, and what it names then is named (timm's QK-LayerNorm carries zero bias
  parameters the exercise does not have; its numbers are still QK-LayerNorm's). A mistake
  that is itself about such a row (a tensor not registered changes the parameters) is named
  by the first diagnosis, from that row.
- **float32 inside.** An answer that computes in float32 inside (LLaMA's ``x.float()``)
  is about 1e-7 off on float64 probes, beyond float64's tolerance. When no mistake is named
  and every failing check is a float64 observation within the float32 tolerance the same
  observation would have on a float32 input (``Observation.tol32``), those checks pass and
  the report says, in one line, what float32 costs on float64 input. The float32 and
  float16 probes keep their own tolerances, and a named mistake comes first: a mistake whose
  mutant reproduces the answer at float64's tolerance is never excused as rounding.
- **Published variants.** A catalogued difference that published code makes on purpose
  (``Mistake.published``: Keras' momentum, RMSNorm's original eps, QK-LayerNorm, OLMo 2's
  QK-norm) is named as that variant: the answer is not what was asked, and it is not counted
  as a mistake (``split_named``).
"""

import re
from dataclasses import dataclass, replace

import numpy as np

from ..i18n import translator
from .catalog import BY_ID
from .diagnosis import EVERY, diagnose
from .probes import ProbeRun

_ = translator("practice")

# the rows that are findings (the last part of a check's label), beside any "... dtype" row
FINDINGS = ("parameters", "buffers", "state_dict keys", "logits unchanged by forward",
            "inputs left unchanged", "input unchanged", "autograd intact")
NAMES = ("parameters", "buffers", "state_dict keys")  # "name (shape), ..." or "none"
YES_NO = ("logits unchanged by forward", "inputs left unchanged")  # recorded as 1.0 or 0.0


@dataclass
class Finding:
    """A failing finding: the check's label, the answer's value and the expected one."""

    label: str
    yours: str
    expected: str


def is_finding(row):
    """Whether an observation is a finding (a dtype, a module's names, an input kept)."""
    name = row.rpartition(": ")[2]
    return name.endswith("dtype") or name in FINDINGS


def split_named(ids, exercise):
    """(mistakes, published variants) among the catalog ids named for ``exercise``."""
    variants = [i for i in ids if i in BY_ID and BY_ID[i].variant_in(exercise.name)]
    return [i for i in ids if i not in variants], variants


def settle(report, probes, users, mutants, graded=EVERY):
    """Add the findings and the float32 verdict to ``report`` (see the module's docstring);
    ``users`` maps each probe's label to the answer's run, ``mutants`` the exercise's
    ``Mutants`` (their reference runs), ``graded`` the observations graded (``Graded``).
    Returns the report."""
    findings = [c for c in report.checks if c.status == "FAIL" and is_finding(c.row)]
    if findings and not any(c.diagnoses for c in report.checks):
        _name_beside_findings(report.checks, probes, users, mutants, graded)
    report.findings = [_finding(c, users, probes, mutants) for c in findings if not c.diagnoses]
    report.float32_inside = _float32_inside(report.checks, probes, mutants)
    return report


def _name_beside_findings(checks, probes, users, mutants, graded):
    """Diagnose again with the answer's findings as the reference's; names go to ``checks``."""
    as_asked = {}
    for probe in probes:
        run, ref = users[probe.label], mutants.reference(probe)
        rows = {label: ref.rows[label] if is_finding(label) and label in ref.rows else obs
                for label, obs in run.rows.items()}
        as_asked[probe.label] = ProbeRun(rows, run.error)
    copies = [replace(c, status="pass") if c.status == "FAIL" and is_finding(c.row) else replace(c)
              for c in checks]
    if diagnose(probes, as_asked, copies, mutants, graded):
        for check, copy in zip(checks, copies):
            check.diagnoses, check.combined_with = copy.diagnoses, copy.combined_with


def _reference_row(check, probes, mutants):
    probe = next(p for p in probes if p.label == check.probe)
    return mutants.reference(probe).rows.get(check.row)


def _finding(check, users, probes, mutants):
    """The Finding of a failing check: the answer's value (for a module's names, what it has
    more or less than the reference) and the reference's, as text."""
    ref, yours = _reference_row(check, probes, mutants), users[check.probe].rows.get(check.row)
    yours, expected = (_shown(check.row, row.value if row else None) for row in (yours, ref))
    if check.row.rpartition(": ")[2] in NAMES:
        mine, theirs = _names(yours), _names(expected)
        parts = [_("extra: {names}").format(names=", ".join(n for n in mine if n not in theirs)),
                 _("missing: {names}").format(names=", ".join(n for n in theirs if n not in mine))]
        yours = "; ".join(p for p, kept in zip(parts, (set(mine) - set(theirs),
                                                       set(theirs) - set(mine))) if kept) or yours
    return Finding(check.label, yours, expected)


def _names(text):
    """The names of a module's parameters, buffers or state_dict keys (its probe's text)."""
    return [] if text == "none" else [n.strip() for n in re.split(r",\s*(?![^()]*\))", text)]


def _shown(row, value):
    if row.rpartition(": ")[2] in YES_NO and isinstance(value, (float, int, bool, np.floating)):
        return _("yes") if value else _("no")
    return str(value)


def _float32_inside(checks, probes, mutants):
    """The largest relative error of the float64 observations, when the answer's only
    difference from the reference is float32 rounding inside (its failing checks then pass,
    noted); else None."""
    if any(c.diagnoses for c in checks):
        return None
    numbers = [(c, _reference_row(c, probes, mutants)) for c in checks
               if c.status in ("pass", "FAIL", "ERROR") and not is_finding(c.row)]
    failing = [(c, ref) for c, ref in numbers if c.status != "pass"]
    if not failing or not all(c.status == "FAIL" and _float64(ref) and c.error <= ref.tol32
                              for c, ref in failing):
        return None
    for c, _ref in failing:
        c.status, c.note = "pass", _("float32 rounding")
    return max(c.error for c, ref in numbers if _float64(ref))


def _float64(ref):
    """Whether a reference observation is a float64 number float32 inside would round: its
    float32 tolerance is wider than its own."""
    return ref is not None and ref.metric == "rel" and ref.tol32 > ref.tol
