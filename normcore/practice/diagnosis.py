"""Diagnosing a graded file: the catalogued mistake whose mutant gives every number the file gives.

The grader says a mistake's name only when it is sure, and otherwise that no catalogued
mistake produces the numbers. A mistake is named when its mutant (``mutants.py``) reproduces
the answer on *every* probe of the exercise, the passing ones included: a probe on which two
mistakes give the same numbers (p = 1, where nothing is kept either way; one sample per
row, where 1/b and 1/d coincide) can support a name but never decide it, and a mistake whose
mutant differs from the answer on any probe is not named. When no single mistake reproduces
the answer, pairs of mistakes are tried, then three and four at once (``MOST``): the fewest
mistakes that reproduce it are named; when two mistakes (or two combinations of a size)
reproduce it alike, the probes cannot tell which the answer made, and none is named. A
forward mistake is tried twice, with the reference's backward formula (the variant as
catalogued) and with the exact derivative of its own forward (its consistent twin,
``consistent.py``): a candidate derives the backward from one or the other. There is no
weaker level of naming: a mutant that gives some of the failing numbers but not all of them
names nothing (on published answers, such partial matches named mistakes they did not make).
``partly`` lists such mutants' mistakes when nothing is named, for the report to show apart
as unsure, never on a check.
When no single mistake or pair reproduces the answer, a mistake with a constant (an eps inside
a log, a hard-coded momentum) is tried at other values of its constant, under the same rule
(``constants.py``).

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

from dataclasses import dataclass

from . import constants
from .exercises import is_running_statistics
from .mutants import Consistent
from .probes import UNOBSERVED, ProbeRun, distance, error_kind, is_backward, is_dtype_row



MOST = 4  # the most mistakes named at once (see ``_File.combinations``)


@dataclass(frozen=True)
class Graded:
    """Which observations of an answer are graded: all of them, but the backward's when
    ``forward_only`` and the running statistics' (``exercises.is_running_statistics``) when
    ``no_running_stats``. False when every observation is."""

    forward_only: bool = False
    no_running_stats: bool = False

    def __bool__(self):
        return self.forward_only or self.no_running_stats

    def __call__(self, probe, row):
        """Whether observation ``row`` of probe ``probe`` is graded."""
        return not (self.forward_only and is_backward(row)
                    or self.no_running_stats and is_running_statistics(probe, row))


EVERY = Graded()  # every observation graded


def diagnose(probes, users, checks, mutants, graded=EVERY):
    """Set ``diagnoses`` (and ``combined_with`` for a combination) on the failing and erroring
    checks.

    ``users`` maps each probe's label to the answer's run of it; ``checks`` are the file's
    CheckResults. Returns the mistake ids named: one, several at once (up to ``MOST``), or
    none. Only the observations ``graded`` (a ``Graded``) are compared, the mutants' too: a
    forward-only answer's forward, a training-only answer's all but the running statistics.

    The search goes by size: single mistakes, then pairs, then three at once and so on, and
    stops at the first size at which a mutant reproduces the answer. That is what "minimal"
    means here: fewest mistakes. An answer reproduced by one mistake is never named as that
    mistake plus others, and a pair that reproduces it wins over any triple, even a triple
    that would reproduce it too (a triple whose third part changes nothing the pair does not
    already give). Within that size the rule of a single mistake holds: the combinations that
    reproduce the answer must all name the same mistakes (two variants of one mistake name it
    once), else the probes cannot tell which mistakes the answer made and none is named.
    """
    wrong = [c for c in checks if c.status in ("FAIL", "ERROR")]
    if not wrong:
        return []
    # the probes the answer fails first: most mutants disagree there and are dropped at once
    order = sorted(probes, key=lambda p: not any(c.probe == p.label for c in wrong))
    file = _File(order, users, _Graded(mutants, graded) if graded else mutants)
    found = [key for key in mutants.singles if file.reproduced_by(key)]
    ids = {mistake_id for key in found for mistake_id, _ in key}
    # a twin of a mistake already found could not change the name: only the others are run
    found += [key for key in file.twins() if key[0][0] not in ids and file.reproduced_by(key)]
    for size in range(2, MOST + 1):
        if found:
            break
        found = [key for key in file.combinations(size) if file.reproduced_by(key)]
    if not found:  # a mistake with another constant than the catalog's (constants.py)
        found = constants.fit(file, mutants)
    named = {tuple(sorted({mistake_id for mistake_id, _ in key})) for key in found}
    if len(named) != 1:  # none, or several the probes cannot tell apart
        return []
    named, variant = list(named.pop()), dict(found[0])
    fitted = constants.said(file, mutants, found)  # {id: (Constant, value)} pinned down
    for c in wrong:
        if is_dtype_row(c.row) and not file.gives(found[0], c):  # a failure of its own
            continue
        c.diagnoses, c.constants = list(named), fitted
        if len(named) > 1:  # each check names the mistakes it shows alone, or all of them
            c.diagnoses = [i for i in named if (c.probe, c.row)
                           in file.changes(((i, variant[i]),))] or list(named)
            c.combined_with = list(named)
    return named


def partly(probes, users, checks, mutants, graded=EVERY):
    """The catalogued mistakes that each give some of the answer's failing numbers exactly,
    when no mistake (nor combination) was named: [(mistake id, [failing checks it gives])],
    the most checks first. Never a diagnosis, and said as unsure: each mistake changes only
    observations the answer changes too (``_File.parts``) and gives the answer's numbers in
    some of them, but no mistake or combination gives them all. [] when a mistake was named
    or no check fails."""
    failing = [c for c in checks if c.status == "FAIL"]
    if not failing or any(c.diagnoses for c in checks):
        return []
    file = _File(probes, users, _Graded(mutants, graded) if graded else mutants)
    found = {}
    for key in file.parts():
        if _is_twin(key):
            continue
        gives = file.gives_alone(key)
        found.setdefault(key[0][0], set()).update(
            i for i, c in enumerate(failing) if (c.probe, c.row) in gives)
    ranked = sorted((i for i in found if found[i]), key=lambda i: (-len(found[i]), i))
    return [(i, [failing[n] for n in sorted(found[i])]) for i in ranked]


class _File:
    """The answer's runs of an exercise's probes against the mutants' (cached by ``Mutants``)."""

    def __init__(self, probes, users, mutants):
        self.probes, self.users, self.mutants = probes, users, mutants
        self.changed = set().union(*(_changed(users[p.label], mutants.reference(p), p.label)
                                     for p in probes))
        self.unmade = set().union(*(_unmade(users[p.label], mutants.reference(p), p.label)
                                    for p in probes))
        self._changes = {}  # single mutant -> the (probe, row) it changes
        self._parts = None  # the single mutants a combination is made of, see parts()
        self._alone = {}  # single mutant -> the changed (probe, row) it gives as the answer does
        self._twins = None  # the consistent twins worth running, see twins()

    def reproduced_by(self, key):
        """Whether mutant ``key`` gives every observation of every probe as the answer does (a
        twin is run only when its variant's forward, cheap to run, gives the answer's)."""
        if _is_twin(key) and not self._same_forward(self.mutants.plain(key)):
            return False
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

    def twins(self):
        """The consistent twins (``mutants.Consistent``) worth running: those whose forward
        gives every forward observation the answer made as the answer does. A twin's forward is
        its catalogued variant's, whose runs are cheap and cached: the twin's own run, whose
        backward differentiates the forward numerically, is made only for these."""
        if self._twins is None:
            self._twins = [key for key in getattr(self.mutants, "twins", ())
                           if self._same_forward(self.mutants.plain(key))]
        return self._twins

    def _same_forward(self, key):
        """Whether mutant ``key`` gives every forward observation both it and the answer made as
        the answer does."""
        for p in self.probes:
            run, user = self.mutants.run(key, p), self.users[p.label]
            if run is None or not all(_agrees(user.rows[row], run.rows[row]) for row in user.rows
                                      if row in run.rows and not is_backward(row)
                                      and not is_dtype_row(row)):
                return False
        return True

    def parts(self):
        """{single mutant: what it changes} of the mutants a combination can be made of: each
        changes something, and only observations the answer changes too (or did not make)."""
        if self._parts is None:
            allowed, self._parts = self.changed | self.unmade, {}
            for key in self.mutants.singles:
                changes = self.changes(key, within=allowed)
                if changes:
                    self._parts[key] = changes
            for key in getattr(self.mutants, "twins", ()):
                # a twin's changes are taken as its variant's: the same forward, a backward
                # that changes the same gradients (running the twin itself waits for a
                # combination worth trying)
                plain = self.mutants.plain(key)
                if plain in self._parts:
                    self._parts[key] = self._parts[plain]
        return self._parts

    def pairs(self):
        """The pairs of mutants that can reproduce the answer (``combinations(2)``)."""
        return self.combinations(2)

    def gives_alone(self, key):
        """The (probe, row) the answer changes where single mutant ``key`` gives the answer's
        observation (its number, or the same exception before it)."""
        if key not in self._alone:
            runs = {p.label: self.mutants.run(key, p) for p in self.probes}
            self._alone[key] = {(probe, row) for probe, row in self.changed
                                if _gives_row(self.users[probe], runs[probe], row)}
        return self._alone[key]

    def _alone_agree(self, combination, parts):
        """Whether each part of ``combination`` gives the answer's observation wherever it is
        the only part that changes it (a mistake the others leave alone shows as it does on
        its own)."""
        singles = [(part,) for part in combination]
        for single in singles:
            own = parts[single].difference(*(parts[s] for s in singles if s != single))
            if _is_twin(single):  # its gradients are the combined forward's: its forward alone
                own = {(probe, row) for probe, row in own if not is_backward(row)}
            if not own & self.changed <= self.gives_alone(self._plain(single)):
                return False
        return True

    def _plain(self, key):
        return self.mutants.plain(key) if _is_twin(key) else key

    def combinations(self, size):
        """The combinations of ``size`` mutants that can reproduce the answer, pruned as a
        pair is: each part changes only observations the answer changes too (or did not make,
        ``parts``), and the parts together change every one the answer changes (mistakes that
        only together change an observation are missed: the grader then names none). Two
        variants of one mistake make a combination too: the same mistake made in two places
        (the residual dropped in Pre-Norm and in Post-Norm).

        Beyond a pair, each part must also give the answer's observation wherever it is the
        only part of the combination that changes it (``_alone_agree``): mistakes that touch
        different observations show there as each does on its own (the flipped momentum's
        running_mean, the batch statistics' evaluation output). This keeps three and four
        mistakes fast (the combinations grow as the parts' count to that power, each one a
        mutant to build and run); mistakes that change such an observation only together
        are missed, and the grader then names none. A combination of consistent twins is
        the twin of the combined forward: twins combine with twins only. The size stops at
        ``MOST``: an answer with more catalogued mistakes at once is better told to fix some
        first than told all of them.
        """
        parts = self.parts()
        yield from self._extend((), set(), list(parts), size, parts)

    def _extend(self, combination, covered, keys, size, parts):
        """The combinations of ``size`` that start with ``combination`` and go on with
        ``keys`` (the parts after its last one), their changes ``covered`` so far."""
        if len(combination) == size:
            if self.changed <= covered and (size < 3 or self._alone_agree(combination, parts)):
                yield combination
            return
        for i, key in enumerate(keys):
            if combination and _is_twin(key) != _is_twin(combination):
                continue  # a twin differentiates the whole forward: twins combine with twins
            yield from self._extend(combination + key, covered | parts[key], keys[i + 1:],
                                    size, parts)


