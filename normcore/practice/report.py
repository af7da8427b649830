"""The practice grader's printed report: the table of checks, the diagnosis and the hints.

``format_report`` turns a grader ``Report`` into what ``normcore practice check`` prints, at
most 80 columns wide: every check grouped by probe, then each diagnosed mistake with its
symptom, hint and where normcore teaches it, then hints for the failures no mistake explains.

How much it tells is a hint level (``HINT_LEVELS``), the one switch the classroom table
obeys too: "full" (all of the above), "brief" (an interviewer's level: each mistake's name
and the checks it shows in, no symptom, hint or formula) and "none" (pass or fail per check,
no mistake named).
"""

from collections import namedtuple

import numpy as np

from ..i18n import N_, translator
from ..i18n.width import clip, pad, wrap
from ..notebooks import in_language
from .catalog import BY_ID
from .labels import show_label
from .verdicts import is_finding

_ = translator("practice")
catalog_text = translator("catalog")  # the mistakes' titles, symptoms and hints (practice/catalog)

NOT_ASKED = "not asked"  # the status of a forward-only answer's backward checks (grader.py)
NOT_WRITTEN = "not written"  # the status of a training-only answer's running statistics' checks

WIDTH = 80  # the printed report fits a terminal of 80 columns

NOTEBOOKS = {"batchnorm": "batchnorm", "layernorm": "layernorm", "rmsnorm": "rmsnorm",
             "groupnorm": "groupnorm_instancenorm", "dropout": "dropout"}
INTERVIEW_SECTIONS = {"softmax": "9.1", "log_softmax": "9.2", "cross_entropy": "9.2",
                      "attention": "9.3", "transformer_block": "9.4"}
EXPLAINED = ("batchnorm", "layernorm", "rmsnorm", "dyt")  # the norms `normcore explain` steps through

