"""Diagnosing a graded file: the catalogued mistake whose mutant gives every number the file gives.

The grader says a mistake's name only when it is sure, and otherwise that no catalogued
mistake produces the numbers. A mistake is named when its mutant (``mutants.py``) reproduces
the answer on *every* probe of the exercise, the passing ones included: a probe on which two
mistakes give the same numbers (p = 1, where nothing is kept either way; one sample per
row, where 1/b and 1/d coincide) can support a name but never decide it, and a mistake whose
mutant differs from the answer on any probe is not named. When no single mistake reproduces
the answer, a pair of mistakes is tried; when two mistakes (or two pairs) reproduce it
alike, the probes cannot tell which one the answer made, and neither is named. There is no
weaker level: a mutant that gives some of the failing numbers but not all of them names
nothing (on published answers, such partial matches named mistakes they did not make).

Reproducing means, observation by observation:

- the numbers agree within the observation's tolerance; a nan or an inf agrees only with the
  same nan or inf at the same place, so a mistake whose only signature is a nan (a softmax
  without the max shift overflows) is named, and only when every other number agrees too;
- where the answer raised (a TypeError on ``momentum=None``), the mutant raises the same type
  of exception on that probe, after the same observations;
- what the answer never computed (a TODO of the skeleton, a check that does not apply to
  it) is neither for nor against a mistake;
- a dtype (``output dtype``, ``dx dtype``) is neither for nor against either: the catalogued
  mistakes are about numbers, and a float64 result for a float32 input (a mask built in
  float64) is a failure of its own, beside the mistake the numbers show.
"""

from .driver import NotApplicable
from .probes import ProbeRun, distance, error_kind, is_backward

UNOBSERVED = (NotImplementedError, NotApplicable)  # the answer left these observations unmade


def diagnose(probes, users, checks, mutants, forward_only=False):
    """Set ``diagnoses`` (and ``combined_with`` for a pair) on the failing and erroring checks.

    ``users`` maps each probe's label to the answer's run of it; ``checks`` are the file's
    CheckResults. Returns the mistake ids named: one, two (a pair) or none. A forward-only
    answer is compared on the forward's observations alone, the mutants' too.
    """
    wrong = [c for c in checks if c.status in ("FAIL", "ERROR")]
    if not wrong:
        return []
    # the probes the answer fails first: most mutants disagree there and are dropped at once
    order = sorted(probes, key=lambda p: not any(c.probe == p.label for c in wrong))
    file = _File(order, users, _ForwardOnly(mutants) if forward_only else mutants)
    found = [key for key in mutants.singles if file.reproduced_by(key)]
    if not found:
        found = [pair for pair in file.pairs() if file.reproduced_by(pair)]
    named = {tuple(sorted({mistake_id for mistake_id, _ in key})) for key in found}
    if len(named) != 1:  # none, or several the probes cannot tell apart
        return []
    named, variant = list(named.pop()), dict(found[0])
    for c in wrong:
        if _is_dtype(c.row) and not file.gives(found[0], c):  # a failure of its own
            continue
        c.diagnoses = list(named)
        if len(named) == 2:  # each check names the mistake it shows alone, or both
            c.diagnoses = [i for i in named if (c.probe, c.row)
                           in file.changes(((i, variant[i]),))] or list(named)
            c.combined_with = list(named)
    return named


class _File:
    """The answer's runs of an exercise's probes against the mutants' (cached by ``Mutants``)."""

    def __init__(self, probes, users, mutants):
        self.probes, self.users, self.mutants = probes, users, mutants
        self.changed = set().union(*(_changed(users[p.label], mutants.reference(p), p.label)
                                     for p in probes))
        self.unmade = set().union(*(_unmade(users[p.label], mutants.reference(p), p.label)
                                    for p in probes))
        self._changes = {}  # single mutant -> the (probe, row) it changes

    def reproduced_by(self, key):
        """Whether mutant ``key`` gives every observation of every probe as the answer does."""
        return all(_same(self.users[p.label], self.mutants.run(key, p)) for p in self.probes)

    def gives(self, key, check):
        """Whether mutant ``key`` gives the answer's observation of ``check`` (a dtype too)."""
        probe = next(p for p in self.probes if p.label == check.probe)
        run, user = self.mutants.run(key, probe), self.users[check.probe]
        return check.row in run.rows and check.row in user.rows and _agrees(
            user.rows[check.row], run.rows[check.row])

    def changes(self, key, within=None):
        """The (probe, row) a single mutant changes; None as soon as it changes one outside
        ``within``."""
        if key in self._changes:
            changes = self._changes[key]
            return changes if within is None or changes <= within else None
        changes = set()
        for p in self.probes:
            changes |= _changed(self.mutants.run(key, p), self.mutants.reference(p), p.label)
            if within is not None and not changes <= within:
                return None
        self._changes[key] = changes
        return changes

    def pairs(self):
        """The pairs of mutants that can reproduce the answer: each changes only observations
        the answer changes too (or did not make), and the two together change every one the
        answer changes (two mistakes that only together change an observation are missed:
        the grader then names none). Two variants of one mistake make a pair too: the same
        mistake made in two places (the residual dropped in Pre-Norm and in Post-Norm)."""
        halves, allowed = {}, self.changed | self.unmade
        for key in self.mutants.singles:
            changes = self.changes(key, within=allowed)
            if changes:
                halves[key] = changes
        keys = list(halves)
        for i, a in enumerate(keys):
            for b in keys[i + 1:]:
                if self.changed <= halves[a] | halves[b]:
                    yield a + b


class _ForwardOnly:
    """The mutants' and the reference's runs without their backward observations."""

    def __init__(self, mutants):
        self.mutants, self.singles = mutants, mutants.singles

    def run(self, key, probe):
        return _forward(self.mutants.run(key, probe))

    def reference(self, probe):
        return _forward(self.mutants.reference(probe))


def _forward(run):
    if run is None:
        return None
    return ProbeRun({k: v for k, v in run.rows.items() if not is_backward(k)}, run.error)


def _same(user, run):
    """Whether the mutant's run reproduces the answer's run of one probe."""
    if run is None:  # two mistakes that rewrite the same piece of the answer
        return False
    if isinstance(user.error, UNOBSERVED):
        made = user.rows
    elif error_kind(user.error) != error_kind(run.error) or set(user.rows) != set(run.rows):
        return False  # one raised and not the other, or raised at another point
    else:
        made = run.rows
    return all(label in run.rows and _agrees(user.rows[label], run.rows[label])
               for label in made if not _is_dtype(label))


def _is_dtype(label):
    return label.endswith("dtype")


def _agrees(answer, mutant):
    """One observation of the answer against the mutant's, within the mutant's tolerance."""
    return distance(answer.value, mutant.value, mutant.metric, mutant.scale) <= mutant.tol


def _changed(run, ref, probe):
    """The (probe, row) of the reference that ``run`` changes: gives otherwise, or never makes
    because it raised (not for a TODO: see ``_unmade``)."""
    return {(probe, label) for label, r in ref.rows.items() if not _is_dtype(label) and (
            label in run.rows and not _agrees(run.rows[label], r)
            or label not in run.rows and not isinstance(run.error, UNOBSERVED))}


def _unmade(user, ref, probe):
    """The (probe, row) the answer never made for a reason that is no mistake (a TODO)."""
    if not isinstance(user.error, UNOBSERVED):
        return set()
    return {(probe, label) for label in ref.rows if label not in user.rows}