class _Graded:
    """The mutants' and the reference's runs with their graded observations alone; without
    the consistent twins when the backward is not graded (a twin's forward is its variant's)."""

    def __init__(self, mutants, graded):
        self.mutants, self.graded, self.singles = mutants, graded, mutants.singles
        if not graded.forward_only:
            self.twins, self.plain = getattr(mutants, "twins", ()), getattr(mutants, "plain", None)

    def run(self, key, probe):
        return self._kept(self.mutants.run(key, probe), probe)

    def reference(self, probe):
        return self._kept(self.mutants.reference(probe), probe)

    def _kept(self, run, probe):
        if run is None:
            return None
        return ProbeRun({k: v for k, v in run.rows.items() if self.graded(probe.label, k)},
                        run.error)


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
               for label in made if not is_dtype_row(label))


def _is_twin(key):
    """Whether a mutant's key is a consistent twin's (``mutants.Consistent``)."""
    return any(isinstance(k, Consistent) for _, k in key)


def _agrees(answer, mutant):
    """One observation of the answer against the mutant's, within the mutant's tolerance."""
    return distance(answer.value, mutant.value, mutant.metric, mutant.scale) <= mutant.tol


def _changed(run, ref, probe):
    """The (probe, row) of the reference that ``run`` changes: gives otherwise, or never makes
    because it raised (not for a TODO: see ``_unmade``)."""
    return {(probe, label) for label, r in ref.rows.items() if not is_dtype_row(label) and (
            label in run.rows and not _agrees(run.rows[label], r)
            or label not in run.rows and not isinstance(run.error, UNOBSERVED))}


def _gives_row(user, run, row):
    """Whether ``run`` gives the answer's observation ``row``: the same number, or neither makes
    it because both raised the same type of exception."""
    if row in user.rows:
        return row in run.rows and _agrees(user.rows[row], run.rows[row])
    return row not in run.rows and _same(ProbeRun({}, user.error), ProbeRun({}, run.error))


def _unmade(user, ref, probe):
    """The (probe, row) the answer never made for a reason that is no mistake (a TODO)."""
    if not isinstance(user.error, UNOBSERVED):
        return set()
    return {(probe, label) for label in ref.rows if label not in user.rows}
