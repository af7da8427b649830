"""Diagnosing the practice grader's failing checks: the catalogued mistakes that reproduce them.

The catalogued mistakes' mutants (``mutants.py``) run the same probe as the candidate's
layer, and a failure is diagnosed as the mistake whose numbers the candidate's numbers
match: first a mutant that reproduces *every* observation of the probe ("reproduces"), then
a pair of mistakes that does, otherwise one that reproduces that failing observation
("matches").
"""

from .probes import distance


def diagnose(probe, ref, user, failing, mutants):
    """Name the catalogued mistakes whose mutant reproduces the user's failing numbers.

    First a single mistake that reproduces every observation of the probe; then a pair of
    mistakes that does; otherwise, per failing check, every single mistake that reproduces it.
    """
    partial = {label: [] for label in failing}

    def agrees(run, label):
        m = run.rows.get(label)
        return m is not None and distance(user.rows[label].value, m.value, m.metric) <= m.tol

    def visible(run, label):  # the mistake reproduces this observation, which differs from the reference
        r = ref.rows[label]
        return agrees(run, label) and distance(run.rows[label].value, r.value, r.metric) > r.tol

    def explains(run):
        return (all(agrees(run, label) for label in user.rows)
                and any(visible(run, label) for label in failing))

    whole, pair = [], None
    for key in mutants.singles:
        run = mutants.run(key, probe)
        if explains(run):
            whole.append(key[0][0])
        for label in failing:
            if visible(run, label):
                partial[label].append(key[0][0])
    if not whole:
        for key in mutants.pairs():
            run = mutants.run(key, probe)
            if run is not None and explains(run):
                pair = [mistake_id for mistake_id, _ in key]
                break
    for label, check in failing.items():
        if pair:  # each check gets the mistake it shows alone, or both when it takes the two
            check.diagnoses = [i for i in pair if i in partial[label]] or pair
            check.combined_with = pair
        else:
            check.diagnoses = list(dict.fromkeys(whole or partial[label]))
        check.whole_probe = bool(whole or pair)


def keep_common_diagnosis(checks):
    """When one mistake explains every diagnosed failure, drop the others that only some
    probes cannot tell apart from it (e.g. a batch of one hides 1/b versus 1/1)."""
    solo = [c for c in checks if c.status == "FAIL" and c.diagnoses and not c.combined_with]
    if len(solo) < 2:
        return
    common = set.intersection(*(set(c.diagnoses) for c in solo))
    if common:
        for c in solo:
            c.diagnoses = [d for d in c.diagnoses if d in common]