FORWARD_HINTS = {
    "batchnorm": N_("BatchNorm standardises each channel over the batch (and length) axes with "
                    "the batch's mean and biased variance in training, and with running_mean "
                    "and running_var in evaluation."),
    "layernorm": N_("LayerNorm standardises each sample over its last len(normalized_shape) "
                    "axes: x_hat = (x - mean) / sqrt(var + eps), biased var, then gamma and beta."),
    "rmsnorm": N_("RMSNorm only rescales: x_hat = x / sqrt(mean(x**2) + eps) over the "
                  "normalised axes of each sample, then gamma; no mean, no beta."),
    "dyt": N_("DyT squashes each element on its own, with no statistics: y = gamma * "
              "tanh(alpha * x) + beta, alpha one scalar of shape (1,), gamma and beta over the "
              "last len(normalized_shape) axes; cast y back to x's dtype."),
    "groupnorm": N_("GroupNorm is LayerNorm on groups of C / G contiguous channels: reshape "
                    "(N, C, ...) to (N, G, -1), standardise the last axis, reshape back."),
    "dropout": N_("Inverted dropout zeroes each unit with probability p in training and scales "
                  "the kept ones by 1 / (1 - p); in evaluation it returns its input."),
    "softmax": N_("Softmax along the axis: y = exp(x - max(x)) / sum(exp(x - max(x))), the max "
                  "and the sum taken along self.axis with keepdims."),
    "cross_entropy": N_("Cross-entropy is the mean over the N rows of -logp[n, y_n], with logp the "
                        "log-softmax over the classes (axis 1): z - log(sum(exp(z))), z = x - max(x)."),
    "log_softmax": N_("Log-softmax along the axis: logp = z - log(sum(exp(z))) with z = x - max(x), "
                      "the max and the sum along self.axis with keepdims; never log(softmax(x))."),
    "attention": N_("Self-attention: q, k, v = x @ wq, x @ wk, x @ wv split into heads (B, T, H, D) "
                    "-> (B, H, T, D); attn = softmax(q k^T / sqrt(D)) over the keys, with -inf "
                    "above the diagonal before it when causal; y = merge(attn v) @ wo."),
    "qk_norm": N_("QK-norm: after split_heads, qn = q / sqrt(mean(q**2 over D) + eps) * gamma_q "
                  "(likewise k with gamma_k), each head over its own D channels, eps the machine "
                  "epsilon; then scores = qn kn^T / sqrt(D) and the attention as usual."),
    "fold_batchnorm": N_("In evaluation BatchNorm is s * (z - running_mean) + beta per output "
                         "feature, s = gamma / sqrt(running_var + eps), and z = x @ W.T + b: so "
                         "W' = s[:, None] * W (row j times s_j) and b' = s * (b - running_mean) + "
                         "beta; return new arrays."),
    "fold_norm_affine": N_("The norm's output gamma * x_hat + beta goes through the Linear: "
                           "(gamma * x_hat + beta) @ W.T + b, so W' = W * gamma[None, :] (column "
                           "i times gamma_i, gamma meets W's input features) and b' = W @ beta + "
                           "b with the original W; return new arrays."),
    "sync_batchnorm": N_("SyncBatchNorm takes the whole batch's statistics: all-reduce [n_k, "
                         "sum(x_k)] for N and the mean, then sum((x_k - mean)**2) for the biased "
                         "variance; running_var gets var * N / (N - 1); in evaluation the running "
                         "statistics, with no messages."),
    "mlp_with_batchnorm": N_("The forward is h = x @ w1 + b1, BatchNorm over the batch axis with the "
                             "batch's biased variance, a = tanh(hbn), logits = a @ w2 + b2, then "
                             "the mean cross-entropy: work it through one layer at a time."),
    "transformer_block": N_("Pre-Norm is y = x + F(LN(x)), Post-Norm y = LN(x + F(x)), the reordered norm "
                            "y = x + LN(F(x)), with F(h) = relu(h @ w1 + b1) @ w2 + b2 and LN LayerNorm "
                            "over the last axis (biased variance, eps inside the square root)."),
    "soft_cap": N_("Soft-capping is y = cap * tanh(x / cap) element by element: the cap divides "
                   "inside the tanh and multiplies outside it; cast y back to x's dtype."),
    "z_loss": N_("The loss is the mean over the N rows of -logp[n, y_n] + z_loss * lse[n]**2, with lse = "
                 "m + log(sum(exp(x - m))), m = max(x) over the classes: the max shift keeps exp "
                 "finite, and m is added back to make lse log Z."),
    "weight_norm": N_("w = g * v / ||v|| with one norm per output row (sum over axis 1 of v, "
                      "keepdims), then the Linear's y = x @ w.T + bias over the last axis of x."),
    "batch_renorm": N_("Batch Renorm normalises with the batch's mean and biased variance, then "
                       "corrects: r = clip(sigma_B / sigma, 1 / r_max, r_max), d = clip((mean - "
                       "running_mean) / sigma, -d_max, d_max) with the running statistics before "
                       "this batch's update, y = gamma * (x_hat * r + d) + beta."),
}
DX_HINTS = {
    "mean-var": N_("Derive dx through every path from x to the output (x_hat, the mean and the "
                   "variance); a mean-and-variance norm's dx sums to zero over the normalised "
                   "axes and is orthogonal to x_hat (up to eps)."),
    "rmsnorm": N_("RMSNorm's dx has two paths, the direct one and the one through the RMS: "
                  "dx = rrms * (dx_hat - x_hat * mean(dx_hat * x_hat)); it is orthogonal to "
                  "x_hat (up to eps) but need not sum to zero."),
    "dyt": N_("DyT's backward goes node by node, element by element: dt = dy * gamma, "
              "du = dt * (1 - t**2) with t = tanh(alpha * x) from the forward, dx = alpha * du, "
              "and dalpha = the sum of du * x over every element, one number."),
    "dropout": N_("Dropout's backward reuses the forward's mask and scale: dx = dy * mask / "
                  "(1 - p) in training, dx = dy in evaluation."),
    "softmax": N_("Softmax's dx goes through its whole Jacobian: dx = y * (dy - sum(dy * y)) "
                  "along the axis; it sums to zero along the axis."),
    "cross_entropy": N_("The fused gradient is dlogits = dloss * (softmax(x) - onehot(y)) / N; "
                        "each row sums to zero."),
    "log_softmax": N_("Log-softmax's Jacobian is d logp_i / d x_j = [i == j] - p_j, so dx = dy - "
                      "p * sum(dy) along the axis, p = exp(logp); it sums to zero along the axis."),
    "attention": N_("Go back node by node: dattn = dout v^T and dv = attn^T dout; dscores = "
                    "attn * (dattn - sum(dattn * attn)) over the keys; dq = dscores k / sqrt(D), "
                    "dk = dscores^T q / sqrt(D); dx sums the shares of q, k and v."),
    "qk_norm": N_("After dqn = dscores kn / sqrt(D) (and dkn), go back through each RMSNorm: "
                  "dq = rrms * (dq_hat - q_hat * mean(dq_hat * q_hat)) with dq_hat = dqn * gamma_q, "
                  "and dgamma_q sums dqn * q_hat over the batch, the heads and the positions."),
    "sync_batchnorm": N_("SyncBatchNorm's dx is BatchNorm's with the GLOBAL sums: all-reduce "
                         "[sum(dy_k), sum(dy_k * x_hat_k)], then dx = gamma * rstd * (dy - "
                         "sum_dy / N - x_hat * sum_dy_xhat / N); gamma.grad and beta.grad get the "
                         "LOCAL sums (+=)."),
    "mlp_with_batchnorm": N_("Go node by node from the top, each gradient from the one above it: "
                             "dlogits, da, dhbn, dh through BatchNorm's three paths, then "
                             "dx = dh @ w1.T. Check the first failing gradient in that order; a "
                             "weight's gradient is its input's transpose times the node's gradient."),
    "weight_norm": N_("dx = dy @ w goes through the weight the forward used; then v's and g's "
                      "shares of dw = dy^T x: dg = sum(dw * v_hat) per row, dv = (g / ||v||) "
                      "(dw - dg * v_hat)."),
    "batch_renorm": N_("r and d are constants in the backward: dx is BatchNorm's backward with "
                       "dx_hat = dy * gamma * r, divided by the batch's sigma_B; in evaluation "
                       "dx = dy * gamma / sigma."),
    "transformer_block": N_("A residual add sends the gradient down both paths and the chain rule adds "
                            "them: Pre-Norm dx = dy + LN'(F'(dy)); Post-Norm dz = LN'(dy), then dx = "
                            "dz + F'(dz); the reordered norm dx = dy + F'(LN'(dy)); G' is G's whole "
                            "backward (ReLU's mask, LayerNorm's mean and variance terms)."),
    "soft_cap": N_("dx = dy * (1 - t**2) with t = tanh(x / cap) from the forward: the outer cap and "
                   "the inner 1 / cap cancel, and the slope is 1 - (y / cap)**2, not 1 - y**2."),
    "z_loss": N_("d lse / d x is the softmax p, so dlogits = dloss * (p - onehot + 2 * z_loss * "
                 "lse * p) / N: the z-loss's share is p times 2 * z_loss * lse, row by row."),
}
WEIGHT_HINTS = {  # the gradients of weights and biases other than gamma and beta
    "weight_norm": N_("dw = dy^T x over every row of the input, dbias = sum(dy); g gets the dot "
                      "product of each row of dw with v / ||v||, v gets the rest of dw, the part "
                      "orthogonal to v, times g / ||v||."),
    "transformer_block": N_("A weight's gradient is its input, transposed, times the gradient at "
                            "its output, summed over every row: dw2 = relu(a)^T dg, dw1 = h^T da; "
                            "a bias's gradient is the gradient at its output summed over the rows."),
}
GAMMA_HINT = N_("gamma's gradient is the sum of dy * x_hat over every axis gamma is broadcast "
                "over, one entry per parameter.")
