"""Source of notebooks/interview_practice.ipynb (python notebooks/build.py interview_practice)."""

from build import CLASS_SCORES, code, md, question

CELLS = [
    md(r"""
    # Interview practice: hand-write a norm, forward and backward

    "Write LayerNorm (or BatchNorm, or RMSNorm) in NumPy, forward and backward" is a standard
    interview question. It tests whether you know the formulas, keep the right cache, get the
    shapes right, can derive the three-term backward, and can *prove* it with a gradient check.
    This notebook is a worked answer and a drill:

    1. the intuition in one table: which axis, which statistics
    2. the formulas to have at your fingertips
    3. a ten-minute LayerNorm from scratch, forward in code
    4. its backward, derived with the step-through tape
    5. the compact formula, and why it equals the staged one
    6. the gradient check that proves it
    7. the pitfalls: the classic mistakes, each with the fingerprint it leaves in the numbers
    8. figures: the fingerprints side by side
    9. beyond the norms: softmax, cross-entropy, attention and the residual block

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    import normcore as nc
    from normcore.derivations import step_through

    np.set_printoptions(precision=4, suppress=True)

    def tidy(a):   # rounded to the 4 printed decimals; + 0.0 turns -0.0 into 0.0, so "-0." is never printed
        return np.round(a, 4) + 0.0
    """),
    md(r"""
    ## 1. Intuition: which axis

    The first question to settle out loud, with the class's test scores (rows are students,
    columns subjects):

    | norm | statistics over | scores analogy | batch needed? | running stats? |
    |---|---|---|---|---|
    | BatchNorm | the batch (and spatial) axes, per channel | each subject across the class | yes | yes, for eval |
    | LayerNorm | the feature axes, per sample | each student across their subjects | no | no |
    | RMSNorm | the feature axes, per sample, no mean | each student's scores divided by their size | no | no |
    | GroupNorm | groups of channels, per sample | each student within sciences, within humanities | no | no |
    """),
    code(CLASS_SCORES, r"""
    print("BatchNorm (columns):\n", nc.BatchNorm1d(3, affine=False)(scores))
    print("LayerNorm (rows):\n", nc.LayerNorm(3, elementwise_affine=False)(scores))
    """),
    md(r"""
    ## 2. The formulas

    With $g = dy\,\gamma$, means over the normalised axes, $r = 1/\sqrt{\operatorname{var} + \epsilon}$:

    | | forward | backward to x |
    |---|---|---|
    | LayerNorm / BatchNorm (train) | $\hat{x} = (x - \mu)\,r$, $\ y = \gamma\hat{x} + \beta$ | $\bar{x} = r\,(g - \operatorname{mean}(g) - \hat{x}\operatorname{mean}(g\hat{x}))$ |
    | RMSNorm | $\hat{x} = x\,r$, $r = 1/\sqrt{\operatorname{mean}(x^2) + \epsilon}$, $\ y = \gamma\hat{x}$ | $\bar{x} = r\,(g - \hat{x}\operatorname{mean}(g\hat{x}))$ |
    | BatchNorm (eval) | $\hat{x} = (x - \text{running mean}) / \sqrt{\text{running var} + \epsilon}$ | $\bar{x} = g / \sqrt{\text{running var} + \epsilon}$ |

    and for every one of them $\bar{\gamma} = \sum dy\,\hat{x}$, $\bar{\beta} = \sum dy$, summed over
    every axis $\gamma$ is broadcast along. Say also: biased variance to normalise; BatchNorm's
    running variance is the unbiased one; $\epsilon$ inside the root; `momentum` weights the new
    batch (PyTorch's convention).

    ## 3. A ten-minute LayerNorm, forward in code

    The answer, in the shape `normcore practice` grades (the same constructor and attributes as
    `torch.nn.LayerNorm`): two parameters, a forward that caches exactly $\hat{x}$ and $r$, and a
    backward with a shape comment on every line. In an interview you would write it with NumPy
    alone; here it derives from `nc.Module` so that `nc.gradcheck` can take it apart. The class
    attribute `mistake` switches in one of the classic slips, for section 7; `None` is the
    correct layer.
    """),
    code(r"""
    class LayerNorm(nc.Module):
        # LayerNorm over the last len(normalized_shape) axes D, written from scratch.
        # x: (*, D); gamma, beta: D
        mistake = None

        def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
            shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
            self.axes = tuple(range(-len(shape), 0))                                     # D
            self.eps = eps
            self.gamma = nc.Parameter(np.ones(shape), dtype=dtype)
            self.beta = nc.Parameter(np.zeros(shape), dtype=dtype)

        def forward(self, x):
            mean = x.mean(axis=self.axes, keepdims=True)                                 # (*, 1)
            ddof = 1 if self.mistake == "unbiased variance" else 0
            var = x.var(axis=self.axes, ddof=ddof, keepdims=True)                        # (*, 1)
            if self.mistake == "eps outside the root":
                rstd = 1.0 / (np.sqrt(var) + self.eps)                                   # (*, 1)
            else:
                rstd = 1.0 / np.sqrt(var + self.eps)                                     # (*, 1)
            x_hat = (x - mean) * rstd                                                    # (*, D)
            self._cache = (x_hat, rstd)
            return (x_hat * self.gamma.data + self.beta.data).astype(x.dtype)            # (*, D)

        def backward(self, dy):
            x_hat, rstd = self._cached()
            lead = tuple(range(dy.ndim - len(self.axes)))                                # the * axes
            reduce = np.mean if self.mistake == "dgamma averaged" else np.sum
            self.gamma.grad += reduce(dy * x_hat, axis=lead)                             # D
            self.beta.grad += dy.sum(axis=lead)                                          # D
            g = dy * self.gamma.data                                                     # (*, D)
            if self.mistake == "statistics held constant":
                return (rstd * g).astype(dy.dtype)                                       # (*, D)
            mean_g = 0.0 if self.mistake == "no mean term" else g.mean(self.axes, keepdims=True)       # (*, 1)
            proj = 0.0 if self.mistake == "no x_hat term" else (g * x_hat).mean(self.axes, keepdims=True)  # (*, 1)
            sign = -1.0 if self.mistake == "x_hat term added" else 1.0                 # a sign slip
            return (rstd * (g - mean_g - sign * x_hat * proj)).astype(dy.dtype)          # (*, D)

    rng = np.random.default_rng(42)
    x = rng.normal(1.0, 2.0, size=(3, 4))
    mine, ref = LayerNorm(4), nc.LayerNorm(4)
    for p_mine, p_ref in zip(mine.parameters(), ref.parameters()):
        p_mine.data[...] = p_ref.data[...] = rng.standard_normal(4)
    print("forward, largest difference from nc.LayerNorm:", np.abs(mine(x) - ref(x)).max())
    """),
    md(r"""
    ## 4. The backward, derived with the tape

    If the compact formula does not come to mind, derive it: write the forward as elementary
    steps and take each step's local derivative, last step first. The table below is what
    `normcore.derivations` builds for LayerNorm; `normcore explain layernorm` prints it with
    numbers.

    <<tape layernorm 3x4>>

    Following the gradient into $x$ along its three paths:
    """),
    code(r"""
    dy = rng.standard_normal(x.shape)
    st = step_through("layernorm", x, gamma=mine.gamma.data, beta=mine.beta.data, dy=dy)
    t = st.tape
    for node, to in [("x_hat", "xc"), ("xc2", "xc"), ("xc", "x"), ("mean", "x")]:
        print(f"share {node:>5} -> {to:<3}", t[node].share(to)[0])
    print("dL/dx, row 0:          ", t["x"].grad[0])
    """),
    md(r"""
    ## 5. The compact formula, and why it equals the staged one

    Direct path $r g$; through the variance $-r\hat{x}\operatorname{mean}(g\hat{x})$; through the
    mean $-r\operatorname{mean}(g)$ (the variance path contributes nothing there, since the
    centred values sum to zero). Their sum is the one-line backward of our `LayerNorm`. The
    step-through checks the staged gradient against `nc.LayerNorm.backward` node by node:
    """),
    code(r"""
    print(st.text(parts=("checks",)))
    mine.zero_grad(); mine(x)
    print("\nour LayerNorm.backward vs the tape:", np.abs(mine.backward(dy) - t["x"].grad).max())
    """),
    md(r"""
    ## 6. The gradient check that proves it

    In an interview, finish with this: central differences in float64, a **random** upstream
    gradient and random $\gamma$ and $\beta$. With $dy = 1$ and $\gamma$ at its initial ones,
    $g = dy\,\gamma$ is constant along the row, both correction terms cancel it, and the input
    gradient is exactly zero: a backward that returns zeros would pass.
    """),
    code(r"""
    report = nc.gradcheck(mine, x)
    print(report)
    assert report.passed
    fresh = LayerNorm(4)                       # gamma = 1, beta = 0
    fresh(x)
    print("\nwith dy = ones and gamma = ones, the input gradient is\n", tidy(fresh.backward(np.ones_like(x))))
    """),
    question(r"""
    Keep $dy = 1$ but give $\gamma$ random values. Is the check of $\bar{x}$ meaningful now?
    """, r"""
    Yes, in part: $g = dy\,\gamma = \gamma$ varies along the row, so neither
    $g - \operatorname{mean}(g)$ nor $\hat{x}\operatorname{mean}(g\hat{x})$ cancels and
    $\bar{x}$ is not zero. But every row then gets the same $g$; a random $dy$ tests more, at
    no cost.
    """),
    md(r"""
    ## 7. The pitfalls: each mistake leaves a fingerprint

    Each classic slip breaks a different check. Reading *which* checks fail tells you which
    mistake it was, before reading the code:

    * forward wrong: a mistake in the statistics (unbiased variance, eps outside the root);
    * forward right, $\bar{x}$ wrong, $\bar{\gamma}, \bar{\beta}$ right: a missing term of the
      input backward; if $\sum_j \bar{x}_j \ne 0$, the mean term is among the missing;
    * $\bar{\gamma}$ wrong: reduced wrongly (averaged instead of summed over the samples).

    `normcore practice` turns this reading into a diagnosis: it runs your class and normcore's
    layer on the same inputs (ranks 2 to 4, float32, one sample, a constant row, tiny
    variances), and when a check fails it runs each catalogued mistake on the same inputs and
    names the one whose numbers match yours. It never reads your source. The last column below
    is its verdict. A slip it has no entry for (here, the x_hat term added instead of
    subtracted) fails with no name, only hints: the grader names a mistake only when a
    catalogued one gives your numbers.
    """),
    code(r"""
    from normcore.practice import EXERCISES, grade

    MISTAKES = [None, "unbiased variance", "eps outside the root", "statistics held constant",
                "no x_hat term", "no mean term", "dgamma averaged", "x_hat term added"]

    def with_mistake(mistake):
        return type("LayerNorm", (LayerNorm,), {"mistake": mistake})

    def fingerprint(mistake, x, seed=0):
        # relative errors of the forward and of the gradients of x, gamma and beta
        layer = with_mistake(mistake)(x.shape[-1])
        layer.gamma.data[...], layer.beta.data[...] = ref.gamma.data, ref.beta.data
        report = nc.gradcheck(layer, x, seed=seed)
        return [nc.rel_error(layer(x), ref(x))] + [report[name].rel_error for name in ("x", "gamma", "beta")]

    print(f"{'mistake':<25} {'forward':>8} {'dx':>8} {'dgamma':>8} {'dbeta':>8}  normcore practice says")
    table = {}
    for mistake in MISTAKES:
        table[mistake] = fingerprint(mistake, x)
        report = grade(with_mistake(mistake), EXERCISES["layernorm"])
        verdict = "pass" if report.passed else ", ".join(report.diagnosis_ids) or "FAIL (no catalogued match)"
        print(f"{str(mistake):<25} " + " ".join(f"{v:>8.0e}" for v in table[mistake]) + f"  {verdict}")
    """),
    md(r"""
    The grader's full report for one of them, as `normcore practice check FILE` prints it:
    """),
    code(r"""
    from normcore.practice.grader import format_report

    print(format_report(grade(with_mistake("no x_hat term"), EXERCISES["layernorm"])))
    """),
    question(r"""
    A LayerNorm passes the forward and the $\gamma$, $\beta$ checks, and $\sum_j \bar{x}_j = 0$
    on every row, yet $\bar{x}$ is wrong. Which term would you suspect first, and which sum
    would you print to confirm it?
    """, r"""
    The variance term, $-r\,\hat{x}\operatorname{mean}(g\hat{x})$. Leaving it out keeps
    $\sum_j \bar{x}_j = 0$ (the remaining $r\,(g - \operatorname{mean}(g))$ sums to zero), but
    then $\sum_j \bar{x}_j \hat{x}_j = r \sum_j g_j \hat{x}_j$, which is not zero: print
    `(dx * x_hat).sum(-1)`, which a right backward keeps at about 0.
    """),
    md(r"""
    **Practise at the terminal.** `normcore practice new layernorm` writes `my_layernorm.py`, a
    skeleton with the contract and TODOs; fill it in and run `normcore practice check
    my_layernorm.py`. The same for `batchnorm`, `rmsnorm`, `groupnorm`, `dropout`, `softmax`
    and `cross_entropy`;
    `normcore practice list --mistakes` prints the whole catalog with each mistake's symptom, and
    `normcore practice solution NAME` a reference answer.
    """),
    code(r"""
    from normcore.cli import main

    main(["practice", "list"]);
    """),
    md(r"""
    The same habits catch the BatchNorm-specific slips: compare the running statistics after a
    few steps with `nc.BatchNorm1d`'s (a flipped momentum, `bn-momentum-flipped`, or a biased
    running variance, `bn-running-var-biased`, shows up there and not in any gradient), and
    compare evaluation outputs (batch statistics in eval, `bn-eval-batch-stats`, or
    $\sqrt{\text{running var}^2 + \epsilon}$, `bn-eval-squared-var`, show up only there). The
    grader's BatchNorm exercise runs exactly these probes. By hand, for the running statistics:
    """),
    code(r"""
    stream = np.random.default_rng(5)
    ref_bn = nc.BatchNorm1d(2)
    flipped_mean, biased_var = np.zeros(2), np.ones(2)
    for _ in range(5):
        batch = stream.normal(3.0, 2.0, size=(8, 2))
        ref_bn(batch)
        flipped_mean = 0.1 * flipped_mean + 0.9 * batch.mean(0)       # momentum weighting the old value
        biased_var = 0.9 * biased_var + 0.1 * batch.var(0)            # ddof=0 in the running update
    print("running_mean, nc.BatchNorm1d:", ref_bn.running_mean, " flipped momentum:", flipped_mean)
    print("running_var,  nc.BatchNorm1d:", ref_bn.running_var, " biased update:   ", biased_var)
    """),
    md(r"""
    ## 8. Figures: the fingerprints side by side

    The relative errors of section 7 on a log scale (a correct layer sits around $10^{-10}$, a
    mistake near $10^{-1}$ to $1$). One row per mistake, one column per check.
    """),
    code(r"""
    columns = ["forward", "dx", "dgamma", "dbeta"]
    grid = np.array([table[m] for m in MISTAKES])
    fig, ax = plt.subplots(figsize=(8, 4.2))
    im = ax.imshow(np.log10(np.maximum(grid, 1e-16)), cmap="cividis", vmin=-12, vmax=0, aspect="auto")
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(MISTAKES)), [str(m) if m else "correct" for m in MISTAKES])
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            dark = np.log10(max(grid[i, j], 1e-16)) < -6                 # cividis is dark there
            ax.text(j, i, f"{grid[i, j]:.0e}", ha="center", va="center", fontsize=7,
                    color="white" if dark else "black")
    fig.colorbar(im, ax=ax, label="log10 relative error")
    ax.set_title("Which check each mistake breaks")
    plt.tight_layout(); plt.show()
    """),
    md(r"""
    And the BatchNorm slip that no gradient check sees, from the experiments (`normcore
    figures`): with the momentum convention flipped, the running statistics never settle; they
    stay as noisy as a single batch (momentum 0.9: orange, crosses), where PyTorch's
    `momentum=0.1` settles within about 30 batches (blue, circles).

    ![Error of the running statistics against batches seen, for three momenta](../figures/running_stats_convergence.png)
    """),
    md(r"""
    ## 9. Beyond the norms: softmax, cross-entropy, attention, the residual block

    Interview banks ask for attention, softmax and cross-entropy more often than for a norm,
    and a "write a Transformer layer" question ends in a residual block with a norm. Each has a
    `normcore practice` exercise; here are the facts the grader's mistakes turn on, measured
    with normcore's own layers.

    ### 9.1 Softmax: the whole Jacobian, and the max shift

    Every $y_i$ depends on every $x_j$ of its slice: $\partial y_i/\partial x_j = y_i([i=j] - y_j)$.
    Applied to $dy$: $\bar{x} = y\,(dy - \sum dy\,y)$. Because the outputs sum to 1, this
    $\bar{x}$ sums to zero along the axis; the diagonal alone, $dy\,y(1-y)$ (a sigmoid's
    derivative), does not.
    """),
    code(r"""
    xs = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    sm = nc.Softmax(axis=-1)
    ys, dys = sm(xs), rng.standard_normal(xs.shape)
    print("row sums of dx, whole Jacobian:", tidy(sm.backward(dys).sum(-1)))
    print("row sums of dx, diagonal only: ", tidy((dys * ys * (1 - ys)).sum(-1)))
    print(nc.gradcheck(nc.Softmax(axis=-1), xs))

    big = np.array([1000.0, 1001.0])
    with np.errstate(all="ignore"):
        print("exp(x) / sum(exp(x)) at 1000:", np.exp(big) / np.exp(big).sum(),
              "  with the max subtracted:", nc.Softmax()(big))
    """),
    md(r"""
    ### 9.2 Cross-entropy: log-softmax, and the fused gradient

    $\log p = z - \log\sum e^{z}$ with $z = x - \max x$ is finite however small $p$ is;
    $\log(\operatorname{softmax}(x))$ is not. Through log-softmax the gradient fuses to
    $\partial L/\partial x = (p - \text{onehot}(y)) / N$: no division by $p$, each row sums to
    zero. Below, the second sample's target logit is 803 below its best one.
    """),
    code(r"""
    logits = np.array([[2.0, -1.0, 0.5], [0.0, -800.0, 3.0]])
    targets = np.array([0, 1])
    ce = nc.CrossEntropyLoss()
    loss = ce(logits, targets)
    dlogits = ce.backward(1.0)
    with np.errstate(all="ignore"):
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        as_log_of_softmax = -np.log(p[np.arange(2), targets]).mean()
        dp = np.zeros_like(p)
        dp[np.arange(2), targets] = -1.0 / (2 * p[np.arange(2), targets])   # dL/dp = -1 / (N p)
        unfused = p * (dp - (dp * p).sum(1, keepdims=True))                # then the softmax Jacobian
    print("loss:", loss, "  as log(softmax(x)):", as_log_of_softmax)
    print("fused dlogits:\n", dlogits, "\nrow sums:", dlogits.sum(1))
    print("through 1/p and the Jacobian:\n", unfused)
    """),
    md(r"""
    ### 9.3 Attention: the scale, the mask, three shares of dx

    With unit-variance queries and keys, a score $q \cdot k$ over $D$ channels has standard
    deviation $\sqrt{D}$; dividing by $\sqrt{D}$ (the *head* dimension) brings it back to 1.
    Without it, the softmax rows grow peaked as $D$ grows: the mean largest weight over 16 keys
    is measured below.
    """),
    code(r"""
    for D in (4, 16, 64, 256):
        q, k = rng.standard_normal((2, 500, 16, D))               # 500 queries, 16 keys each
        scores = np.einsum("nd,njd->nj", q[:, 0], k)              # (500, 16)
        top = {s: nc.Softmax()(scores / s).max(-1).mean() for s in (1.0, np.sqrt(D))}
        print(f"D={D:>3}: std of q.k {scores.std():5.1f}   mean top weight: "
              f"unscaled {top[1.0]:.2f}, / sqrt(D) {top[np.sqrt(D)]:.2f}")
    """),
    md(r"""
    The causal mask is added to the scores as $-\infty$ *before* the softmax, so each row
    renormalises over the keys it may see. Zeroing the weights *after* the softmax leaves rows
    that no longer sum to 1. And since $x$ feeds the query, key and value projections, its
    gradient is the sum of three shares; the gradient check of normcore's
    `MultiheadSelfAttention` (causal, two heads) proves all of them and every weight's:
    """),
    code(r"""
    S = rng.standard_normal((4, 4))
    future = np.triu(np.ones((4, 4), dtype=bool), k=1)
    before = nc.Softmax()(np.where(future, -np.inf, S))
    after = np.where(future, 0.0, nc.Softmax()(S))
    print("row sums, mask before the softmax:", before.sum(-1))
    print("row sums, mask after the softmax: ", after.sum(-1))

    attention = nc.MultiheadSelfAttention(8, 2, causal=True, rng=0)
    print(nc.gradcheck(attention, rng.standard_normal((2, 5, 8))))
    """),
    md(r"""
    ### 9.4 The residual block: the identity path carries dy

    Pre-Norm: $y = x + F(\mathrm{LN}(x))$, so $\bar{x} = dy + \mathrm{LN}^\top F^\top dy$: the
    upstream gradient arrives through the identity path unchanged, plus the branch's share.
    Post-Norm: $y = \mathrm{LN}(x + F(x))$, so the gradient first goes through the norm's
    backward, $dz = \mathrm{LN}^\top dy$, and then $\bar{x} = dz + F^\top dz$. Dropping the
    identity share removes exactly $dy$ (Pre) or $dz$ (Post). With normcore's
    `TransformerBlock` (attention and feed-forward sub-layers, both checked):
    """),
    code(r"""
    for position in ("pre", "post"):
        block = nc.TransformerBlock(8, 2, d_ff=16, position=position, rng=1)
        xb = rng.standard_normal((2, 4, 8))
        dyb = rng.standard_normal(xb.shape)                       # a random upstream gradient
        report = nc.gradcheck(block, xb, dy=dyb)
        worst = max(report.checks, key=lambda c: c.rel_error)
        print(f"{position:>4}-Norm block: {len(report.checks)} gradients, all pass: {report.passed}; "
              f"largest relative error {worst.rel_error:.1e} ({worst.name})")
    """),
    md(r"""
    Practise each at the terminal: `normcore practice list` shows the path from easy to hard,
    `normcore practice new attention` writes a skeleton, and `normcore practice check` names
    the mistake your numbers match.
    """),
    md(r"""
    ## Where next

    * Write your own BatchNorm and RMSNorm the same way, and check them with `nc.gradcheck`.
    * `normcore explain batchnorm` and `normcore explain rmsnorm` show their tapes with numbers.
    """),
]
