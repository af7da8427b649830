"""Source of notebooks/rmsnorm.ipynb and of rmsnorm_zh.ipynb, the same notebook with each Markdown
cell's Chinese text (``zh``): python notebooks/build.py rmsnorm rmsnorm_zh.

It is one piece, though long: it holds nothing but the notebook's cells in order, each helper
defined in the code cell that shows it, so the file reads as the notebook does (one source per
notebook: helpers moved out would no longer be shown).
"""

from build import CLASS_SCORES, code, md, question

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
    9. float16: why a norm is computed in float32

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """, zh=r"""
    # RMSNorm，一个节点一个节点地看

    RMSNorm 就是去掉中心化的 LayerNorm：每个样本除以自己的均方根，再乘以可学习的 $\gamma$。
    没有均值，也没有 $\beta$。它更省（一次归约而不是两次），LLaMA 一类的模型用的就是它。

    1. 直觉：不减均值时保留下了什么
    2. 公式
    3. 前向的代码
    4. 逐步推导反向，以及逐节点的计算图
    5. 紧凑的反向公式，以及它为什么等于分步的结果
    6. 梯度检查
    7. 易错点：除以什么、eps 放在哪里、对整个 batch 算 RMS、默认的 eps
    8. 图
    9. float16：为什么归一化要在 float32 里算

    只要能 import `normcore`（在仓库里 `pip install -e .`），几秒钟就能跑完。
    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    import normcore as nc
    from normcore.derivations import step_through
    from normcore.i18n import translator
    from normcore.i18n.figures import figure_words
    from normcore.i18n.width import pad

    np.set_printoptions(precision=4, suppress=True)
    tr = translator("notebooks")   # what the cells print, in the notebook's language

    def tidy(a):   # rounded to the 4 printed decimals; + 0.0 turns -0.0 into 0.0, so "-0." is never printed
        return np.round(a, 4) + 0.0
    """),
    md(r"""
    ## 1. Intuition: scale without centring

    The students again. LayerNorm made Ana (90 80 70) and Ben (60 50 40) identical. RMSNorm
    only divides each row by its size, $\sqrt{\operatorname{mean}(x^2)}$: the rows keep their
    sign and their offset from zero, and Ben's row, whose spread is large compared with its
    size, keeps more of its slope.
    """, zh=r"""
    ## 1. 直觉：只缩放，不中心化

    还是那几个学生。LayerNorm 把 Ana（90 80 70）和 Ben（60 50 40）变得一模一样。RMSNorm 只把
    每一行除以它的大小 $\sqrt{\operatorname{mean}(x^2)}$：各行保留了自己的符号和相对零点的偏移；
    Ben 这一行的离散程度相对于它的大小更大，所以保留了更多的斜率。
    """),
    code(CLASS_SCORES, r"""
    rms = nc.RMSNorm(3, elementwise_affine=False)
    ln = nc.LayerNorm(3, elementwise_affine=False)
    print("       RMSNorm                     LayerNorm")
    for name, a, b in zip(students, rms(scores), ln(scores)):
        print(f"{name:<5} {a}    {b}")
    print("\n" + tr("mean square of each RMSNorm row:"), (rms(scores) ** 2).mean(axis=1))
    """),
    question(r"""
    Ana's row (90 80 70) and Ben's (60 50 40) have the same spread. Why does Ben's RMSNorm row
    keep more of its slope than Ana's?
    """, r"""
    RMSNorm divides by $\sqrt{\operatorname{mean}(x^2)} = \sqrt{\mu^2 + \sigma^2}$, which
    includes the row's mean. Both rows have $\sigma^2 = 200/3$, but Ben's mean (50) is smaller
    than Ana's (80), so his divisor is smaller (about 50.7 against 80.4) and his 10-point steps
    between subjects shrink less (to about 0.20 against 0.12).
    """, zh=(r"""
    Ana 这一行（90 80 70）和 Ben 这一行（60 50 40）离散程度相同。为什么 Ben 的 RMSNorm 输出
    比 Ana 的保留了更多斜率？
    """, r"""
    RMSNorm 除以 $\sqrt{\operatorname{mean}(x^2)} = \sqrt{\mu^2 + \sigma^2}$，其中含有这一行的
    均值。两行都是 $\sigma^2 = 200/3$，但 Ben 的均值（50）比 Ana 的（80）小，所以他的除数更小
    （约 50.7，Ana 约 80.4），科目之间相差的 10 分也缩得更少（缩到约 0.20，Ana 约 0.12）。
    """)),
    md(r"""
    On centred data the two agree: RMSNorm of $x - \operatorname{mean}(x)$ is LayerNorm of $x$
    (the mean square of a centred row is its variance).
    """, zh=r"""
    在中心化的数据上两者一致：$x - \operatorname{mean}(x)$ 的 RMSNorm 就是 $x$ 的 LayerNorm
    （中心化之后，一行平方的均值就是它的方差）。
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
    """, zh=r"""
    ## 2. 公式

    对一个样本 $x \in \mathbb{R}^D$：

    $$m = \frac{1}{D}\sum_j x_j^2, \qquad r = \frac{1}{\sqrt{m + \epsilon}}, \qquad
      \hat{x}_j = x_j\, r, \qquad y_j = \gamma_j\, \hat{x}_j$$

    平方的均值是除以特征数 $D$ 得到的；$\epsilon$ 在根号里面。默认的 `RMSNorm(eps=None)` 和
    PyTorch 一样，取输入 dtype 的机器精度（float64 是 $2.2 \times 10^{-16}$）。
    """),
    md(r"""
    ## 3. The forward in code
    """, zh=r"""
    ## 3. 前向的代码
    """),
    code(r"""
    rng = np.random.default_rng(42)
    x = rng.normal(0.5, 2.0, size=(3, 4))
    layer = nc.RMSNorm(4)
    layer.gamma.data[...] = rng.standard_normal(4)
    y = layer(x)
    print(layer, tr("eps in use:"), np.finfo(np.float64).eps)
    print("y =\n", y)
    ms = (x ** 2).mean(axis=-1, keepdims=True)
    print(tr("largest difference from the formulas:"), np.abs(x / np.sqrt(ms + np.finfo(np.float64).eps) * layer.gamma.data - y).max())
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
    """, zh=r"""
    ## 4. 逐步推导反向

    六步，而不是 LayerNorm 的九步；$x$ 进入其中两步（平方和归一化），所以它的梯度是两份之和。

    | 步骤 | 前向 | 反向 |
    |---|---|---|
    | 缩放 | $y = \hat{x}\,\gamma$ | $\bar{\hat{x}} = \bar{y}\,\gamma$, $\ \bar{\gamma}_j = \sum_{\text{samples}} \bar{y}_j\,\hat{x}_j$ |
    | 归一化 | $\hat{x} = x\, r$ | $\bar{x} \mathrel{+}= \bar{\hat{x}}\, r$, $\ \bar{r} = \sum_j \bar{\hat{x}}_j\, x_j$ |
    | 平方根倒数 | $r = v^{-1/2}$ | $\bar{v} = -\tfrac{1}{2} v^{-3/2}\, \bar{r} = -\tfrac{1}{2} r^3\, \bar{r}$ |
    | 加 eps | $v = m + \epsilon$ | $\bar{m} = \bar{v}$ |
    | 平方的均值 | $m = \frac{1}{D}\sum_j q_j$ | $\bar{q}_j = \bar{m} / D$ |
    | 平方 | $q = x^2$ | $\bar{x} \mathrel{+}= 2\, x\, \bar{q}$ |

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
    **The tape as a picture.** `st.graph()` draws this tape's nodes and edges
    (`normcore explain rmsnorm --graph FILE.png` writes the same picture to a file). Two routes
    lead from $x$ to $\hat{x}$ here: straight (solid) and through the mean square (dash-dot).
    The route through the mean of LayerNorm's picture is missing, and so is $\beta$.
    """, zh=r"""
    **把计算图画出来。** `st.graph()` 画出这张计算图的节点和边（`normcore --lang zh explain
    rmsnorm --graph FILE.png` 把同一张图写进文件）。这里从 $x$ 到 $\hat{x}$ 有两条路线：一条直达
    （实线），一条经过平方的均值（点划线）。LayerNorm 的图里经过均值的那条路线在这里没有了，$\beta$
    也没有了。

    <<figure font note>>
    """),
    code(r"""
    st.graph()
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
    """, zh=r"""
    ## 5. 紧凑公式，以及它为什么等于分步的结果

    记 $g = \bar{\hat{x}} = dy\,\gamma$，有两条路径到达 $x$：

    * **直接**经过归一化：$r\, g$
    * **经过平方的均值**：$2x \cdot \frac{1}{D} \cdot \left(-\tfrac{1}{2} r^3 \sum_j g_j x_j\right)
      = -x\, r^3 \operatorname{mean}(g\, x) = -r\,\hat{x}\,\operatorname{mean}(g\,\hat{x})$

    $$\bar{x} = r\left(g - \hat{x}\,\operatorname{mean}(g\,\hat{x})\right)$$

    这就是 LayerNorm 的公式去掉 $-\operatorname{mean}(g)$ 那一项，因为前向里什么也没减。所以梯度
    每一行加起来不再为零（RMSNorm 没有平移不变性），但它仍与 $\hat{x}$ 正交（忽略 $\epsilon$
    时，RMSNorm 有缩放不变性）。
    """),
    code(r"""
    t = st.tape
    g, r, x_hat = t["x_hat"].grad, t["rrms"].value, t["x_hat"].value
    direct = t["x_hat"].share("x")
    through_ms = t["x2"].share("x")
    print(tr("direct == r g:"), np.allclose(direct, r * g))
    print(tr("through the mean square == -r x_hat mean(g x_hat):"), np.allclose(through_ms, -r * x_hat * (g * x_hat).mean(-1, keepdims=True)))
    layer.zero_grad(); layer.forward(x)
    dx = layer.backward(dy)
    print(tr("staged - RMSNorm.backward:"), np.abs(direct + through_ms - dx).max())
    print(pad(tr("row sums of dx (not zero):"), 27), tidy(dx.sum(-1)))
    print(pad(tr("dx . x_hat per row (zero):"), 27), tidy((dx * x_hat).sum(-1)))
    """),
    question(r"""
    LayerNorm's $\bar{x}$ sums to zero over each row, RMSNorm's does not. Which route of
    LayerNorm's picture is responsible, and which term of its compact formula?
    """, r"""
    The route through the mean ($x \to \mu \to x_c$), which brings back
    $-r\operatorname{mean}(g)$: it removes the row mean of $r\,g$, so LayerNorm's $\bar{x}$
    sums to zero. RMSNorm subtracts no mean, has no such route, and its $\bar{x}$ keeps
    whatever row sum $r\,(g - \hat{x}\operatorname{mean}(g\hat{x}))$ has.
    """, zh=(r"""
    LayerNorm 的 $\bar{x}$ 每一行加起来为零，RMSNorm 的不是。这要归因于 LayerNorm 的图中哪一条
    路线，以及它紧凑公式中的哪一项？
    """, r"""
    经过均值的那条路线（$x \to \mu \to x_c$），它带回了 $-r\operatorname{mean}(g)$ 这一项：
    这一项减掉了 $r\,g$ 的行均值，所以 LayerNorm 的 $\bar{x}$ 每行加起来为零。RMSNorm 不减均值，
    没有这条路线，它的 $\bar{x}$ 的行和就是 $r\,(g - \hat{x}\operatorname{mean}(g\hat{x}))$
    本身的行和，不一定为零。
    """)),
    md(r"""
    ## 6. The gradient check
    """, zh=r"""
    ## 6. 梯度检查
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
    """, zh=r"""
    ## 7. 易错点

    ### 分母是特征数

    平方的均值是对一个样本的 $D$ 个特征取的平均。如果把平方和除以批次大小（有些文章里 $b$ 和 $d$
    挨在一起，就会出现这种笔误），输出的尺度就取决于这个 batch 里碰巧有多少个样本。
    """),
    code(r"""
    def wrong_rms(x, b):                      # sum of squares over the features, divided by b
        return x / np.sqrt((x ** 2).sum(axis=-1, keepdims=True) / b + 1e-6)

    x8 = rng.normal(size=(2, 8))
    print(tr("right, mean square of the output:"), (nc.RMSNorm(8)(x8) ** 2).mean(-1))
    for b in (2, 4):
        print(tr("wrong with b={b}, mean square of the output:").format(b=b), (wrong_rms(x8, b) ** 2).mean(-1))
    """),
    md(r"""
    ### eps inside the square root

    $x / \sqrt{m + \epsilon}$, not $x / (\sqrt{m} + \epsilon)$. With a realistic $\epsilon = 10^{-6}$
    the two differ only for tiny rows, but the second has an infinite slope at $m = 0$, so an
    all-zero row (padding) gives `nan` gradients.
    """, zh=r"""
    ### eps 放在根号里

    是 $x / \sqrt{m + \epsilon}$，不是 $x / (\sqrt{m} + \epsilon)$。取实际常用的
    $\epsilon = 10^{-6}$ 时，两者只在很小的行上才有差别；但后者在 $m = 0$ 处斜率无穷大，所以
    全零的行（填充）会得到 `nan` 梯度。
    """),
    code(r"""
    eps = 1e-6
    for size in [1.0, 1e-3, 1e-6]:
        row = size * np.array([1.0, -2.0, 0.5, 1.5])
        m = (row ** 2).mean()
        print(tr("size {size:<6g} inside: {inside}  outside: {outside}").format(
            size=size, inside=row / np.sqrt(m + eps), outside=row / (np.sqrt(m) + eps)))
    zero = nc.RMSNorm(4, eps=1e-6)
    zero(np.zeros((1, 4)))
    print(tr("all-zero row, RMSNorm's gradient:"), zero.backward(np.ones((1, 4))), tr("(finite: 1/sqrt(eps) = 1000)"))
    """),
    md(r"""
    ### One RMS per sample, not per batch

    Taking the root mean square of the whole batch matrix couples the samples: a sample's output
    then depends on what it is batched with, the very thing RMSNorm (like LayerNorm) is meant
    to avoid.
    """, zh=r"""
    ### 每个样本一个 RMS，而不是每个 batch 一个

    对整个 batch 矩阵取均方根会把样本耦合起来：一个样本的输出取决于它和谁分在同一个 batch 里，而这恰恰
    是 RMSNorm（和 LayerNorm 一样）要避免的。
    """),
    code(r"""
    a = rng.normal(size=(1, 4))
    def batch_rms(x):
        return x / np.sqrt((x ** 2).mean() + 1e-6)
    print(tr("per sample, with two different companions:"), nc.RMSNorm(4)(np.vstack([a, a * 10]))[0], nc.RMSNorm(4)(np.vstack([a, a / 10]))[0])
    print(tr("whole batch, with two different companions:"), batch_rms(np.vstack([a, a * 10]))[0], batch_rms(np.vstack([a, a / 10]))[0])
    """),
    md(r"""
    ### Default eps and half precision

    `eps=None` means the machine epsilon of the input's dtype (float32's for float16 input,
    which is computed in float32 and cast back). Code ported from a model may use `1e-6` or
    `1e-5`; for rows of ordinary size the difference is invisible, for tiny rows it is not.
    """, zh=r"""
    ### 默认的 eps 与半精度

    `eps=None` 表示输入 dtype 的机器精度（float16 输入用 float32 的，因为它在 float32 里计算，
    再转换回来）。从某个模型移植过来的代码可能用 `1e-6` 或 `1e-5`；对大小正常的行看不出差别，
    对很小的行就看得出来。
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
    $c$ dominates, every entry of the RMSNorm output tends to $\operatorname{sign}(c)$ (all $+1$
    or all $-1$): the row's pattern is squeezed out by its mean. That is the trade: RMSNorm is
    cheaper and keeps the offset, and works well when activations are roughly centred already.
    """, zh=r"""
    ## 8. 图

    给一个随机行加上逐渐增大的偏移 $c$。LayerNorm 把偏移去掉了；RMSNorm 没有，而且当 $c$ 占了
    主导，RMSNorm 输出的每个元素都趋向 $\operatorname{sign}(c)$（全是 $+1$ 或全是 $-1$）：这一行
    本来的模式被它的均值挤掉了。这就是取舍：RMSNorm 更省、保留偏移，在激活值本来就大致居中时
    效果很好。
    """),
    code(r"""
    row = rng.standard_normal(16)
    offsets = np.linspace(0, 10, 41)
    spread_rms = [nc.RMSNorm(16, elementwise_affine=False)(row + c).std() for c in offsets]
    spread_ln = [nc.LayerNorm(16, elementwise_affine=False)(row + c).std() for c in offsets]
    with figure_words(tr) as say:   # the figure's words: Chinese when a Chinese font is installed
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.plot(offsets, spread_ln, label="LayerNorm")
        ax.plot(offsets, spread_rms, label="RMSNorm")
        ax.set_xlabel(say("offset c added to the row")); ax.set_ylabel(say("std of the output row"))
        ax.legend()
        plt.show()
    """),
    md(r"""
    **From the experiments** (`normcore figures`; each claim is asserted by a test).

    *What RMSNorm gives up* (Zhang & Sennrich 2019, Table 1), measured: without the centring it
    loses LayerNorm's invariance to re-centring the weight matrix, and keeps the invariance to
    re-scaling it, to re-scaling the dataset and to re-scaling a single example.

    ![Measured invariance table of BatchNorm, LayerNorm and RMSNorm](../figures/invariance_table.png)

    *What it gains*: 12 passes over the data where LayerNorm makes 19 (37% fewer, counted
    through the reference tier's forward and backward), and 34% to 37% less time for forward and
    backward together in the committed figure: in NumPy every operation is a pass over memory,
    so one layer's time follows its passes. That is not the 7% to 64% the RMSNorm paper reports,
    which is the training time of whole models, where the norm is one part of a step; and a
    fused kernel reads x and writes y once for either norm, so both would be bound by memory
    bandwidth and differ far less (not measured here). The times move with the machine's load;
    the pass counts do not.

    ![Forward and backward time of LayerNorm, RMSNorm and BatchNorm against hidden size](../figures/speed.png)
    """, zh=r"""
    **实验结果**（`normcore figures`；每个结论都由一个测试断言）。

    *RMSNorm 放弃了什么*（Zhang & Sennrich 2019，表 1），实测：没有了中心化，它失去了 LayerNorm
    对权重矩阵重新中心化的不变性，保留了对权重矩阵重新缩放、对数据集重新缩放以及对单个样本重新
    缩放的不变性。

    ![BatchNorm、LayerNorm 和 RMSNorm 的不变性：实测表](../figures/invariance_table.png)

    *它得到了什么*：LayerNorm 要遍历数据 19 遍，它只要 12 遍（少 37%，按参考层级的前向和反向
    计数）；在提交的图里，前向加反向的时间少了 34% 到 37%：在 NumPy 里每个运算都是对内存的一次
    遍历，所以一层的时间跟着遍数走。这不是 RMSNorm 论文报告的 7% 到 64%，那是整个模型的训练
    时间，归一化层只是一步里的一部分；而且融合后的算子对两种归一化都只读一次 x、写一次 y，两者
    都会受限于内存带宽，差别会小得多（这里没有测量）。时间随机器的负载而变，遍数不变。

    ![LayerNorm、RMSNorm 和 BatchNorm 前向加反向的时间随隐藏维度的变化](../figures/speed.png)
    """),
    md(r"""
    ## 9. float16: why a norm is computed in float32

    float16's largest finite value is 65504. So $x^2$ overflows to `inf` as soon as
    $|x| > 255.9$ ($256^2 = 65536$): one activation of a few hundred is enough. A norm written
    naively in float16 then breaks: RMSNorm's mean square becomes `inf` and
    $x / \sqrt{\infty}$ returns zeros; LayerNorm's variance written as $E[x^2] - E[x]^2$ becomes
    `inf` too (zeros again), and when the row's mean is itself above 256 it is
    $\infty - \infty$ = `nan`. A row with entries up to 300, the same row divided by 10, and a
    row of values near 300:
    """, zh=r"""
    ## 9. float16：为什么归一化要在 float32 里算

    float16 能表示的最大有限值是 65504。所以只要 $|x| > 255.9$（$256^2 = 65536$），$x^2$ 就会
    溢出成 `inf`：一个几百的激活值就够了。直接用 float16 写的归一化层于是会出错：RMSNorm 里
    平方的均值变成 `inf`，$x / \sqrt{\infty}$ 返回全零；LayerNorm 的方差如果写成 $E[x^2] - E[x]^2$，
    同样变成 `inf`（又是全零），而当这一行的均值本身超过 256 时，它就是 $\infty - \infty$ =
    `nan`。下面依次是一行最大到 300 的数、同一行除以 10，以及一行都在 300 附近的数：
    """),
    code(r"""
    big = np.array([[300.0, -120.0, 45.0, 210.0]], dtype=np.float16)
    small = big / np.float16(10)
    offset = np.array([[300.0, 280.0, 310.0, 290.0]], dtype=np.float16)

    def naive_rms(x, eps=1e-6):                    # everything in x's dtype
        return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + x.dtype.type(eps))

    def naive_layernorm_one_pass(x, eps=1e-5):     # var = E[x^2] - E[x]^2, in x's dtype
        mean = x.mean(axis=-1, keepdims=True)
        var = (x * x).mean(axis=-1, keepdims=True) - mean * mean
        return (x - mean) / np.sqrt(var + x.dtype.type(eps))

    def reference(norm, x):                        # the same norm in float64, for comparison
        return norm(x.astype(np.float64))

    with np.errstate(over="ignore", invalid="ignore"):
        print(pad(tr("x * x in float16:"), 35), big * big)
        print(pad(tr("naive float16 RMSNorm, big row:"), 35), tidy(naive_rms(big)))
        print(pad(tr("naive float16 LayerNorm, big row:"), 35), tidy(naive_layernorm_one_pass(big)))
        print(pad(tr("naive float16 LayerNorm, near 300:"), 35), naive_layernorm_one_pass(offset))
        print(pad(tr("naive float16 RMSNorm, row / 10:"), 35), naive_rms(small))
        print(pad(tr("float64 RMSNorm, big row:"), 35), reference(naive_rms, big))
        half_rms_big = naive_rms(big)
        half_ln_big, half_ln_offset = naive_layernorm_one_pass(big), naive_layernorm_one_pass(offset)
    """),
    md(r"""
    Zeros from RMSNorm are the dangerous answer: nothing signals an error, the row simply
    vanishes. The fix is the recipe of LLaMA's RMSNorm (and of mixed-precision training in
    general): cast the input to float32, compute the statistics and the normalisation there,
    and cast the result back to the input's dtype. float32 reaches about $3.4 \times 10^{38}$,
    so $x^2$ is safe for any $|x|$ float16 can hold.
    """, zh=r"""
    RMSNorm 输出全零是最危险的结果：不报任何错，这一行就这么消失了。解决办法是 LLaMA 的 RMSNorm
    的做法（也是混合精度训练的通用做法）：把输入转成 float32，在 float32 里算统计量并归一化，再把
    结果转回输入的 dtype。float32 最大约为 $3.4 \times 10^{38}$，所以对 float16 能表示的任何
    $|x|$，$x^2$ 都不会溢出。
    """),
    code(r"""
    def rms_in_float32(x, eps=1e-6):               # LLaMA's recipe: up to float32, normalise, back down
        x32 = x.astype(np.float32)
        return (x32 / np.sqrt((x32 * x32).mean(axis=-1, keepdims=True) + np.float32(eps))).astype(x.dtype)

    fixed = rms_in_float32(big)
    recipe_error = np.abs(fixed.astype(np.float64) - reference(naive_rms, big)).max()
    print(tr("float32 recipe, big row:"), fixed, fixed.dtype)
    print(tr("largest difference from float64: {error:.1e} (float16 keeps about 3 decimal digits)").format(
        error=recipe_error))
    """),
    md(r"""
    normcore's norms follow the same recipe (the contract: float16 input is computed in
    float32 and cast back). Measured on rows with entries up to a few
    thousand, every norm, both tiers, against float64 (the largest difference):
    """, zh=r"""
    normcore 的归一化层采用同样的做法（约定：float16 输入在 float32 里计算，再转换回来）。下面在
    元素大到几千的行上测量每一种归一化层、两个层级，给出与 float64 结果的最大差异：
    """),
    code(r"""
    wide = (np.random.default_rng(8).standard_normal((16, 8)) * 1000).astype(np.float16)
    norms = {"LayerNorm": lambda: nc.LayerNorm(8), "RMSNorm": lambda: nc.RMSNorm(8),
             "BatchNorm1d": lambda: nc.BatchNorm1d(8), "GroupNorm": lambda: nc.GroupNorm(2, 8),
             "fast LayerNorm": lambda: nc.fast.LayerNorm(8), "fast RMSNorm": lambda: nc.fast.RMSNorm(8)}
    normcore_half_error = {}
    for name, make in norms.items():
        out = make()(wide)
        normcore_half_error[name] = np.abs(out.astype(np.float64) - make()(wide.astype(np.float64))).max()
        print(f"{name:<15}", tr("output {dtype}, all finite: {finite}, vs float64: {error:.1e}").format(
            dtype=out.dtype, finite=np.isfinite(out).all(), error=normcore_half_error[name]))
    """),
    md(r"""
    One place float16 still bites, in normcore as in PyTorch: the running statistics of a
    BatchNorm whose *parameters and buffers* are float16 (`dtype=np.float16`, or `.half()` in
    PyTorch) are stored in float16. A channel whose variance exceeds 65504 (a standard
    deviation above about 256) makes `running_var` overflow to `inf`, and in evaluation that
    channel then comes out as $\beta$ (zero at initialisation), with at most a NumPy overflow
    warning (PyTorch 2.13 gives the same zeros, with no warning; the tests check it). Keep BatchNorm's parameters and buffers in float32 (the default here is float64)
    and feed it float16 activations: that works.
    """, zh=r"""
    float16 仍会出问题的一个地方，normcore 和 PyTorch 都一样：如果 BatchNorm 的*参数和缓冲区*
    是 float16（`dtype=np.float16`，或 PyTorch 里的 `.half()`），它的移动统计量就以 float16
    存储。方差超过 65504（标准差大于约 256）的通道会让 `running_var` 溢出成 `inf`，于是在推理
    模式下这个通道的输出就是 $\beta$（初始化时为零），最多只有一个 NumPy 的溢出警告（PyTorch
    2.13 给出同样的零，而且没有警告；测试会检查这一点）。让 BatchNorm 的参数和缓冲区保持 float32
    （这里默认是 float64），输入 float16 的激活值：这样就没问题。
    """),
    code(r"""
    half_bn = nc.BatchNorm1d(8, momentum=None, dtype=np.float16)   # momentum None: running = this batch
    with np.errstate(over="ignore"):               # NumPy would warn: overflow encountered in cast
        half_bn(wide)
    print(tr("float16 buffers: running_var ="), half_bn.running_var)
    print(tr("evaluation output, first row:"), half_bn.eval()(wide)[0])

    float_bn = nc.BatchNorm1d(8, momentum=None)    # float64 parameters and buffers, float16 input
    float_bn(wide)
    print(tr("float64 buffers: running_var ="), (float_bn.running_var / 1e6).round(2), "x 1e6")
    print(tr("evaluation output, first row:"), float_bn.eval()(wide)[0].round(2))
    """),
    md(r"""
    ## Where next

    * `normcore explain rmsnorm --shape 2x4` prints the step-through in a terminal.
    * The LayerNorm notebook has the same derivation with the centring.
    """, zh=r"""
    ## 接下来

    * `normcore --lang zh explain rmsnorm --shape 2x4` 在终端里打印这份逐步推导。
    * LayerNorm 的 notebook 里有同样的推导，只是多了中心化。
    """),
]