GAMMA_HINTS = {"batch_renorm": N_("gamma's gradient is the sum of dy * (x_hat * r + d) over every "
                                  "axis but the channels: gamma multiplies the corrected x_hat.")}
RMS_DEFAULT_EPS = (N_("RMSNorm(eps=None) takes the machine epsilon of the input's dtype, "
                      "np.finfo(x.dtype).eps, not 1e-5 or 1e-6."))
HintLevel = namedtuple("HintLevel", "names hints")  # name the mistakes; give symptoms and hints
HINT_LEVELS = {"none": HintLevel(False, False), "brief": HintLevel(True, False),
               "full": HintLevel(True, True)}


def hint_level(hints):
    """The HintLevel called ``hints`` ("none", "brief" or "full"); a clear error otherwise."""
    if hints not in HINT_LEVELS:
        raise ValueError(_("unknown hint level {hints!r}: expected one of {levels}").format(
            hints=hints, levels=", ".join(HINT_LEVELS)))
    return HINT_LEVELS[hints]


DTYPE_HINTS = {  # a dtype of the forward (False) or of the backward (True) that is not the input's
    False: N_("Return y in the input's dtype: compute, then cast the result back once at the end."),
    True: N_("dx has the input's dtype and each parameter's gradient the parameter's dtype: cast "
             "dx back once at the end, and add into .grad in place."),
}
FLOAT32_INSIDE = N_("computes in float32 inside: on float64 input it is off by up to {error} "
                    "relative, float32's rounding, where float64 keeps 1e-16")
