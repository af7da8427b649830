"""Source of notebooks/weight_side.ipynb (build with: python notebooks/build.py weight_side).

It is one piece: it holds nothing but the notebook's cells in order, each helper defined in the
code cell that shows it, so the file reads as the notebook does.
"""

from build import code, md, question
from normcore.bibliography import notebook_references

CELLS = [
    md(r"""
    # The weight side: WeightNorm, Weight Standardization, Batch Renorm, Ghost BN, LayerScale

    The other notebooks normalise activations. This one normalises the weights instead, repairs
    BatchNorm's small batches, and replaces the norm by a learnt scale on the residual branch.
    Each has a backward worth deriving by hand, and each is checked here with normcore's own
    numbers:

    1. **WeightNorm**: $w = g\,v / \|v\|$; the gradient of $v$ derived, orthogonal to $v$, and
       the effective learning rate it implies
    2. **Weight Standardization**: each row of the weight standardised; its backward is
       LayerNorm's arithmetic on the weight's rows
    3. **Batch Renorm**: BatchNorm corrected by $r$ and $d$, held constant in the backward;
       what that stop-gradient does when they are clipped and when they are not
    4. **Ghost BatchNorm**: BatchNorm over virtual batches
    5. **LayerScale and ReZero**: a scale on the residual branch initialised at (or near) 0, and
       the gradient that reaches it
    6. the figures: what the experiments measure at this scale
    7. a summary

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import copy

    import numpy as np
    import normcore as nc

    np.set_printoptions(precision=4, suppress=True)
    """),

    # --- 1. WeightNorm -----------------------------------------------------------------------
    md(r"""
    ## 1. WeightNorm: a length times a direction

    ### A concrete example

    Salimans & Kingma 2016 write each output row of a Linear's weight as a length $g$ times a
    direction: $w = g\,v / \|v\|$. `nc.WeightNorm` wraps a Linear and starts with $v = w$ and
    $g = \|w\|$ per row (`dim=0`, as PyTorch's `weight_norm`), so the layer computes what the
    Linear computed. Multiplying $v$ by any $c > 0$ changes nothing: only $v$'s direction
    counts.
    """),
    code(r"""
    rng = np.random.default_rng(0)
    linear = nc.Linear(4, 3, rng=0)
    wn = nc.WeightNorm(linear, dim=0)
    x = rng.standard_normal((5, 4))
    print({name: p.shape for name, p in wn.named_parameters()})
    print("g = ||w|| per row:", wn.weight_g.data.ravel(), " ", np.linalg.norm(linear.weight.data, axis=1))
    print("WeightNorm(x) - Linear(x):", np.abs(wn(x) - linear(x)).max())
    y = wn(x)
    wn.weight_v.data *= 7.0                                    # v scaled: the same direction
    print("after v *= 7, the output moves by", np.abs(wn(x) - y).max())
    wn.weight_v.data /= 7.0
    """),
    md(r"""
    ### The gradient, derived

    The Linear's backward gives $\bar{w} = \partial L / \partial w$ (one row: a vector of `in`
    values). Write $\hat{v} = v / \|v\|$, so $w = g\,\hat{v}$. Then

    * $g$ multiplies $\hat{v}$: $\bar{g} = \bar{w} \cdot \hat{v}$, **a dot product** per row, one
      number;
    * $\partial \hat{v} / \partial v = (I - \hat{v}\hat{v}^\top) / \|v\|$ (the derivative of a
      vector's direction: moving $v$ along itself does not turn it), so

    $$\bar{v} = \frac{g}{\|v\|}\,(I - \hat{v}\hat{v}^\top)\,\bar{w}
             = \frac{g}{\|v\|}\,(\bar{w} - \bar{g}\,\hat{v}).$$

    $\bar{v}$ is $\bar{w}$ with its component along $v$ removed (that component moves only
    $g$), scaled by $g / \|v\|$. Hence $v \cdot \bar{v} = 0$: **the gradient is orthogonal to
    the weight**, exactly, by construction, and not only up to $\epsilon$ as for a weight before
    a BatchNorm ([BatchNorm in practice](batchnorm_in_practice.ipynb), section 4). The formulas
    written out, against the layer and against a numerical gradient check:
    """),
    code(r"""
    wn.weight_g.data[...] = rng.uniform(0.5, 2.0, wn.weight_g.shape)   # a random length per row
    dy = rng.standard_normal((5, 3))
    wn.zero_grad()
    wn(x)
    wn.backward(dy)
    v = wn.weight_v.data                                       # (3, 4)
    norm = np.linalg.norm(v, axis=1, keepdims=True)            # (3, 1)
    v_hat, g = v / norm, wn.weight_g.data                      # (3, 4), (3, 1)
    dw = dy.T @ x                                              # (3, 4)  the Linear's weight gradient
    dg = np.sum(dw * v_hat, axis=1, keepdims=True)             # (3, 1)  a dot product per row
    dv = g / norm * (dw - dg * v_hat)                          # (3, 4)
    print("dg: formula - layer:", np.abs(dg - wn.weight_g.grad).max())
    print("dv: formula - layer:", np.abs(dv - wn.weight_v.grad).max())
    print("v . dv per row:", np.sum(v * wn.weight_v.grad, axis=1))
    report = nc.gradcheck(wn, x)
    print(report)
    assert report.passed and np.abs(np.sum(v * dv, axis=1)).max() < 1e-12
    """),
    md(r"""
    Two slips candidates make, each of which that check catches: dropping the projection
    ($\bar{v} = (g/\|v\|)\,\bar{w}$, which has a component along $v$ although the loss does not
    depend on $\|v\|$), and $\bar{g}$ as $\bar{w}$ itself or its sum instead of the dot product
    with $\hat{v}$. The projection dropped, measured: the part of that $\bar{v}$ along $\hat{v}$
    is $(g/\|v\|)\,\bar{g}$, row by row.
    """),
    code(r"""
    dv_dropped = g / norm * dw
    along = np.sum(dv_dropped * v_hat, axis=1, keepdims=True)
    print("along v_hat:", along.ravel(), "  (g/||v||) dg:", (g / norm * dg).ravel())
    print("relative error of the dropped dv:", nc.rel_error(dv_dropped, dv))
    """),
    md(r"""
    ### The effective learning rate

    Since $\bar{v} \perp v$, a plain SGD step $v' = v - \eta\,\bar{v}$ can only lengthen $v$, by
    Pythagoras: $\|v'\|^2 = \|v\|^2 + \eta^2\|\bar{v}\|^2$. And the step turns the direction by
    about $\eta\|\bar{v}\| / \|v\| = \eta\,g\,\|(I - \hat{v}\hat{v}^\top)\bar{w}\| / \|v\|^2$:
    the direction learns as if $w$ itself were trained at the rate $\eta\,g^2 / \|v\|^2$. The
    longer $v$, the slower the direction moves, though $w$ (and the function) is the same.
    One SGD step on $v$, with $v$ as it is and with $v$ ten times longer:
    """),
    code(r"""
    def sgd_step_on_v(scale, lr=0.1):
        layer = nc.WeightNorm(nc.Linear(4, 3, rng=0))
        layer.weight_g.data[...] = wn.weight_g.data
        layer.weight_v.data *= scale                           # the same w, a longer v
        layer.zero_grad()
        y = layer(x)
        layer.backward(dy)
        before = layer.weight_v.data.copy()
        layer.weight_v.data -= lr * layer.weight_v.grad        # SGD on v
        after = layer.weight_v.data
        cos = np.sum(before * after, axis=1) / np.linalg.norm(before, axis=1) / np.linalg.norm(after, axis=1)
        pythagoras = (np.linalg.norm(after, axis=1) ** 2
                      - np.linalg.norm(before, axis=1) ** 2 - lr ** 2 * np.sum(layer.weight_v.grad ** 2, axis=1))
        return y, np.linalg.norm(layer.weight_v.grad), np.arccos(np.minimum(cos, 1)), np.abs(pythagoras).max()

    steps = {scale: sgd_step_on_v(scale) for scale in (1, 10)}
    for scale, (_, grad_norm, turn, pythagoras) in steps.items():
        print(f"v x {scale:<3} ||dv|| = {grad_norm:.4f}   angle turned per row {turn}   "
              f"Pythagoras off by {pythagoras:.0e}")
    print("same output:", np.abs(steps[1][0] - steps[10][0]).max(),
          "  gradient ratio:", steps[1][1] / steps[10][1],
          "  angle ratio:", (steps[1][2] / steps[10][2]).round(1))
    """),
    question(r"""
    A colleague initialises WeightNorm with $v$ a hundred times longer than $w$ (and $g$ as
    usual), "to be safe". What changes at the first step of SGD: the output, $\bar{g}$,
    $\bar{v}$, and how fast the direction turns?
    """, r"""
    The output and $\bar{g} = \bar{w} \cdot \hat{v}$ do not change ($w$ and $\hat{v}$ are the
    same). $\bar{v}$ is 100 times smaller (the factor $g/\|v\|$), and the angle a step turns,
    $\eta\|\bar{v}\|/\|v\|$, is $100^2 = 10^4$ times smaller: the direction hardly learns,
    while $g$ learns as before. Above, a factor 10 gave exactly 10 in the gradient and about
    100 in the angle (99.3 to 100: a step is a finite turn, not the first-order one). This is the same $1/\|W\|^2$ effective learning rate a weight before BatchNorm
    has; with WeightNorm it is exact.
    """),

    # --- 2. Weight Standardization -----------------------------------------------------------
    md(r"""
    ## 2. Weight Standardization: LayerNorm on the weight's rows

    Qiao et al. 2019 standardise each output row of the weight over its inputs before use,
    and pair it with GroupNorm for small batches. `nc.WSLinear` does it on a Linear:

    $$\mu_i = \operatorname{mean}_j W_{ij}, \quad \sigma_i^2 = \operatorname{mean}_j (W_{ij} - \mu_i)^2,
      \quad \hat{W}_{ij} = \frac{W_{ij} - \mu_i}{\sqrt{\sigma_i^2 + \epsilon}}, \quad y = x\hat{W}^\top + b.$$

    That is a LayerNorm without $\gamma$ and $\beta$, applied to $W$ with each output row as a
    "token". So its backward is LayerNorm's, with $\bar{\hat{W}} = \bar{y}^\top x$ as the
    upstream gradient:

    $$\bar{W} = r\,\big(\bar{\hat{W}} - \operatorname{mean}_j \bar{\hat{W}}
                - \hat{W} \odot \operatorname{mean}_j(\bar{\hat{W}} \odot \hat{W})\big), \qquad r = 1/\sqrt{\sigma^2 + \epsilon}.$$

    normcore writes that arithmetic once; the check below runs `nc.LayerNorm`'s own backward on
    the weight and compares. (normcore's variance is the biased one, $\epsilon$ inside the
    root, as its norms; the paper's published code differs, see `WSLinear`'s docstring.)
    """),
    code(r"""
    ws = nc.WSLinear(6, 3, rng=1)
    x = rng.standard_normal((8, 6))
    dy = rng.standard_normal((8, 3))
    ws.zero_grad()
    ws(x)
    dx = ws.backward(dy)

    row_norm = nc.LayerNorm(6, elementwise_affine=False, eps=ws.eps)   # each row of W a "token"
    W_hat = row_norm(ws.weight.data)                                    # (3, 6)
    dW = row_norm.backward(dy.T @ x)                                    # LayerNorm's backward
    print("W_hat: LayerNorm of the rows - WSLinear's:", np.abs(W_hat - ws.standardized_weight()[0]).max())
    print("dW: LayerNorm's backward - WSLinear's:", np.abs(dW - ws.weight.grad).max())
    cos = np.sum(ws.weight.grad * W_hat, axis=1) / np.linalg.norm(ws.weight.grad, axis=1) / np.linalg.norm(W_hat, axis=1)
    print("each row of dW sums to", ws.weight.grad.sum(axis=1), " cos(row of dW, row of W_hat):", cos)
    report = nc.gradcheck(ws, x)
    print(report)
    assert report.passed and np.abs(dW - ws.weight.grad).max() < 1e-12
    """),
    md(r"""
    The two properties are LayerNorm's: the output does not change when a row of $W$ is shifted
    or scaled, so the gradient has no component along those moves (along the scaling up to
    $\epsilon$: $\operatorname{mean}_j \hat{W}_{ij}^2 = \sigma_i^2/(\sigma_i^2 + \epsilon)$ is not
    quite 1, hence cosines of order $10^{-5}$, printed above as 0). A consequence worth knowing:
    the rows' mean and scale do not reach the output and get no gradient (the scale up to
    $\epsilon$; a row's mean never moves under SGD); the output's scale and offset are set by what follows the layer
    (GroupNorm's $\gamma$ and $\beta$, in the paper's recipe).
    """),

    # --- 3. Batch Renorm ---------------------------------------------------------------------
    md(r"""
    ## 3. Batch Renorm: correcting the batch towards the running statistics

    ### The forward

    BatchNorm in training normalises with the batch's $\mu_B, \sigma_B$; in evaluation with the
    running $\mu, \sigma$. On small batches the two differ, and so do training and evaluation.
    Batch Renorm, introduced by Ioffe 2017, keeps the batch normalisation and corrects it, per
    channel:

    $$r = \operatorname{clip}_{[1/r_\max,\ r_\max]}\!\left(\frac{\sigma_B}{\sigma}\right), \qquad
      d = \operatorname{clip}_{[-d_\max,\ d_\max]}\!\left(\frac{\mu_B - \mu}{\sigma}\right), \qquad
      y = \gamma\,(\hat{x}\,r + d) + \beta, \quad \hat{x} = \frac{x - \mu_B}{\sigma_B}.$$

    When neither is clipped, $\hat{x}\,r + d = (x - \mu)/\sigma$ exactly: the training output
    is the evaluation output, whatever else is in the batch. The running statistics are
    updated with the raw batch statistics, as BatchNorm's. A batch of 4 drawn from the running
    statistics, with limits wide enough ($r_\max = d_\max = 100$) that nothing is clipped:
    """),
    code(r"""
    def renorm(r_max=100.0, d_max=100.0):
        layer = nc.BatchRenorm1d(3, r_max=r_max, d_max=d_max, momentum=0.0)   # running stats held still
        layer.running_mean[...] = [0.0, 1.0, -1.0]
        layer.running_var[...] = [1.0, 4.0, 0.25]
        return layer

    rng = np.random.default_rng(1)
    small = rng.standard_normal((4, 3)) * np.sqrt([1.0, 4.0, 0.25]) + [0.0, 1.0, -1.0]
    brn, bn = renorm(), nc.BatchNorm1d(3)
    evaluation = renorm().eval()(small)
    print("Batch Renorm (train) - its evaluation:", np.abs(brn(small) - evaluation).max())
    print("BatchNorm (train)    - that evaluation:", np.abs(bn(small) - evaluation).max())
    """),
    md(r"""
    ### The backward: $r$ and $d$ held constant

    The paper treats $r$ and $d$ as constants in the backward (a stop-gradient: on a tape, a
    node whose backward is zero). With $r$ and $d$ constants, $y = \gamma(\hat{x}\,r + d) +
    \beta$ is BatchNorm with $\gamma$ replaced by $\gamma r$, so the input gradient is
    BatchNorm's backward with $\bar{\hat{x}} = \bar{y}\,\gamma\,r$:

    $$\bar{x} = \frac{1}{\sigma_B}\big(\bar{\hat{x}} - \operatorname{mean}_B \bar{\hat{x}}
               - \hat{x} \odot \operatorname{mean}_B(\bar{\hat{x}} \odot \hat{x})\big).$$

    That is **not the derivative of the forward** when $r$ and $d$ are not clipped: the forward
    is then $(x - \mu)/\sigma$ per sample, whose derivative is $\gamma\,\bar{y}/\sigma$, with no
    batch terms. When both are clipped, they no longer depend on $x$ (a clipped value is flat),
    and the stop-gradient backward *is* the forward's derivative. (`normcore explain
    batch_renorm` prints the whole tape, with $r$ and $d$ as stop-gradient nodes whose backward
    is 0.) A numerical gradient check tells the two cases apart (the check differentiates the
    forward):
    """),
    code(r"""
    def numerical_dx(layer, x, dy, h=1e-6):
        # central differences of L = sum(y * dy), each on a fresh copy of the layer
        dx = np.zeros_like(x)
        for i in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[i] += h
            down[i] -= h
            dx[i] = np.sum((copy.deepcopy(layer)(up) - copy.deepcopy(layer)(down)) * dy) / (2 * h)
        return dx

    dy = rng.standard_normal(small.shape)
    sigma = np.sqrt(renorm().running_var + 1e-5)
    far = rng.standard_normal((4, 3)) * 5 + 20                              # far from the running statistics
    cases = {"unclipped": (renorm(), small), "clipped": (renorm(r_max=1.5, d_max=0.1), far)}
    for case, (layer, batch) in cases.items():
        sigma_B = np.sqrt(batch.var(0) + layer.eps)                         # (C,)  the batch's
        r = np.clip(sigma_B / sigma, 1 / layer.r_max, layer.r_max)          # (C,)
        d = np.clip((batch.mean(0) - layer.running_mean) / sigma, -layer.d_max, layer.d_max)
        layer.zero_grad()
        layer(batch)
        dx = layer.backward(dy)
        bn = nc.BatchNorm1d(3)
        bn.gamma.data[...] = r                                              # BatchNorm with gamma r
        bn(batch)
        print(f"{case:<9}  r = {r}  d = {d}")
        print(f"{'':<9}  backward - BatchNorm's backward with gamma r: {np.abs(dx - bn.backward(dy)).max():.1e}")
        print(f"{'':<9}  backward vs the forward's derivative: rel error "
              f"{nc.rel_error(dx, numerical_dx(layer, batch, dy)):.1e}   "
              f"dy / sigma vs that derivative: {nc.rel_error(dy / sigma, numerical_dx(layer, batch, dy)):.1e}")
    """),
    question(r"""
    In the unclipped case the backward is not the derivative of the forward, and a numerical
    gradient check fails on $x$. Is the layer's backward wrong? What does the stop-gradient keep that the
    forward's true derivative $\gamma\,\bar{y}/\sigma$ would lose?
    """, r"""
    Not wrong: it is the gradient the method defines, a deliberate stop-gradient, so a
    numerical check of the forward cannot confirm it (normcore's gradient checks of Batch
    Renorm therefore use clipped batches, or compare with a twin written with the same
    `detach`). What it keeps is BatchNorm's backward, with its two batch terms: each channel's
    $\bar{x}$ sums to zero over the batch and is orthogonal to $\hat{x}$ (up to $\epsilon$, which
    weighs on a channel whose batch variance is tiny, as the third here), so, as in BatchNorm,
    no gradient shifts or rescales a whole channel of the batch. The true derivative
    $\gamma\,\bar{y}/\sigma$ has neither property: it is the gradient of a layer that
    normalises with fixed running statistics. Checked below on the unclipped batch.
    """),
    code(r"""
    layer, batch = cases["unclipped"]
    layer.zero_grad()
    layer(batch)
    dx = layer.backward(dy)
    x_hat = (batch - batch.mean(0)) / np.sqrt(batch.var(0) + layer.eps)
    cos = np.sum(dx * x_hat, 0) / np.linalg.norm(dx, axis=0) / np.linalg.norm(x_hat, axis=0)
    print("stop-gradient backward: sum over the batch", dx.sum(0), " cos with x_hat", cos)
    print("the forward's derivative: sum over the batch", (dy / sigma).sum(0))
    """),
    md(r"""
    The clipping limits are relaxed during training (`warmup=`; `limits()` gives the current
    pair): with $r_\max = 1$ and $d_\max = 0$ the layer is plain BatchNorm, and the paper's
    ImageNet run started so and widened them over tens of thousands of steps.
    """),

    # --- 4. Ghost BatchNorm ------------------------------------------------------------------
    md(r"""
    ## 4. Ghost BatchNorm: virtual batches

    Ghost BatchNorm (Hoffer et al. 2017) splits a large batch into virtual batches of
    `virtual_batch_size` samples and normalises each alone, with one $\gamma$ and $\beta$ for
    all. So its training output is BatchNorm applied chunk by chunk, its backward each chunk's
    BatchNorm backward, and its running statistics are updated once per chunk. Evaluation is
    BatchNorm's.
    """),
    code(r"""
    x = rng.standard_normal((16, 3)) * 2 + 1
    dy = rng.standard_normal(x.shape)
    ghost, plain = nc.GhostBatchNorm1d(3, virtual_batch_size=4), nc.BatchNorm1d(3)
    y = ghost(x)
    chunks = [plain(x[i:i + 4]) for i in range(0, 16, 4)]            # BatchNorm, chunk by chunk
    print("Ghost BN - BatchNorm per chunk:", np.abs(y - np.concatenate(chunks)).max())
    print("running updates:", int(ghost.num_batches_tracked), " running_mean equal:",
          np.allclose(ghost.running_mean, plain.running_mean))
    print("gradient check:", "pass" if nc.gradcheck(ghost, x).passed else "FAIL")
    """),
    md(r"""
    Why make the batch smaller on purpose? Each sample's output depends on the other samples of
    its virtual batch only, so the noise of the statistics is that of a batch of 4, whatever the
    real batch size. Hoffer et al. propose it for training with large batches, where it reduces
    the generalisation gap they measure. Measured here only the noise: how much one sample's
    output moves when the other samples are redrawn.
    """),
    code(r"""
    def spread_of_one_sample(layer, batch_size, draws=200):
        outputs = []
        for _ in range(draws):
            batch = rng.standard_normal((batch_size, 3))
            batch[0] = [0.5, -0.5, 1.0]                                  # the same first sample
            outputs.append(layer(batch)[0])
        return np.std(outputs, axis=0).mean()

    for vbs in (4, 16, 64):
        print(f"batch 64, virtual batches of {vbs:>2}: spread of one sample's output "
              f"{spread_of_one_sample(nc.GhostBatchNorm1d(3, virtual_batch_size=vbs), 64):.3f}")
    """),

    # --- 5. LayerScale and ReZero ------------------------------------------------------------
    md(r"""
    ## 5. LayerScale and ReZero: a scale on the branch instead of a norm

    A residual block $y = x + s \odot F(x)$ with a learnt scale $s$ on the branch: LayerScale
    (Touvron et al. 2021, CaiT) has one per channel, initialised small; ReZero (Bachlechner et
    al. 2020) one scalar, initialised at 0, so every block starts as the identity (SkipInit,
    De and Smith 2020, is the same multiplier with BatchNorm removed). The backward of
    $y = s \odot h$:

    $$\bar{h} = s \odot \bar{y}, \qquad \bar{s} = \sum \bar{y} \odot h$$

    (the sum over every axis but the channel for LayerScale, over every axis for ReZero). At
    $s = 0$, $\bar{h} = 0$: **nothing reaches $F$**, neither its input nor its weights get a
    gradient. But $\bar{s}$ is the correlation of $\bar{y}$ with the branch's output, not zero.
    So the first step moves $s$ alone, and from the second step on $F$ learns. Two SGD steps of
    a ReZero block, $F$ a small MLP:
    """),
    code(r"""
    def rezero_block(init):
        return nc.Sequential(nc.Linear(8, 16, rng=2), nc.GELU(), nc.Linear(16, 8, rng=3)), nc.ReZero(init)

    def block_step(F, scale, x, target, lr=0.1):
        # y = x + scale(F(x)), loss 0.5 * ||y - target||^2 / N; one SGD step; the gradient norms
        for p in F.parameters() + scale.parameters():
            p.grad[...] = 0
        y = x + scale(F(x))
        dy = (y - target) / len(x)
        dx = dy + F.backward(scale.backward(dy))                      # identity path + branch
        norms = (np.linalg.norm(scale.parameters()[0].grad),
                 np.sqrt(sum(np.sum(p.grad ** 2) for p in F.parameters())))
        for p in F.parameters() + scale.parameters():
            p.data -= lr * p.grad
        return norms, dx

    x = rng.standard_normal((32, 8))
    target = x + np.tanh(x @ rng.standard_normal((8, 8)))
    F, rz = rezero_block(0.0)
    for step in (1, 2, 3):
        alpha = rz.alpha.data.item()
        (d_alpha, d_F), dx = block_step(F, rz, x, target)
        print(f"step {step}: alpha = {alpha:+.4f}   |dalpha| = {d_alpha:.4f}   ||dF's weights|| = {d_F:.4f}")
    """),
    question(r"""
    LayerScale starts at $10^{-5}$ instead of 0. At the first step, how large is the gradient of
    $F$'s weights, and how large is $\bar{\gamma}$?
    """, r"""
    Every gradient of $F$ passes through $\bar{h} = \gamma \odot \bar{y}$, linear in $\gamma$:
    $F$'s weights get exactly $10^{-5}$ times the gradient they would get if $\bar{y}$ reached
    the branch unscaled. Against a block whose scale is 1 the ratio is of the same order but
    not exactly $10^{-5}$, since that block's $\bar{y}$ differs.
    $\bar{\gamma} = \sum \bar{y} \odot F(x)$ has no factor $\gamma$: the scale gets a gradient
    of ordinary size while the branch gets almost none, as in ReZero, but not exactly none.
    Measured below.
    """),
    code(r"""
    grads = {}
    for init in (1e-5, 1.0):
        F, ls = rezero_block(0.0)[0], nc.LayerScale(8, init=init)
        grads[init], _ = block_step(F, ls, x, target, lr=0.0)          # lr 0: gradients only
        print(f"LayerScale init {init:g}: ||dgamma|| = {grads[init][0]:.4f}   ||dF's weights|| = {grads[init][1]:.3e}")
    F, ls = rezero_block(0.0)[0], nc.LayerScale(8, init=1e-5)
    dy = (x + ls(F(x)) - target) / len(x)                               # the block's dy at init 1e-5
    F.zero_grad()
    F.backward(dy)                                                      # dy reaching F unscaled
    unscaled = np.sqrt(sum(np.sum(p.grad ** 2) for p in F.parameters()))
    print("F's gradient at 1e-5 / with dy unscaled:", grads[1e-5][1] / unscaled,
          "  / in the block at scale 1:", grads[1e-5][1] / grads[1.0][1])
    """),

    # --- 6. figures --------------------------------------------------------------------------
    md(r"""
    ## 6. Figures: what the experiments measure at this scale

    From the experiments (`normcore figures NAME`; the README gives each one's setting and what
    it does not show). Small models on synthetic tasks, so read each verdict as "at this scale".

    **The gradient is orthogonal to the weight** (`grad_weight`). Inside WeightNorm and before
    BatchNorm a weight's gradient is orthogonal to it (|cosine| at most $3 \times 10^{-17}$ and
    $4 \times 10^{-7}$), so without decay every plain SGD step grows $\|w\|^2$ by
    $\eta^2\|g\|^2$ and the effective learning rate $\eta/\|w\|^2$ only falls, by about a fifth
    in 2000 steps; a weight no norm follows obeys no such law.

    ![The gradient is orthogonal to the weight: WeightNorm, BatchNorm, and the effective learning rate](../figures/grad_weight.png)

    **Small batches** (`small_batches`). With 2 samples behind each batch statistic BatchNorm
    falls from 75% to 33-34% held-out accuracy; Batch Renorm cuts its train/eval gap to at most
    half at every batch size but wins back only 8 of the 41 points; GroupNorm stays at 69-75%
    whatever the batch, and Weight Standardization costs it 3-6 points here instead of helping
    (the paper standardises convolution filters in deep networks, not two Linear layers);
    SyncBatchNorm with 2 samples on each of 16 workers trains exactly as BatchNorm with 32.

    ![Small batches: BatchNorm, Batch Renorm, Ghost BN, GroupNorm (+ WS) and SyncBatchNorm](../figures/small_batches.png)

    **No norm at all** (`no_norm`). In a 16-block residual MLP with no norm, ReZero
    ($\alpha = 0$) and LayerScale (0.1) keep the residual stream at its input's scale and train
    as well as Pre-LN with Adam from lr $10^{-3}$ to $3 \times 10^{-2}$, but diverge at
    $10^{-1}$, where Pre-LN still trains; the same stack with neither norm nor scale starts with a
    stream 430 times its input and trains badly at every learning rate. A residual MLP, not the
    Transformers of the ReZero and CaiT papers.

    ![No norm at all: LayerScale and ReZero against Pre-LN in a deep residual MLP](../figures/no_norm.png)
    """),

    # --- 7. summary --------------------------------------------------------------------------
    md(r"""
    ## 7. Summary

    * **WeightNorm**: $\bar{g} = \bar{w} \cdot \hat{v}$ (a dot product per row) and
      $\bar{v} = (g/\|v\|)(I - \hat{v}\hat{v}^\top)\bar{w}$, exactly orthogonal to $v$; SGD
      lengthens $v$ (Pythagoras), and the direction learns at the rate $\eta\,g^2/\|v\|^2$.
    * **Weight Standardization**: LayerNorm without $\gamma$, $\beta$ on the weight's rows; its
      backward is LayerNorm's, each row of $\bar{W}$ summing to zero and orthogonal to $\hat{W}$.
    * **Batch Renorm**: unclipped, the training output equals the evaluation output; the
      backward holds $r$ and $d$ constant, which makes it BatchNorm's backward with $\gamma r$:
      the forward's derivative only where $r$ and $d$ are clipped.
    * **Ghost BatchNorm**: BatchNorm chunk by chunk, running statistics updated per chunk; a
      sample's output is as noisy as the virtual batch is small.
    * **LayerScale and ReZero**: at a scale of 0 the branch gets no gradient and the scale a
      full one; the scale moves first, then the branch learns.
    """),

    md(notebook_references(__file__)),
]
