"""Source of notebooks/groupnorm_instancenorm.ipynb (python notebooks/build.py groupnorm_instancenorm)."""

from build import code, md, question

CELLS = [
    md(r"""
    # GroupNorm and InstanceNorm: LayerNorm on groups of channels

    For an image batch `(N, C, H, W)` the four norms differ only in which values share a mean
    and a variance:

    * **BatchNorm**: one channel, over every sample and pixel (`N, H, W`)
    * **LayerNorm**: one sample, over every channel and pixel (`C, H, W`)
    * **InstanceNorm**: one sample and one channel, over its pixels (`H, W`)
    * **GroupNorm**: one sample and one *group* of $C/G$ neighbouring channels (`C/G, H, W`)

    GroupNorm with $G = 1$ is LayerNorm over `(C, H, W)`; with $G = C$ it is InstanceNorm. The
    last three never look across samples, so they work with a batch of one. And the arithmetic
    is LayerNorm's on a reshaped array, so the backward is too.

    1. the intuition: subjects in groups
    2. the formulas
    3. the forward in code, and the equivalences
    4. the backward: LayerNorm's tape on the reshape
    5. the compact formula
    6. the gradient check
    7. the pitfalls: divisibility, contiguous groups, InstanceNorm's defaults, batch size
    8. figures

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    import normcore as nc
    from normcore.derivations import step_through

    np.set_printoptions(precision=4, suppress=True)

    def tidy(a):   # rounded to the 4 printed decimals; + 0.0 turns -0.0 into 0.0, so "-0." is never printed
        return np.round(a, 4) + 0.0
    """),
    md(r"""
    ## 1. Intuition: subjects in groups

    Six subjects now, three sciences and three humanities. GroupNorm with two groups compares
    each student's maths with their own physics and chemistry, and their literature with their
    own history and languages: *within each group, where is this student stronger?* Like
    LayerNorm it never looks at another student; unlike LayerNorm it keeps the sciences and the
    humanities apart, so a student who is better at sciences overall is not marked down in them.
    """),
    code(r"""
    students = ["Ana", "Ben", "Chen", "Dina"]
    subjects = ["maths", "physics", "chemistry", "literature", "history", "languages"]
    scores = np.array([[90.0, 80.0, 85.0, 60.0, 55.0, 65.0],
                       [60.0, 50.0, 55.0, 80.0, 85.0, 90.0],
                       [70.0, 95.0, 75.0, 60.0, 65.0, 80.0],
                       [85.0, 65.0, 70.0, 90.0, 70.0, 75.0]])
    gn = nc.GroupNorm(2, 6, affine=False)          # groups: the 3 sciences, the 3 humanities
    ln = nc.LayerNorm(6, elementwise_affine=False)
    print("GroupNorm, 2 groups")
    for name, row in zip(students, gn(scores)):
        print(f"  {name:<5} {row}")
    print("LayerNorm")
    for name, row in zip(students, ln(scores)):
        print(f"  {name:<5} {row}")
    """),
    md(r"""
    Ben is stronger in the humanities. LayerNorm rates all his sciences below his average, even
    maths, his best science (about -0.64); GroupNorm compares his maths only with his other
    sciences and rates it +1.22. Ana is the mirror image. Real networks have many more channels
    per group, each with many pixels: Wu & He (2018) use 32 groups by default whatever the
    channel count, so a 256-channel layer has groups of 8 channels.

    ## 2. The formulas

    Reshape the input to `(N, G, C/G * H * W)`; each row of the last axis is one group of one
    sample, with $n = (C/G)\,H W$ values:

    $$\mu_{ng} = \frac{1}{n}\sum_{k \in g} x_{nk}, \qquad \sigma^2_{ng} = \frac{1}{n}\sum_{k \in g} (x_{nk} - \mu_{ng})^2, \qquad
      \hat{x}_{nk} = \frac{x_{nk} - \mu_{ng}}{\sqrt{\sigma^2_{ng} + \epsilon}}$$

    then reshape back and apply a **per-channel** affine, $y_{nchw} = \gamma_c\,\hat{x}_{nchw} + \beta_c$.
    Group $g$ holds the contiguous channels $gC/G, \dots, (g+1)C/G - 1$.

    InstanceNorm is the case of one channel per group: each `(n, c)` standardised over its
    pixels.
    """),
    md(r"""
    ## 3. The forward in code, and the equivalences
    """),
    code(r"""
    rng = np.random.default_rng(42)
    x = rng.normal(1.0, 2.0, size=(2, 6, 3, 3))       # (N, C, H, W)
    N, C, H, W = x.shape

    gn3 = nc.GroupNorm(3, 6, affine=False)
    y = gn3(x)
    groups = y.reshape(N, 3, -1)
    print("per (sample, group) mean:\n", tidy(groups.mean(-1)))
    print("per (sample, group) variance:\n", groups.var(-1).round(4))

    print("GroupNorm(1, C) == LayerNorm((C, H, W)):",
          np.allclose(nc.GroupNorm(1, 6, affine=False)(x), nc.LayerNorm((6, 3, 3), elementwise_affine=False)(x)))
    print("GroupNorm(C, C) == InstanceNorm2d(C):   ",
          np.allclose(nc.GroupNorm(6, 6, affine=False)(x), nc.InstanceNorm2d(6)(x)))
    xg = x.reshape(N * 3, -1)
    print("GroupNorm(3, C) == LayerNorm on the reshape:",
          np.allclose(y, nc.LayerNorm(xg.shape[-1], elementwise_affine=False)(xg).reshape(x.shape)))
    """),
    question(r"""
    For the input above, $(N, C, H, W) = (2, 6, 3, 3)$ with $G = 3$ groups: how many means does
    GroupNorm compute, and over how many values is each one taken?
    """, r"""
    One mean per sample and group: $N G = 6$ means (the $2 \times 3$ table printed above), each
    over the $C/G = 2$ channels of its group times $H W = 9$ pixels, 18 values. No mean crosses
    two samples, so the batch size does not matter.
    """),
    md(r"""
    ## 4. The backward: LayerNorm's tape on the reshape

    The per-channel affine is the usual one ($\bar{\beta}_c = \sum \bar{y}$,
    $\bar{\gamma}_c = \sum \bar{y}\,\hat{x}$, $g = \bar{y}\,\gamma_c$), summed over samples and
    pixels. What remains, from $g$ back to $x$, is exactly LayerNorm's normalisation on the
    reshaped rows: the same nine-step tape with $n = (C/G) H W$ values per row.

    <<tape layernorm 2x6>>

    So the step-through of a LayerNorm without affine ($\gamma = 1$, $\beta = 0$), fed the
    reshaped input and the reshaped $g$, must produce GroupNorm's input gradient. Here with
    a small input so the numbers fit on screen: $N = 2$, $C = 4$, $G = 2$, $H \times W = 1 \times 3$.
    """),
    code(r"""
    gn = nc.GroupNorm(2, 4)
    gn.gamma.data[...] = rng.standard_normal(4)
    gn.beta.data[...] = rng.standard_normal(4)
    xs = rng.normal(size=(2, 4, 1, 3))
    dy = rng.standard_normal(xs.shape)
    gn.zero_grad(); gn.forward(xs)
    dx_gn = gn.backward(dy)

    g = dy * gn.gamma.data.reshape(1, 4, 1, 1)          # the affine step's share to x_hat
    st = step_through("layernorm", xs.reshape(4, 6), gamma=np.ones(6), beta=np.zeros(6), dy=g.reshape(4, 6))
    print("LayerNorm tape on the reshape vs GroupNorm.backward:", np.abs(st.tape["x"].grad.reshape(xs.shape) - dx_gn).max())
    print(st.text(latex=False, parts=("checks",)))
    """),
    question(r"""
    GroupNorm has no derivation of its own here. What exactly is reused from LayerNorm, and
    what is GroupNorm's own?
    """, r"""
    The normalisation and its backward: after the reshape to $(N G,\ (C/G) H W)$ each row is
    standardised as a LayerNorm row, so LayerNorm's tape and compact formula apply unchanged.
    GroupNorm's own is the affine step: $\gamma$ and $\beta$ are per channel, not per entry of
    the reshaped row, so their gradients are summed over samples and pixels, and
    $g = \bar{y}\,\gamma_c$ is formed before the reshape.
    """),
    md(r"""
    ## 5. The compact formula

    Per group, with means over the group's $n$ values:

    $$\bar{x} = r\left(g - \operatorname{mean}(g) - \hat{x}\,\operatorname{mean}(g\,\hat{x})\right)$$

    `GroupNorm.backward` calls `standardize_backward`, the function LayerNorm's backward calls,
    on the reshaped arrays (`normcore/norms/standardization.py`), and InstanceNorm's calls it over
    the spatial axes. One formula, written once, for four layers.

    ## 6. The gradient check
    """),
    code(r"""
    cases = [("GroupNorm(3, 6)", nc.GroupNorm(3, 6), x),
             ("GroupNorm(1, 6)", nc.GroupNorm(1, 6), x),
             ("InstanceNorm2d(6, affine=True)", nc.InstanceNorm2d(6, affine=True), x),
             ("InstanceNorm1d(4, affine=True)", nc.InstanceNorm1d(4, affine=True), rng.normal(size=(2, 4, 5)))]
    for name, layer, input_ in cases:
        for p in layer.parameters():
            p.data[...] = rng.standard_normal(p.shape)
        report = nc.gradcheck(layer, input_, name=name)
        print(report.table(header=False))
        assert report.passed
    """),
    md(r"""
    ## 7. Pitfalls

    ### The channels must divide into groups, and groups are contiguous

    `GroupNorm(G, C)` needs $C$ divisible by $G$. Group 0 is channels $0 \dots C/G - 1$, not
    every $G$-th channel: permuting the channels changes the result.
    """),
    code(r"""
    try:
        nc.GroupNorm(4, 6)
    except ValueError as err:
        print("ValueError:", err)
    perm = [0, 3, 1, 4, 2, 5]
    print("shuffling the channels gives the shuffled result:",
          np.allclose(gn3(x)[:, perm], gn3(x[:, perm])))
    """),
    md(r"""
    ### InstanceNorm's defaults are not BatchNorm's

    `InstanceNorm2d(C)` defaults to `affine=False` and `track_running_stats=False` (no learned
    scale, no running statistics, the same computation in training and evaluation). With
    `track_running_stats=True` it keeps BatchNorm-style running averages and uses them in
    evaluation, so train and eval outputs then differ. It needs more than one pixel per channel.
    """),
    code(r"""
    inorm = nc.InstanceNorm2d(6)
    print(inorm, "| parameters:", inorm.parameters(), "| state dict:", list(inorm.state_dict()))
    print("train == eval:", np.allclose(inorm.train()(x), inorm.eval()(x)))
    tracked = nc.InstanceNorm2d(6, track_running_stats=True)
    tracked(x)
    print("tracked, train == eval:", np.allclose(tracked.train()(x), tracked.eval()(x)))
    try:
        nc.InstanceNorm2d(6)(rng.normal(size=(2, 6, 1, 1)))
    except ValueError as err:
        print("ValueError:", err)
    """),
    md(r"""
    ### Batch size

    BatchNorm's output for a sample changes with its batch companions; GroupNorm's (and
    LayerNorm's, InstanceNorm's) does not. That is why GroupNorm suits detection and segmentation
    models, which train with one or two images per device (Wu & He 2018); many such models keep
    BatchNorm instead, either frozen (its pretrained statistics and affine held fixed) or
    synchronised across devices (SyncBatchNorm, statistics over the global batch).
    """),
    code(r"""
    sample = x[:1]
    others_a, others_b = rng.normal(size=(3, 6, 3, 3)), rng.normal(3.0, 5.0, size=(3, 6, 3, 3))
    bn = nc.BatchNorm2d(6)
    print("BatchNorm, same sample, two batches: max difference",
          np.abs(bn(np.concatenate([sample, others_a]))[0] - bn(np.concatenate([sample, others_b]))[0]).max())
    print("GroupNorm, same sample, two batches: max difference",
          np.abs(gn3(np.concatenate([sample, others_a]))[0] - gn3(np.concatenate([sample, others_b]))[0]).max())
    """),
    md(r"""
    ## 8. Figures

    Which values share one mean and variance, for an input with $N = 4$ samples and $C = 6$
    channels (each cell stands for all the pixels of one channel of one sample): one colour and
    one number per set of statistics.
    """),
    code(r"""
    n_, c_ = 4, 6
    layouts = {
        "BatchNorm": np.tile(np.arange(c_), (n_, 1)),
        "LayerNorm": np.tile(np.arange(n_)[:, None], (1, c_)),
        "InstanceNorm": np.arange(n_ * c_).reshape(n_, c_),
        "GroupNorm, G = 3": np.arange(n_)[:, None] * 3 + np.arange(c_)[None, :] // 2,
    }
    colours = ListedColormap(plt.cm.tab20.colors + plt.cm.tab20b.colors[::4] + plt.cm.tab20c.colors[2::4])
    assert colours.N >= n_ * c_  # a colour of its own for each of InstanceNorm's 24 sets
    fig, axes = plt.subplots(1, 4, figsize=(11, 2.6))
    for ax, (name, ids) in zip(axes, layouts.items()):
        ax.imshow(ids, cmap=colours, vmin=0, vmax=colours.N - 1)
        for (row, col), i in np.ndenumerate(ids):
            dark = sum(colours(i)[:3]) < 1.5   # white numbers on the dark colours
            ax.text(col, row, str(i), ha="center", va="center", fontsize=7, color="white" if dark else "black")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("channel C"); ax.set_ylabel("sample N")
        ax.set_xticks(range(c_)); ax.set_yticks(range(n_))
    plt.tight_layout(); plt.show()
    """),
    md(r"""
    **From the experiments** (`normcore figures`; the claim is asserted by a test). At a fixed
    budget of samples, GroupNorm (8 groups of 8 channels) keeps its error as the batch shrinks to
    2 and behaves the same in training and evaluation; BatchNorm does neither.

    ![Error against batch size for BatchNorm, GroupNorm and LayerNorm](../figures/batch_size_error.png)
    """),
    md(r"""
    ## Where next

    * `normcore explain layernorm --shape 2x6` prints the tape used above.
    * `normcore gradcheck --only Group` checks the GroupNorm cases.
    """),
]