FORWARD_FIRST = (N_("Fix the forward first: the backward checks of a probe whose forward "
                    "fails are graded against the right forward, so they fail with it even "
                    "when the backward is consistent with yours."))


def _teaching(exercise, backward):
    """Where normcore teaches the part of ``exercise`` that failed."""
    if exercise not in NOTEBOOKS:  # the reference answer's derivation (and section 9's facts)
        section = INTERVIEW_SECTIONS.get(exercise)
        where = _("normcore practice solution {name} (the derivation in its docstring)").format(
            name=exercise)
        if section:
            where = _("{where}, and notebooks/{notebook}.ipynb, section {section}").format(
                where=where, notebook=in_language("interview_practice"), section=section)
    else:
        notebook = f"notebooks/{in_language(NOTEBOOKS[exercise])}.ipynb"
        where = (_("{notebook}, sections 4 and 5 (the backward)") if backward else
                 _("{notebook}, sections 2 and 3 (the formulas, the forward)")).format(
                     notebook=notebook)
    if backward and exercise in EXPLAINED:
        return _("normcore explain {name}, or {where}").format(name=exercise, where=where)
    return where


def _generic_hints(exercise, checks):
    """Hints for failures no catalogued mistake explains: about this exercise and about what
    failed, the forward before the backward (in English; ``_()`` translates them where shown)."""
    rows = [c.row.rpartition(": ")[2] for c in checks]
    forward = [c for c in checks if not c.backward]
    hints = []
    if forward:
        if len(forward) < len(checks):
            hints.append(FORWARD_FIRST)
        if exercise == "rmsnorm" and any(c.probe.startswith("default eps") for c in forward):
            hints.append(RMS_DEFAULT_EPS)
        if any("dtype" in r for r in rows):
            hints.append(DTYPE_HINTS[False])
        if any(r.startswith("running") for r in rows):
            hints.append(N_("Check the running-average update step by step on one channel: "
                            "which batch statistic goes in, with which weight."))
        hints.append(FORWARD_HINTS[exercise])
        hints.append(N_("Work one tiny input (2 x 3) through your forward by hand and compare "
                        "it with normcore's layer."))
        return hints
    if any(r.endswith("dtype") for r in rows):
        hints.append(DTYPE_HINTS[True])
    values = [r for r in rows if not r.endswith("dtype")]
    if any(r.startswith(("dx", "dlogits")) or "gradients" in r for r in values):
        kind = exercise if exercise in DX_HINTS else "mean-var"
        hints.append(DX_HINTS[kind])
    once = {r.partition(" ")[0] for r in values if "after two" not in r}  # wrong after one backward
    if any("after two backward" in r and r.partition(" ")[0] not in once for r in rows):
        hints.append(N_("Parameter gradients accumulate: add into .grad (+=), never assign."))
    elif any(r.startswith("dgamma") for r in values):
        hints.append(GAMMA_HINTS.get(exercise, GAMMA_HINT))
    if any(r.startswith("dbeta") and "after two" not in r for r in values):
        hints.append(N_("beta's gradient is the sum of dy over every axis beta is broadcast "
                        "over."))
    if exercise in DX_HINTS and not any(r.startswith("dx") for r in values) and any(
            r.startswith("dalpha") for r in values):  # dalpha alone: the same node-by-node hint
        hints.append(DX_HINTS[exercise])
    names = {r.partition(" ")[0] for r in values}
    if exercise in WEIGHT_HINTS and any(n.startswith(("dw", "db")) and n != "dbeta" for n in names):
        hints.append(WEIGHT_HINTS[exercise])
    return hints


