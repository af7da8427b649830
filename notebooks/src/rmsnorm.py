"""Source of notebooks/rmsnorm.ipynb (build with: python notebooks/build.py rmsnorm)."""

from build import CLASS_SCORES, code, md

CELLS = [
    md(r"""
    # RMSNorm, one node at a time

    RMSNorm is LayerNorm without the centring: each sample is divided by its root mean square
    and multiplied by a learned $\gamma$. No mean, no $\beta$. It is cheaper (one reduction
    instead of two) and is what LLaMA-style models use.

    1. the intuition: what is kept when the mean is not removed
    2. the formulas
    3. the forward in code
    4. the backward, derived step by step, and the step-through tape
    5. the compact backward formula and why it equals the staged one
    6. the gradient check
    7. the pitfalls: the normaliser, where eps goes, whole-batch RMS, default eps
    8. figures

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    import normcore as nc
    from normcore.derivations import step_through

    np.set_printoptions(precision=4, suppress=True)
    """),
    md(r"""
    ## 1. Intuition: scale without centring

    The students again. LayerNorm made Ana (90 80 70) and Ben (60 50 40) identical. RMSNorm
    only divides each row by its size, $\sqrt{\operatorname{mean}(x^2)}$: the rows keep their
    sign and their offset from zero, and Ben's row, whose spread is large compared with its
    size, keeps more of its slope.
    """),
    code(CLASS_SCORES, r"""
    rms = nc.RMSNorm(3, elementwise_affine=False)
    ln = nc.LayerNorm(3, elementwise_affine=False)
    print("       RMSNorm                     LayerNorm")
    for name, a, b in zip(students, rms(scores), ln(scores)):
        print(f"{name:<5} {a}    {b}")
    print("\nmean square of each RMSNorm row:", (rms(scores) ** 2).mean(axis=1))
    """),
    md(r"""
    On centred data the two agree: RMSNorm of $x - \operatorname{mean}(x)$ is LayerNorm of $x$
    (the mean square of a centred row is its variance).
    """),
    code(r"""
    centred = scores - scores.mean(axis=1, keepdims=True)
    print(np.abs(nc.RMSNorm(3, eps=1e-5, elementwise_affine=False)(centred) - ln(scores)).max())
    """),
    md(r"""
    ## 2. The formulas

    For a sample $x \in \mathbb{R}^D$:

    $$m = \frac{1}{D}\sum_j x_j^2, \qquad r = \frac{1}{\sqrt{m + \epsilon}}, \qquad
      \hat{x}_j = x_j\, r, \qquad y_j = \gamma_j\, \hat{x}_j$$

    The mean square divides by $D$, the number of features; $\epsilon$ is inside the square root.
    `RMSNorm(eps=None)`, the default, uses the machine epsilon of the input's dtype
    ($2.2 \times 10^{-16}$ for float64), as PyTorch does.
    """),
    md(r"""
    ## 3. The forward in code
    """),
    code(r"""
    rng = np.random.default_rng(42)
    x = rng.normal(0.5, 2.0, size=(3, 4))
    layer = nc.RMSNorm(4)
    layer.gamma.data[...] = rng.standard_normal(4)
    y = layer(x)
    print(layer, " eps in use:", np.finfo(np.float64).eps)
    print("y =\n", y)
    ms = (x ** 2).mean(axis=-1, keepdims=True)
    print("largest difference from the formulas:", np.abs(x / np.sqrt(ms + np.finfo(np.float64).eps) * layer.gamma.data - y).max())
    """),
    md(r"""
    ## 4. The backward, derived step by step

    Six steps instead of nine; $x$ feeds two of them (the square and the normalisation), so its
    gradient is the sum of two shares.

    | step | forward | backward |
    |---|---|---|
    | scale | $y = \hat{x}\,\gamma$ | $\bar{\hat{x}} = \bar{y}\,\gamma$, $\ \bar{\gamma}_j = \sum_{\text{samples}} \bar{y}_j\,\hat{x}_j$ |
    | normalise | $\hat{x} = x\, r$ | $\bar{x} \mathrel{+}= \bar{\hat{x}}\, r$, $\ \bar{r} = \sum_j \bar{\hat{x}}_j\, x_j$ |
    | rsqrt | $r = v^{-1/2}$ | $\bar{v} = -\tfrac{1}{2} v^{-3/2}\, \bar{r} = -\tfrac{1}{2} r^3\, \bar{r}$ |
    | add eps | $v = m + \epsilon$ | $\bar{m} = \bar{v}$ |
    | mean square | $m = \frac{1}{D}\sum_j q_j$ | $\bar{q}_j = \bar{m} / D$ |
    | square | $q = x^2$ | $\bar{x} \mathrel{+}= 2\, x\, \bar{q}$ |

    <<tape rmsnorm 3x4>>
    """),
    code(r"""
    dy = rng.standard_normal(x.shape)
    st = step_through("rmsnorm", x, gamma=layer.gamma.data, dy=dy)
    print(st.text(latex=False, parts=("backward",)))
    """),
    code(r"""
    print(st.text(parts=("checks",)))
    """),
    md(r"""
    ## 5. The compact formula, and why it equals the staged one

    With $g = \bar{\hat{x}} = dy\,\gamma$, two paths reach $x$:

    * **directly** through the normalisation: $r\, g$
    * **through the mean square**: $2x \cdot \frac{1}{D} \cdot \left(-\tfrac{1}{2} r^3 \sum_j g_j x_j\right)
      = -x\, r^3 \operatorname{mean}(g\, x) = -r\,\hat{x}\,\operatorname{mean}(g\,\hat{x})$

    $$\bar{x} = r\left(g - \hat{x}\,\operatorname{mean}(g\,\hat{x})\right)$$

    It is LayerNorm's formula without the $-\operatorname{mean}(g)$ term, because nothing was
    subtracted. So the gradient no longer sums to zero (RMSNorm is not shift-invariant), but it is
    still orthogonal to $\hat{x}$ (RMSNorm is scale-invariant, up to $\epsilon$).
    """),
    code(r"""
    t = st.tape
    g, r, x_hat = t["x_hat"].grad, t["rrms"].value, t["x_hat"].value
    direct = t["x_hat"].share("x")
    through_ms = t["x2"].share("x")
    print("direct == r g:", np.allclose(direct, r * g))
    print("through the mean square == -r x_hat mean(g x_hat):", np.allclose(through_ms, -r * x_hat * (g * x_hat).mean(-1, keepdims=True)))
    layer.zero_grad(); layer.forward(x)
    dx = layer.backward(dy)
    print("staged - RMSNorm.backward:", np.abs(direct + through_ms - dx).max())
    print("row sums of dx (not zero):", dx.sum(-1))
    print("dx . x_hat per row (zero): ", (dx * x_hat).sum(-1))
    """),
    md(r"""
    ## 6. The gradient check
    """),
    code(r"""
    tokens = rng.normal(size=(2, 5, 8))
    for layer_ in [nc.RMSNorm(8), nc.RMSNorm(8, eps=1e-6)]:
        layer_.gamma.data[...] = rng.standard_normal(8)
        report = nc.gradcheck(layer_, tokens)
        print(report, "\n")
        assert report.passed
    """),
    md(r"""
    ## 7. Pitfalls

    ### The normaliser is the number of features

    The mean square averages over the $D$ features of one sample. Dividing the sum of squares by
    the batch size instead (a slip that appears in write-ups where $b$ and $d$ sit next to each
    other) makes the output's scale depend on how many samples happen to be in the batch.
    """),
    code(r"""
    def wrong_rms(x, b):                      # sum of squares over the features, divided by b
        return x / np.sqrt((x ** 2).sum(axis=-1, keepdims=True) / b + 1e-6)

    x8 = rng.normal(size=(2, 8))
    print("right, mean square of the output:", (nc.RMSNorm(8)(x8) ** 2).mean(-1))
    for b in (2, 4):
        print(f"wrong with b={b}, mean square of the output:", (wrong_rms(x8, b) ** 2).mean(-1))
    """),
    md(r"""
    ### eps inside the square root

    $x / \sqrt{m + \epsilon}$, not $x / (\sqrt{m} + \epsilon)$. With a realistic $\epsilon = 10^{-6}$
    the two differ only for tiny rows, but the second has an infinite slope at $m = 0$, so an
    all-zero row (padding) gives `nan` gradients.
    """),
    code(r"""
    eps = 1e-6
    for size in [1.0, 1e-3, 1e-6]:
        row = size * np.array([1.0, -2.0, 0.5, 1.5])
        m = (row ** 2).mean()
        print(f"size {size:<6g} inside: {row / np.sqrt(m + eps)}  outside: {row / (np.sqrt(m) + eps)}")
    zero = nc.RMSNorm(4, eps=1e-6)
    zero(np.zeros((1, 4)))
    print("all-zero row, RMSNorm's gradient:", zero.backward(np.ones((1, 4))), "(finite: 1/sqrt(eps) = 1000)")
    """),
    md(r"""
    ### One RMS per sample, not per batch

    Taking the root mean square of the whole batch matrix couples the samples: a sample's output
    then depends on what it is batched with, the very thing RMSNorm (like LayerNorm) is meant
    to avoid.
    """),
    code(r"""
    a = rng.normal(size=(1, 4))
    def batch_rms(x):
        return x / np.sqrt((x ** 2).mean() + 1e-6)
    print("per sample, with two different companions:", nc.RMSNorm(4)(np.vstack([a, a * 10]))[0], nc.RMSNorm(4)(np.vstack([a, a / 10]))[0])
    print("whole batch, with two different companions:", batch_rms(np.vstack([a, a * 10]))[0], batch_rms(np.vstack([a, a / 10]))[0])
    """),
    md(r"""
    ### Default eps and half precision

    `eps=None` means the machine epsilon of the input's dtype (float32's for float16 input,
    which is computed in float32 and cast back). Code ported from a model may use `1e-6` or
    `1e-5`; for rows of ordinary size the difference is invisible, for tiny rows it is not.
    """),
    code(r"""
    half = rng.normal(size=(2, 4)).astype(np.float16)
    out = nc.RMSNorm(4)(half)
    print(out.dtype, out)
    tiny = np.full((1, 4), 1e-4)
    print("eps=None:", nc.RMSNorm(4)(tiny), " eps=1e-5:", nc.RMSNorm(4, eps=1e-5)(tiny))
    """),
    md(r"""
    ## 8. Figures

    Add a growing offset $c$ to a random row. LayerNorm removes it; RMSNorm does not, and as
    $c$ dominates, every entry of the RMSNorm output tends to $\pm 1$: the row's pattern is
    squeezed out by its mean. That is the trade: RMSNorm is cheaper and keeps the offset, and
    works well when activations are roughly centred already.
    """),
    code(r"""
    row = rng.standard_normal(16)
    offsets = np.linspace(0, 10, 41)
    spread_rms = [nc.RMSNorm(16, elementwise_affine=False)(row + c).std() for c in offsets]
    spread_ln = [nc.LayerNorm(16, elementwise_affine=False)(row + c).std() for c in offsets]
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(offsets, spread_ln, label="LayerNorm")
    ax.plot(offsets, spread_rms, label="RMSNorm")
    ax.set_xlabel("offset c added to the row"); ax.set_ylabel("std of the output row"); ax.legend()
    plt.show()
    """),
    md(r"""
    **From the experiments** (`normcore figures`; each claim is asserted by a test).

    *What RMSNorm gives up* (Zhang & Sennrich 2019, Table 1), measured: without the centring it
    loses LayerNorm's invariance to re-centring the weight matrix, and keeps the invariance to
    re-scaling it, to re-scaling the dataset and to re-scaling a single example.

    ![Measured invariance table of BatchNorm, LayerNorm and RMSNorm](../figures/invariance_table.png)

    *What it gains*: 12 passes over the data where LayerNorm makes 19 (37% fewer, counted
    through the reference tier's forward and backward), and 30% to 44% less time for forward and
    backward together in the committed figure, inside the 7% to 64% range the RMSNorm paper
    reports. The times move with the machine's load; the pass counts do not.

    ![Forward and backward time of LayerNorm, RMSNorm and BatchNorm against hidden size](../figures/speed.png)
    """),
    md(r"""
    ## Where next

    * `normcore explain rmsnorm --shape 2x4` prints the step-through in a terminal.
    * The LayerNorm notebook has the same derivation with the centring.
    """),
]