# the statuses and the how-sure word as the table shows them (the grader keeps the English ones)
STATUS = {"pass": N_("pass"), "FAIL": N_("FAIL"), "ERROR": N_("ERROR"), "TODO": N_("TODO"),
          "n/a": N_("n/a"), "-": "-", NOT_ASKED: N_("not asked"), NOT_WRITTEN: N_("not written")}
CONFIDENCE = {"reproduces": N_("reproduces")}  # "" (no mistake named) stays ""


def _collapse(checks, names=True):
    """Table rows (probe, row, status, error, how sure, note): a probe whose next checks all
    stopped (or were not asked) for the same reason becomes one row. Without ``names`` no
    mistake is named and no diagnosis shown."""
    rows, i = [], 0
    while i < len(checks):
        c = checks[i]
        j = i
        while (j + 1 < len(checks) and checks[j + 1].probe == c.probe
               and c.status in ("TODO", "ERROR", "n/a", NOT_ASKED, NOT_WRITTEN)
               and (checks[j + 1].status, checks[j + 1].note, checks[j + 1].diagnoses)
               == (c.status, c.note, c.diagnoses)):
            j += 1
        status = "-" if c.status in (NOT_ASKED, NOT_WRITTEN) else c.status  # the note says it
        row = _("{n} checks").format(n=j - i + 1) if j > i else show_label(c.row)
        rows.append((show_label(c.probe), row, _(STATUS[status]), None if j > i else c.error,
                     _(CONFIDENCE[c.confidence]) if names and c.confidence else "", _cell(c, names)))
        i = j + 1
    return rows


def _cell(check, names=True):
    """The diagnosis column: the mistake(s), or a note on why the check did not pass; without
    ``names``, the note alone."""
    if check.status == NOT_ASKED:
        return _("not asked (forward only)")
    if check.status == NOT_WRITTEN:
        return _("not written (training only)")
    if not names:
        return check.note
    if check.diagnoses:
        return " + ".join(check.diagnoses)
    if check.status == "FAIL" and is_finding(check.row):
        return _("a finding (below)")
    if check.follows:
        if check.note:
            return _("the forward fails first; {note}").format(note=check.note)
        return _("the forward fails first")
    if check.status == "FAIL":
        if check.note:
            return _("no catalogued mistake; {note}").format(note=check.note)
        return _("no catalogued mistake")
    return check.note


def _wrap(text, indent, width=WIDTH):
    return "\n".join(wrap(text, width, indent=indent))


def _table(rows, names=True):
    """The checks grouped by probe, at most WIDTH display columns; long cells wrap in their
    column."""
    name_w, note_at = 18, 50
    head = [pad(_("check"), name_w + 2), pad(_("result"), 6), pad(_("vs ref"), 6, ">"),
            pad(_("how sure") if names else "", 10),
            _("diagnosis / note") if names else _("note")]
    out = ["  ".join(head), "-" * WIDTH]
    probe = None
    for this_probe, row, status, err, how, note in rows:
        if this_probe != probe:
            out.append(_wrap(this_probe, ""))
            probe = this_probe
        err_text = "" if err is None else ("inf" if not np.isfinite(err) else f"{err:.0e}")
        names = wrap(row, name_w) if row else [""]
        notes = wrap(note, WIDTH - note_at) if note else [""]
        if len(notes) > 3:
            notes = notes[:2] + [clip(notes[2], WIDTH - note_at - 3) + "..."]
        lines = max(len(names), len(notes))
        names += [""] * (lines - len(names))
        notes += [""] * (lines - len(notes))
        for k in range(lines):
            cells = (status, err_text, how) if k == 0 else ("", "", "")
            out.append(f"  {pad(names[k], name_w)}  {pad(cells[0], 6)}  {pad(cells[1], 6, '>')}  "
                       f"{pad(cells[2], 10)}  {notes[k]}".rstrip())
    out.append("-" * WIDTH)
    return out


def reference_name(exercise):
    """normcore's layer the exercise is graded against; an adapter in ``references.py`` says
    which layers it chains (``built_from``)."""
    built_from = getattr(exercise.reference, "built_from", None)
    if built_from:
        return _("normcore's {layers}").format(layers=_(built_from))
    return f"normcore.{exercise.reference.__name__}"


def _counts(counts):
    """'49 checks: 44 pass, 5 FAIL' in the language in use."""
    return _(", ").join(_("{n} {status}").format(n=n, status=_(STATUS[s])) for s, n in counts.items() if n)


def format_report(report, hints="full"):
    """The report as printed by ``normcore practice check``: at most 80 display columns wide;
    ``hints`` says how much it tells (``HINT_LEVELS``)."""
    level = hint_level(hints)
    ex = report.exercise
    out = [_wrap(_("Grading {cls} from {file} as the {name} exercise (reference: {ref})").format(
        cls=report.class_name, file=report.file, name=ex.name, ref=reference_name(ex)), "")]
    counts = {s: sum(c.status == s for c in report.checks)
              for s in ("pass", "FAIL", "ERROR", "TODO", "n/a", NOT_ASKED, NOT_WRITTEN)}
    if report.forward_only:
        out.append(_wrap(_("Forward only ({why}): the backward's {n} checks are not asked.").format(
            why=_(report.forward_only), n=counts[NOT_ASKED]), ""))
    if report.no_running_stats:
        out.append(_wrap(_("Training only ({why}): the running statistics were not written; "
                           "the {n} checks of the running statistics and of evaluation are not "
                           "graded.").format(
            why=_(report.no_running_stats), n=counts[NOT_WRITTEN]), ""))
    out += [""] + _table(_collapse(report.checks, level.names), level.names)
    out.append(_wrap(_("{n} checks: {counts}").format(n=len(report.checks), counts=_counts(counts)),
                     ""))
    if report.not_implemented:
        out.append(_wrap(_("Not implemented yet: {methods} (the TODOs of the skeleton).").format(
            methods=", ".join(report.not_implemented)), ""))
    if report.float32_inside is not None:
        out.append(_wrap(_(FLOAT32_INSIDE).format(error=f"{report.float32_inside:.0e}"), ""))
    failing = [c for c in report.checks if c.status == "FAIL"]
    findings = [c for c in failing if is_finding(c.row) and not c.diagnoses]
    named = report.diagnosis_ids  # the mistakes and the published variants
    wrong = failing or named  # a raising check can carry a name too
    if wrong and not level.names:
        out += ["", _wrap(_("{n} check(s) fail (hints: none; no mistake is named).").format(
            n=len(failing)), "")]
    elif wrong and not level.hints:
        out += ["", _("Diagnosis (hints: brief)")]
        for mistake_id in named:
            hits = [show_label(c.label) for c in report.checks if mistake_id in c.diagnoses]
            variant = BY_ID[mistake_id].variant_in(ex.name)
            title = (_("a published variant: {name}").format(name=catalog_text(variant.name))
                     if variant else catalog_text(BY_ID[mistake_id].title))
            out.append(_wrap(f"[{mistake_id}] {title}", "  "))
            out += _constant(report, BY_ID[mistake_id])
            out.append(_wrap(_("shows in {n} check(s): {checks}").format(
                n=len(hits), checks=_some(hits)), "    "))
        out += _findings(report.findings, findings, hints=False)
        unexplained = [show_label(c.label) for c in failing if not c.diagnoses and c not in findings]
        if unexplained:
            out.append(_wrap(_("No catalogued mistake names {n} failing check(s): {checks}").format(
                n=len(unexplained), checks=_some(unexplained)), "  "))
        out += _partly(report, hints=False)
    elif wrong:
        follows = [c for c in failing if c.follows]
        unexplained = [c for c in failing if not c.diagnoses and not c.follows and c not in findings]
        for mistake_id in report.variants:
            out += [""] + _variant(report, BY_ID[mistake_id])
        out += _findings(report.findings, findings)
        if report.mistake_ids or unexplained or follows:
            out += [""]
        if report.mistake_ids:
            out += wrap(_("Diagnosis (reproduces: the mistake's mutant gives every number of "
                          "every probe as yours does)"), WIDTH - 2)
        elif unexplained or follows:
            out.append(_("Diagnosis"))
        for mistake_id in report.mistake_ids:
            out += _diagnosis(report, BY_ID[mistake_id])
        if follows and all(c.backward for c in unexplained):  # else a hint says it
            out.append(_wrap(_("{n} backward check(s) fail in probes whose forward fails; fix "
                               "the forward first, then grade again.").format(n=len(follows)), "  "))
        if unexplained:
            out.append(_wrap(_("No catalogued mistake produces your numbers in {n} failing "
                               "check(s):").format(n=len(unexplained)), "  "))
            for c in unexplained[:6]:
                label = show_label(c.label) + (f" ({c.note})" if c.note else "")
                out.append(_wrap(label, "    "))
            if len(unexplained) > 6:
                out.append("    " + _("... and {n} more").format(n=len(unexplained) - 6))
            for hint in _generic_hints(ex.name, unexplained + follows):
                out.append(_wrap(_("hint: {hint}").format(hint=_(hint)), "    "))
            backward = all(c.backward for c in unexplained)
            out.append(_wrap(_("learn: {where}").format(where=_teaching(ex.name, backward)), "    "))
        out += _partly(report)
    errors = [c for c in report.checks if c.status == "ERROR"]
    if errors:
        out += ["", _wrap(_("Your layer raised an error in {n} check(s); the first: {note}").format(
            n=len(errors), note=errors[0].note), "")]
    if report.passed:
        done = (_("All forward checks pass (the backward was not asked).") if report.forward_only
                else _("All checks pass."))
    else:
        done = _("Not all checks pass yet.")
    out += ["", done]
    if report.passed and report.no_running_stats:
        out.append(_wrap(_("The running statistics were not written: BatchNorm needs them in "
                           "evaluation (normcore practice new batchnorm asks for them)."), ""))
    return "\n".join(out)


def _variant(report, mistake):
    """The lines of a published variant the answer reproduces: what it is, where it is
    published and what the exercise asks instead (not what was asked, and no mistake), the
    checks it reproduces, the hint toward what is asked and where normcore teaches it."""
    variant = mistake.variant_in(report.exercise.name)
    lines = _diagnosis(report, mistake)
    return [_("Not what was asked (a published variant, not a mistake)"),
            _wrap(_("[{id}] a published variant: {name} ({source}); the exercise asks "
                    "{asks}").format(id=mistake.id, name=catalog_text(variant.name),
                                     source=catalog_text(variant.source),
                                     asks=catalog_text(variant.asks)), "  ")] + lines[1:2] + lines[3:]


def _partly(report, hints=True, shown=3):
    """The lines of the catalogued mistakes that each give some of the failing numbers
    (``diagnosis.partly``), when none was named: headed as unsure, apart from any diagnosis,
    each with the checks it gives (with ``hints``, its title too); [] when there are none."""
    found = report.partly
    if not found:
        return []
    out = ["", _wrap(_("Most likely mistakes (unsure, not a diagnosis): each gives some of "
                       "your failing numbers exactly, none gives them all"), "")]
    for mistake_id, checks in found[:shown]:
        title = f" {catalog_text(BY_ID[mistake_id].title)}" if hints else ""
        out.append(_wrap(f"? [{mistake_id}]{title}", "  "))
        out.append(_wrap(_("gives your numbers in {n} failing check(s): {checks}").format(
            n=len(checks), checks=_some([show_label(c.label) for c in checks])), "    "))
    if len(found) > shown:
        out.append("  " + _("... and {n} more").format(n=len(found) - shown))
    return out


def _findings(findings, checks, hints=True):
    """The findings (``checks``, their failing checks): failures of their own beside what the
    numbers show, each with what was expected; with ``hints``, a heading that says so and the
    hint of a dtype."""
    if not findings:
        return []
    out = ["", _wrap(_("Findings (failures of their own, beside what the numbers show):"), "")
           if hints else _("Findings")]
    for f in findings:
        out.append(_wrap(_("{check}: {yours} (expected: {expected})").format(
            check=show_label(f.label), yours=f.yours, expected=f.expected), "  "))
    dtypes = {c.backward for c in checks if c.row.endswith("dtype")}
    for backward in sorted(dtypes) if hints else ():
        out.append(_wrap(_("hint: {hint}").format(hint=_(DTYPE_HINTS[backward])), "    "))
    return out


def _constant(report, mistake):
    """The line saying the constant a mistake was found with, when the grader fitted one
    (``constants.py``): ["    with eps = 1e-05 inside the log"]; else []."""
    if mistake.id not in getattr(report, "constants", {}):
        return []
    constant, value = report.constants[mistake.id]
    return [_wrap(catalog_text(constant.said).format(name=constant.name, value=repr(value)), "    ")]


def _diagnosis(report, mistake):
    """The lines of one named mistake: its title, the checks it reproduces, its symptom, hint
    and where normcore teaches it (the catalog's text, in the catalog's translation)."""
    hits = [c for c in report.checks if mistake.id in c.diagnoses]
    others = sorted({i for c in hits for i in c.combined_with} - {mistake.id})
    together = _(" (together with {others})").format(others=", ".join(others)) if others else ""
    if all(c.status == "FAIL" for c in hits):
        what = _("reproduces your numbers{together} in {n} failing check(s), e.g. {check}")
    else:
        what = _("reproduces your numbers{together} in {n} failing or raising check(s), e.g. "
                 "{check}")
    what = what.format(together=together, n=len(hits), check=show_label(hits[0].label))
    return [_wrap(f"[{mistake.id}] {catalog_text(mistake.title)}", "  "),
            *_constant(report, mistake),
            _wrap(what, "    "),
            _wrap(_("symptom: {text}").format(text=catalog_text(mistake.symptom)), "    "),
            _wrap(_("hint: {hint}").format(hint=catalog_text(mistake.hint)), "    "),
            _wrap(_("learn: {where}").format(where=catalog_text(mistake.taught_in)), "    ")]


def _some(labels, shown=3):
    """The first ``shown`` check labels, and how many more."""
    text = "; ".join(labels[:shown])
    if len(labels) > shown:
        return _("{checks}; and {n} more").format(checks=text, n=len(labels) - shown)
    return text
