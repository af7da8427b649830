"""Source of notebooks/layernorm.ipynb (build with: python notebooks/build.py layernorm).

It is one piece, though long: it holds nothing but the notebook's cells in order, each helper
defined in the code cell that shows it, so the file reads as the notebook does (one source per
notebook: helpers moved out would no longer be shown).
"""

from build import CLASS_SCORES, code, md, question

CELLS = [
    md(r"""
    # LayerNorm, one node at a time

    LayerNorm standardises every sample over its own features: each token vector of a
    Transformer gets mean 0 and variance 1 across its $D$ features, then a learned per-feature
    scale $\gamma$ and shift $\beta$. No batch statistics, no running averages: training and
    evaluation are the same computation.

    1. the intuition: test scores normalised by student
    2. the formulas
    3. the forward in code
    4. the backward, derived step by step, and the step-through tape
    5. the compact backward formula, why it equals the staged one, and the Jacobian
    6. the gradient check
    7. the pitfalls: where eps goes, biased vs unbiased variance, which axes, train vs eval
    8. figures
    9. padded sequences: why Transformers use LayerNorm rather than BatchNorm

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """, zh=r"""
    # LayerNorm，一个节点一个节点地看

    LayerNorm 对每个样本在它自己的特征上做标准化：Transformer 的每个 token 向量在它的 $D$ 个
    特征上变成均值 0、方差 1，再乘上逐特征的可学习缩放 $\gamma$、加上平移 $\beta$。没有 batch
    统计量，也没有移动平均：训练和推理是同一个计算。

    1. 直觉：按学生归一化考试成绩
    2. 公式
    3. 前向的代码
    4. 逐步推导反向，以及逐步推导的计算带
    5. 紧凑的反向公式、它为什么等于分步的结果，以及雅可比矩阵
    6. 梯度检查
    7. 易错点：eps 放在哪里、有偏与无偏方差、在哪些轴上、训练与推理
    8. 图
    9. 填充过的序列：为什么 Transformer 用 LayerNorm 而不用 BatchNorm

    只要能 import `normcore`（在仓库里 `pip install -e .`），几秒钟就能跑完。

    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    import normcore as nc
    from normcore.derivations import step_through
    from normcore.i18n import N_, translator
    from normcore.i18n.figures import figure_words
    from normcore.i18n.width import pad

    np.set_printoptions(precision=4, suppress=True)
    tr = translator("notebooks")   # what the cells print, in the notebook's language

    def tidy(a):   # rounded to the 4 printed decimals; + 0.0 turns -0.0 into 0.0, so "-0." is never printed
        return np.round(a, 4) + 0.0
    """),
    md(r"""
    ## 1. Intuition: each student against themself

    The same four students and three tests as in the BatchNorm notebook. LayerNorm reads a row:
    *which subject is this student's best, and by how much?* It needs no other student, so it
    works the same for a class of one.
    """, zh=r"""
    ## 1. 直觉：每个学生只和自己比

    还是 BatchNorm 那个 notebook 里的四个学生和三门考试。LayerNorm 横着读一行：*这个学生哪一科
    最好，好多少？* 它不需要别的学生，所以一个班只有一个人时也照样工作。

    """),
    code(CLASS_SCORES, r"""
    ln = nc.LayerNorm(3, elementwise_affine=False)
    for name, row in zip(students, ln(scores)):
        print(f"{name:<5} {row}")
    print(tr("Chen alone:"), ln(scores[2:3]), tr("(the same row: no other student involved)"))
    """),
    md(r"""
    Ana and Ben get identical rows: LayerNorm keeps the *pattern* of a row and forgets its
    level and spread. In a Transformer the rows are token vectors. A batch of sentences of
    different lengths is no problem, because each token is normalised by itself.
    """, zh=r"""
    Ana 和 Ben 得到完全相同的一行：LayerNorm 保留一行的*模式*，忘掉它的水平和离散程度。在
    Transformer 里，行就是 token 向量。一个 batch 里的句子长短不一也没关系，因为每个 token 都是
    单独归一化的。

    """),
    code(r"""
    rng = np.random.default_rng(42)
    tokens = rng.normal(2.0, 3.0, size=(2, 5, 8))      # (batch B, sequence T, features D)
    y = nc.LayerNorm(8, elementwise_affine=False)(tokens)
    print(tr("per-token means:"), tidy(y.mean(axis=-1)))
    print(tr("per-token variances:"), y.var(axis=-1).round(4))
    print(tr("token (1, 3) normalised alone gives the same:"), np.allclose(nc.LayerNorm(8, elementwise_affine=False)(tokens[1, 3]), y[1, 3]))
    """),
    question(r"""
    Ben's scores are Ana's minus 30 in every subject, and LayerNorm gives the two the same row.
    Which changes to Ana's row would LayerNorm also forget, and which would it keep?
    """, r"""
    It forgets adding one number to the whole row (the mean is subtracted) and multiplying the
    whole row by a positive number (the spread is divided out, up to $\epsilon$). A negative
    factor flips the sign of every output. Anything else changes the row's pattern and shows in
    the output: raising only the maths score, or stretching the gap between two subjects.
    """, zh=(r"""
    Ben 每一科的成绩都是 Ana 的减 30，LayerNorm 给两人同样的一行。对 Ana 的那一行做哪些改动，
    LayerNorm 也会忘掉？哪些会保留？

    """, r"""
    给整行加上同一个数（均值被减掉了），或者把整行乘上同一个正数（离散程度被除掉了，只差
    $\epsilon$），它都会忘掉。乘一个负数则会让每个输出变号。其他任何改动都会改变这一行的模式，
    并体现在输出里：只提高数学成绩，或者拉大两科之间的差距。

    """)),
    md(r"""
    ## 2. The formulas

    For a sample $x \in \mathbb{R}^D$ (one token; a leading batch and sequence axes just repeat
    this):

    $$\mu = \frac{1}{D}\sum_{j} x_j, \qquad \sigma^2 = \frac{1}{D}\sum_{j} (x_j - \mu)^2, \qquad
      r = \frac{1}{\sqrt{\sigma^2 + \epsilon}}$$

    $$\hat{x}_j = (x_j - \mu)\, r, \qquad y_j = \gamma_j\, \hat{x}_j + \beta_j$$

    The variance is the biased one (divide by $D$), $\epsilon$ is inside the square root
    (default $10^{-5}$), and $\gamma, \beta$ have the shape of the normalised axes
    (`normalized_shape`), shared by every sample.
    """, zh=r"""
    ## 2. 公式

    对一个样本 $x \in \mathbb{R}^D$（一个 token；前面的 batch 轴和序列轴只是把它重复多次）：

    $$\mu = \frac{1}{D}\sum_{j} x_j, \qquad \sigma^2 = \frac{1}{D}\sum_{j} (x_j - \mu)^2, \qquad
      r = \frac{1}{\sqrt{\sigma^2 + \epsilon}}$$

    $$\hat{x}_j = (x_j - \mu)\, r, \qquad y_j = \gamma_j\, \hat{x}_j + \beta_j$$

    方差是有偏的（除以 $D$），$\epsilon$ 在平方根里面（默认 $10^{-5}$），$\gamma, \beta$ 的形状
    就是被归一化的那些轴的形状（`normalized_shape`），所有样本共用。

    """),
    md(r"""
    ## 3. The forward in code
    """, zh=r"""
    ## 3. 前向的代码

    """),
    code(r"""
    x = rng.normal(1.0, 2.0, size=(3, 4))
    layer = nc.LayerNorm(4)
    layer.gamma.data[...] = rng.standard_normal(4)
    layer.beta.data[...] = rng.standard_normal(4)
    y = layer(x)
    print(layer)
    print("y =\n", y)

    mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)   # biased
    x_hat = (x - mean) / np.sqrt(var + layer.eps)
    print(tr("largest difference from the formulas:"), np.abs(x_hat * layer.gamma.data + layer.beta.data - y).max())
    """),
    md(r"""
    `normalized_shape` can name several trailing axes: `LayerNorm((C, H, W))` standardises each
    sample of an image batch over all its channels and pixels at once.
    """, zh=r"""
    `normalized_shape` 可以指定末尾的好几个轴：`LayerNorm((C, H, W))` 把一个 batch 的图像里每个样本在
    它全部的通道和像素上一起标准化。

    """),
    code(r"""
    images = rng.normal(size=(2, 3, 4, 4))
    y_img = nc.LayerNorm((3, 4, 4), elementwise_affine=False)(images)
    print(tr("per-sample mean and variance:"), tidy(y_img.mean(axis=(1, 2, 3))), y_img.var(axis=(1, 2, 3)).round(4))
    """),
    md(r"""
    ## 4. The backward, derived step by step

    The loss is $L = \sum y\, dy$ with a random $dy$. The steps are BatchNorm's, with the means
    taken along a row instead of down a column ($\bar{v}$ is $\partial L / \partial v$, sums over
    the $D$ features of one sample):

    | step | forward | backward |
    |---|---|---|
    | shift | $y = s + \beta$ | $\bar{s} = \bar{y}$, $\ \bar{\beta}_j = \sum_{\text{samples}} \bar{y}_j$ |
    | scale | $s = \hat{x}\,\gamma$ | $\bar{\hat{x}} = \bar{s}\,\gamma$, $\ \bar{\gamma}_j = \sum_{\text{samples}} \bar{s}_j\,\hat{x}_j$ |
    | normalise | $\hat{x} = x_c\, r$ | $\bar{x}_c \mathrel{+}= \bar{\hat{x}}\, r$, $\ \bar{r} = \sum_j \bar{\hat{x}}_j\, x_{c,j}$ |
    | rsqrt | $r = v^{-1/2}$ | $\bar{v} = -\tfrac{1}{2} v^{-3/2}\, \bar{r}$ |
    | add eps | $v = \sigma^2 + \epsilon$ | $\overline{\sigma^2} = \bar{v}$ |
    | variance | $\sigma^2 = \frac{1}{D}\sum_j q_j$ | $\bar{q}_j = \overline{\sigma^2} / D$ |
    | square | $q = x_c^2$ | $\bar{x}_c \mathrel{+}= 2\, x_c\, \bar{q}$ |
    | centre | $x_c = x - \mu$ | $\bar{x} \mathrel{+}= \bar{x}_c$, $\ \bar{\mu} = -\sum_j \bar{x}_{c,j}$ |
    | mean | $\mu = \frac{1}{D}\sum_j x_j$ | $\bar{x} \mathrel{+}= \bar{\mu} / D$ |

    The tape `normcore.derivations` builds for LayerNorm over 4 features:

    <<tape layernorm 3x4>>

    The numbers, for the layer above and a random $dy$:
    """, zh=r"""
    ## 4. 逐步推导反向

    损失取 $L = \sum y\, dy$，$dy$ 是随机的。步骤和 BatchNorm 的相同，只是均值沿一行取，而不是
    沿一列（$\bar{v}$ 表示 $\partial L / \partial v$，求和遍及一个样本的 $D$ 个特征）：

    | 步骤 | 前向 | 反向 |
    |---|---|---|
    | 平移 | $y = s + \beta$ | $\bar{s} = \bar{y}$，$\ \bar{\beta}_j = \sum_{\text{samples}} \bar{y}_j$ |
    | 缩放 | $s = \hat{x}\,\gamma$ | $\bar{\hat{x}} = \bar{s}\,\gamma$，$\ \bar{\gamma}_j = \sum_{\text{samples}} \bar{s}_j\,\hat{x}_j$ |
    | 归一化 | $\hat{x} = x_c\, r$ | $\bar{x}_c \mathrel{+}= \bar{\hat{x}}\, r$，$\ \bar{r} = \sum_j \bar{\hat{x}}_j\, x_{c,j}$ |
    | 平方根倒数 | $r = v^{-1/2}$ | $\bar{v} = -\tfrac{1}{2} v^{-3/2}\, \bar{r}$ |
    | 加 eps | $v = \sigma^2 + \epsilon$ | $\overline{\sigma^2} = \bar{v}$ |
    | 方差 | $\sigma^2 = \frac{1}{D}\sum_j q_j$ | $\bar{q}_j = \overline{\sigma^2} / D$ |
    | 平方 | $q = x_c^2$ | $\bar{x}_c \mathrel{+}= 2\, x_c\, \bar{q}$ |
    | 中心化 | $x_c = x - \mu$ | $\bar{x} \mathrel{+}= \bar{x}_c$，$\ \bar{\mu} = -\sum_j \bar{x}_{c,j}$ |
    | 均值 | $\mu = \frac{1}{D}\sum_j x_j$ | $\bar{x} \mathrel{+}= \bar{\mu} / D$ |

    `normcore.derivations` 为 4 个特征上的 LayerNorm 建的计算带：

    <<tape layernorm 3x4>>

    下面是上面那个层在一个随机 $dy$ 下的数字：

    """),
    code(r"""
    dy = rng.standard_normal(x.shape)
    st = step_through("layernorm", x, gamma=layer.gamma.data, beta=layer.beta.data, dy=dy)
    print(st.text(latex=False, parts=("backward",)))
    """),
    code(r"""
    print(st.text(parts=("checks",)))
    """),
    md(r"""
    **The tape as a picture.** `st.graph()` draws this tape's nodes and edges
    (`normcore explain layernorm --graph FILE.png` writes the same picture to a file). Each box
    shows a node's formula and shape: the statistics hold one value per row, shape $(3, 1)$.
    The routes from $x$ to $\hat{x}$ have a colour and a line style each: straight through the
    centring (solid), through the mean (dashed), and through the variance (dash-dot), which
    leaves from $x_c$. The backward adds up what comes back along each; section 5 shows the
    three shares.
    """, zh=r"""
    **把计算带画出来。** `st.graph()` 画出这条计算带的节点和边
    （`normcore explain layernorm --graph FILE.png` 把同样的图写进文件）。每个框里是一个节点的
    公式和形状：统计量每行一个值，形状为 $(3, 1)$。从 $x$ 到 $\hat{x}$ 的几条路径各有自己的
    颜色和线型：直接穿过中心化的（实线）、经过均值的（虚线）、经过方差的（点划线，从 $x_c$
    出发）。反向传播把沿每条路径传回的梯度加起来；第 5 节给出这三份。

    <<figure font note>>
    """),
    code(r"""
    st.graph()
    """),
    md(r"""
    ## 5. The compact formula, and why it equals the staged one

    With $g = \bar{\hat{x}} = dy\,\gamma$ and means over the row, the three paths from $x$ are
    the direct one $r g$, the one through the variance $-r\,\hat{x}\operatorname{mean}(g\hat{x})$
    and the one through the mean $-r\operatorname{mean}(g)$ (the variance path adds nothing to
    the mean's gradient since $\sum_j x_{c,j} = 0$). Together:

    $$\bar{x} = r\left(g - \operatorname{mean}(g) - \hat{x}\,\operatorname{mean}(g\,\hat{x})\right)$$

    In NumPy that is one line, `dx = rstd * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))`,
    and the cache it needs is only $\hat{x}$ and $r$. The tape's shares are the three terms:
    """, zh=r"""
    ## 5. 紧凑公式，以及它为什么等于分步的结果

    记 $g = \bar{\hat{x}} = dy\,\gamma$，均值沿行取。从 $x$ 出发的三条路径分别是：直接路径
    $r g$，经过方差的 $-r\,\hat{x}\operatorname{mean}(g\hat{x})$，经过均值的
    $-r\operatorname{mean}(g)$（方差那条路径对均值的梯度没有贡献，因为 $\sum_j x_{c,j} = 0$）。
    合起来：

    $$\bar{x} = r\left(g - \operatorname{mean}(g) - \hat{x}\,\operatorname{mean}(g\,\hat{x})\right)$$

    用 NumPy 写就是一行：`dx = rstd * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))`，
    需要缓存的只有 $\hat{x}$ 和 $r$。计算带上的三份就是这三项：

    """),
    code(r"""
    t = st.tape
    g, r, x_hat = t["x_hat"].grad, t["rstd"].value, t["x_hat"].value
    direct = t["x_hat"].share("xc")
    through_var = t["xc2"].share("xc")
    through_mean = t["mean"].share("x")
    compact = r * (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True))

    print(tr("direct == r g:"), np.allclose(direct, r * g))
    print(tr("through the variance == -r x_hat mean(g x_hat):"), np.allclose(through_var, -r * x_hat * (g * x_hat).mean(-1, keepdims=True)))
    print(tr("through the mean == -r mean(g):"), np.allclose(through_mean, -r * g.mean(-1, keepdims=True)))
    layer.zero_grad(); layer.forward(x)
    print(tr("staged - LayerNorm.backward:"), np.abs(direct + through_var + through_mean - layer.backward(dy)).max())
    """),
    question(r"""
    Suppose the mean were not computed from $x$ but given (a constant, like BatchNorm's running
    mean in evaluation). Which route of the picture disappears, which term of the compact
    formula goes with it, and which property of $\bar{x}$ is lost?
    """, r"""
    The route through the mean ($x \to \mu \to x_c$) disappears, and with it the term
    $-r\operatorname{mean}(g)$. Then $\bar{x}$ no longer sums to zero over the row in general:
    the output is no longer blind to a shift of $x$, because the given mean does not move with
    it.
    """, zh=(r"""
    假设均值不是从 $x$ 算出来的，而是给定的（一个常数，就像 BatchNorm 推理时的移动均值）。
    图中哪条路径会消失？紧凑公式里哪一项跟着消失？$\bar{x}$ 失去了哪个性质？

    """, r"""
    经过均值的路径（$x \to \mu \to x_c$）消失，$-r\operatorname{mean}(g)$ 这一项也随之消失。
    这时 $\bar{x}$ 沿一行之和一般不再为零：输出不再对 $x$ 的平移视而不见，因为给定的均值不会
    跟着 $x$ 移动。

    """)),
    md(r"""
    **The Jacobian.** For one row, $\partial \hat{x}_i / \partial x_j = \frac{r}{D}\left(D\,\delta_{ij} - 1 - \hat{x}_i \hat{x}_j\right)$:
    a symmetric matrix, so $\bar{x} = J g$. Its null space explains the properties of the
    gradient: $J\mathbf{1} = 0$ (a shift of the row changes nothing, so $\sum_j \bar{x}_j = 0$)
    and $J\hat{x} \approx 0$ (a rescaling changes nothing, up to $\epsilon$).
    """, zh=r"""
    **雅可比矩阵。** 对一行，$\partial \hat{x}_i / \partial x_j = \frac{r}{D}\left(D\,\delta_{ij} - 1 - \hat{x}_i \hat{x}_j\right)$：
    这是一个对称矩阵，所以 $\bar{x} = J g$。它的零空间解释了梯度的那些性质：$J\mathbf{1} = 0$
    （平移一行什么都不变，所以 $\sum_j \bar{x}_j = 0$），$J\hat{x} \approx 0$（缩放也什么都
    不变，只差 $\epsilon$）。

    """),
    code(r"""
    D, row = 4, 0
    J = r[row] / D * (D * np.eye(D) - 1 - np.outer(x_hat[row], x_hat[row]))
    print(tr("J g == the tape's dL/dx:"), np.allclose(J @ g[row], t["x"].grad[row]))
    print(tr("eigenvalues of J:"), tidy(np.linalg.eigvalsh(J)))
    print(tr("sum of dL/dx per row:"), tidy(t["x"].grad.sum(axis=-1)))
    """),
    question(r"""
    Two eigenvalues of $J$ are (about) zero and the others all equal $r$. Which directions are
    the first two, and what does $r$ mean for the directions left?
    """, r"""
    $\mathbf{1}$ (a shift of the row: $J\mathbf{1} = 0$ exactly) and $\hat{x}$ (a rescaling:
    $J\hat{x} = r\,\hat{x}\,\epsilon/(\sigma^2 + \epsilon)$, tiny but not zero). In every
    direction orthogonal to both, $J$ just multiplies by $r = 1/\sqrt{\sigma^2 + \epsilon}$: a
    row with a small spread passes on a large gradient.
    """, zh=(r"""
    $J$ 有两个特征值（大约）为零，其余都等于 $r$。前两个对应哪些方向？对剩下的方向来说，$r$
    意味着什么？

    """, r"""
    $\mathbf{1}$（平移一行：$J\mathbf{1} = 0$，精确为零）和 $\hat{x}$（缩放：
    $J\hat{x} = r\,\hat{x}\,\epsilon/(\sigma^2 + \epsilon)$，很小但不为零）。在与两者都正交的
    每个方向上，$J$ 只是乘以 $r = 1/\sqrt{\sigma^2 + \epsilon}$：离散程度小的行会往回传一个
    大梯度。

    """)),
    md(r"""
    ## 6. The gradient check

    Float64, random $\gamma$, $\beta$ and upstream gradient, central differences, for a
    `(B, T, D)` input and for a `LayerNorm((C, H, W))`:
    """, zh=r"""
    ## 6. 梯度检查

    float64，随机的 $\gamma$、$\beta$ 和上游梯度，中心差分；分别检查 `(B, T, D)` 输入上的
    LayerNorm 和一个 `LayerNorm((C, H, W))`：

    """),
    code(r"""
    for layer_, input_ in [(nc.LayerNorm(8), tokens), (nc.LayerNorm((3, 4, 4)), images)]:
        for p in layer_.parameters():
            p.data[...] = rng.standard_normal(p.shape)
        report = nc.gradcheck(layer_, input_)
        print(report, "\n")
        assert report.passed
    """),
    md(r"""
    ## 7. Pitfalls

    ### eps inside the square root

    $\hat{x} = (x - \mu)/\sqrt{\sigma^2 + \epsilon}$, not $(x - \mu)/(\sigma + \epsilon)$. The second
    is a different layer (PyTorch's `LayerNorm` is the first). They agree when $\sigma$ is large
    and part ways for nearly constant rows, such as a padding token: inside the root, $\epsilon$
    damps rounding noise towards 0; outside, the noise is blown up to unit size, and the slope
    $1/(\sigma + \epsilon)$ grows to $1/\epsilon = 10^5$.
    """, zh=r"""
    ## 7. 易错点

    ### eps 在平方根里面

    $\hat{x} = (x - \mu)/\sqrt{\sigma^2 + \epsilon}$，而不是 $(x - \mu)/(\sigma + \epsilon)$。后者
    是另一个层（PyTorch 的 `LayerNorm` 是前者）。$\sigma$ 大时两者一致，对于几乎为常数的行，
    比如填充 token，就分道扬镳了：放在根号里，$\epsilon$ 把舍入噪声压向 0；放在外面，噪声被
    放大到单位尺度，斜率 $1/(\sigma + \epsilon)$ 增长到 $1/\epsilon = 10^5$。

    """),
    code(r"""
    eps = 1e-5
    for spread in [1.0, 1e-2, 1e-4, 0.0]:
        row = np.array([1.0, 1.0 + spread, 1.0 - spread, 1.0])
        xc = row - row.mean()
        inside = xc / np.sqrt(xc.var() + eps)
        outside = xc / (xc.std() + eps)
        print(tr("spread {spread:<6g} inside: {inside}  outside: {outside}").format(
            spread=spread, inside=inside, outside=outside))
    """),
    md(r"""
    A constant row ($\sigma^2 = 0$) has $\hat{x} = 0$, so $y = \beta$, and its gradient is
    $(g - \operatorname{mean}(g))/\sqrt{\epsilon}$: large, but finite.
    """, zh=r"""
    常数行（$\sigma^2 = 0$）的 $\hat{x} = 0$，所以 $y = \beta$，它的梯度是
    $(g - \operatorname{mean}(g))/\sqrt{\epsilon}$：很大，但有限。

    """),
    code(r"""
    const = nc.LayerNorm(4)
    const.beta.data[...] = [0.1, 0.2, 0.3, 0.4]
    print("y =", const(np.full((1, 4), 7.0)))
    g_const = np.array([[1.0, -2.0, 0.5, 0.0]])
    print("dx =", const.backward(g_const), " = (g - mean g) / sqrt(eps):", (g_const - g_const.mean()) / np.sqrt(1e-5))
    """),
    md(r"""
    ### Biased variance

    LayerNorm divides by $D$. `torch.var` divides by $D - 1$ unless told `unbiased=False`, so a
    hand-written layer built on it normalises to a variance of $(D-1)/D$: 25% off for $D = 4$,
    0.13% for $D = 768$, easy to miss in a test with wide rows.
    """, zh=r"""
    ### 有偏方差

    LayerNorm 除以 $D$。`torch.var` 除以 $D - 1$，除非指定 `unbiased=False`；所以基于它手写的层
    会把方差归一化到 $(D-1)/D$：$D = 4$ 时差 25%，$D = 768$ 时差 0.13%，在行很宽的测试里很容易
    漏掉。

    """),
    code(r"""
    for D in [4, 768]:
        row = rng.standard_normal(D)
        wrong = (row - row.mean()) / np.sqrt(row.var(ddof=1) + 1e-5)
        print(f"D={D:<4} " + tr("variance of the output with the unbiased variance: {var:.4f}").format(var=wrong.var()))
    """),
    md(r"""
    ### Which axes, and train vs eval

    `LayerNorm(D)` normalises the **last** axis of each sample; `LayerNorm((C, H, W))` the last
    three. It never looks across samples, keeps no running statistics, and gives the same output
    in `train()` and `eval()`. (BatchNorm is the opposite on every count.)
    """, zh=r"""
    ### 在哪些轴上，以及训练与推理

    `LayerNorm(D)` 归一化每个样本的**最后**一个轴；`LayerNorm((C, H, W))` 归一化最后三个。它从不
    跨样本看，不保存移动统计量，在 `train()` 和 `eval()` 下输出相同。（这几点 BatchNorm 全都
    相反。）

    """),
    code(r"""
    layer_ = nc.LayerNorm(8)
    print(tr("train == eval:"), np.array_equal(layer_.train()(tokens), layer_.eval()(tokens)))
    print(tr("state dict keys:"), list(layer_.state_dict()))
    """),
    md(r"""
    ## 8. Figures

    Rows with very different scales and offsets all come out of LayerNorm with the same spread;
    the per-row offset and scale are gone (the learned $\gamma$ and $\beta$ then set one scale
    and offset for every row).
    """, zh=r"""
    ## 8. 图

    尺度和偏移相差很大的各行，经过 LayerNorm 之后离散程度都一样；每行各自的偏移和尺度都没有了
    （之后可学习的 $\gamma$ 和 $\beta$ 为所有行设定同一个尺度和偏移）。

    """),
    code(r"""
    rows = rng.standard_normal((200, 16)) * rng.uniform(0.1, 10, size=(200, 1)) + rng.uniform(-20, 20, size=(200, 1))
    out = nc.LayerNorm(16, elementwise_affine=False)(rows)
    with figure_words(tr) as say:   # the figure's words: Chinese when a Chinese font is installed
        fig, axes = plt.subplots(1, 2, figsize=(8, 3))
        axes[0].scatter(rows.mean(1), rows.std(1), s=8); axes[0].set_title(say("rows before"))
        axes[1].scatter(out.mean(1), out.std(1), s=8); axes[1].set_title(say("rows after LayerNorm"))
        axes[1].set_xlim(-1, 1); axes[1].set_ylim(0, 2)
        for ax in axes:
            ax.set_xlabel(say("row mean")); ax.set_ylabel(say("row std"))
        plt.tight_layout(); plt.show()
    """),
    md(r"""
    **From the experiments** (`normcore figures`; each claim is asserted by a test).

    *Invariances* (Zhang & Sennrich 2019, Table 1), measured: LayerNorm's output ignores a
    re-scaling or re-centring of the weight matrix in front of it, a re-scaling of the whole
    dataset and of any single example, but not a re-scaling of one weight vector (one output
    feature) or a re-centring of the data, which BatchNorm absorbs instead.

    ![Measured invariance table of BatchNorm, LayerNorm and RMSNorm](../figures/invariance_table.png)

    *No batch statistics*: at a fixed sample budget LayerNorm's error does not move as the batch
    shrinks to 2, where BatchNorm's climbs.

    ![Error against batch size for BatchNorm, GroupNorm and LayerNorm](../figures/batch_size_error.png)
    """, zh=r"""
    **来自实验**（`normcore figures`；每个结论都有一个测试断言）。

    *不变性*（Zhang & Sennrich 2019，表 1），实测：LayerNorm 的输出不受它前面权重矩阵的整体
    缩放或重新中心化的影响，也不受整个数据集的缩放和任意单个样本的缩放的影响；但单个权重向量
    （一个输出特征）的缩放、数据的重新中心化会影响它，这两种变化由 BatchNorm 吸收。

    ![实测的 BatchNorm、LayerNorm 和 RMSNorm 不变性表](../figures/invariance_table.png)

    *没有 batch 统计量*：在固定的样本预算下，batch 一直缩小到 2，LayerNorm 的误差都不变，而
    BatchNorm 的误差会上升。

    ![BatchNorm、GroupNorm 和 LayerNorm 的误差随批次大小的变化](../figures/batch_size_error.png)

    """),
    md(r"""
    ## 9. Padded sequences: why Transformers use LayerNorm rather than BatchNorm

    Sentences have different lengths. To put them in one array, the short ones are padded to
    the longest with padding tokens (here: zero vectors), and a mask says which positions are
    real. A batch of four sentences of 7, 3, 5 and 2 tokens, padded to 8, each token a vector
    of $D = 6$ features whose real values have mean 2 and standard deviation 1:
    """, zh=r"""
    ## 9. 填充过的序列：为什么 Transformer 用 LayerNorm 而不用 BatchNorm

    句子长短不一。要把它们放进一个数组，就用填充 token（这里是零向量）把短句子填充到最长句子的
    长度，再用一个掩码标出哪些位置是真实的。一个 batch 有四个句子，长度分别为 7、3、5、2 个 token，
    填充到 8；每个 token 是一个 $D = 6$ 维的向量，真实值的均值为 2、标准差为 1：

    """),
    code(r"""
    lengths = [7, 3, 5, 2]
    rng_pad = np.random.default_rng(5)

    def padded(lengths, pad_to):
        mask = np.arange(pad_to) < np.array(lengths)[:, None]               # N,L   True = real token
        tokens = rng_pad.normal(2.0, 1.0, size=(len(lengths), pad_to, 6))   # N,L,D
        return np.where(mask[..., None], tokens, 0.0), mask

    seq, mask = padded(lengths, pad_to=8)
    print(tr("mask:") + "\n", mask.astype(int))
    print(tr("padding: {share:.0%} of the positions").format(share=1 - mask.mean()))
    """),
    md(r"""
    **BatchNorm** normalises each feature over the batch *and* the positions: the padding zeros
    count as data. They pull the mean toward 0 and widen the spread, so the real tokens, the
    only ones anything reads, come out neither centred nor of unit variance. (normcore's
    `BatchNorm1d` takes the channels on axis 1: `(N, C, L)`.)

    A **masked BatchNorm** takes the statistics over the real tokens only. It is a few lines
    (the forward only, for the statistics; a layer would also need the matching backward, in
    which padded positions get no gradient):
    """, zh=r"""
    **BatchNorm** 在 batch *和*位置上对每个特征做归一化：填充的零也被当成了数据。它们把均值拉向 0，
    又把离散程度撑大，于是后面唯一会读到的真实 token 出来时既没有中心化，方差也不是 1。
    （normcore 的 `BatchNorm1d` 要求通道在第 1 个轴上：`(N, C, L)`。）

    **带掩码的 BatchNorm** 只在真实 token 上取统计量。它只要几行（这里只写前向，用来看统计量；
    真正的层还需要对应的反向，填充位置在其中不得到梯度）：

    """),
    code(r"""
    def masked_batchnorm(x, mask, eps=1e-5):
        # x: N,C,L; mask: N,L (True = real). Each channel standardised over its real tokens only;
        # padded positions come out as 0.
        m = mask[:, None, :]                                              # N,1,L
        n = m.sum()                                                       # number of real tokens
        mean = np.where(m, x, 0.0).sum(axis=(0, 2), keepdims=True) / n    # 1,C,1
        var = np.where(m, (x - mean) ** 2, 0.0).sum(axis=(0, 2), keepdims=True) / n
        return np.where(m, (x - mean) / np.sqrt(var + eps), 0.0)

    def real_token_stats(y, mask):
        # mean and variance of each feature over the real tokens; y: N,L,D
        real = y[mask]                                                    # n_real,D
        return real.mean(axis=0), real.var(axis=0)

    channels_first = seq.transpose(0, 2, 1)                               # N,D,L for BatchNorm1d
    outputs = {
        N_("BatchNorm, padding included"): nc.BatchNorm1d(6, affine=False)(channels_first).transpose(0, 2, 1),
        N_("masked BatchNorm"): masked_batchnorm(channels_first, mask).transpose(0, 2, 1),
    }
    pad_stats = {}
    for name, y_pad in outputs.items():
        mean_real, var_real = real_token_stats(y_pad, mask)
        pad_stats[name] = (np.abs(mean_real).max(), np.abs(var_real - 1).max())
        print(pad(tr(name), 28), tr("real tokens: mean {mean:+.3f}, variance {var:.3f}").format(
            mean=mean_real.mean(), var=var_real.mean()))

    token_out = nc.LayerNorm(6, elementwise_affine=False)(seq)[mask]      # n_real,D
    print(tr("LayerNorm, each real token over its own features: |mean| <= {mean:.0e},\n"
            "  variance {low:.4f} to {high:.4f}").format(mean=np.abs(token_out.mean(axis=1)).max(),
                                                       low=token_out.var(axis=1).min(), high=token_out.var(axis=1).max()))

    # the masked version is exactly BatchNorm on the real tokens alone
    alone = nc.BatchNorm1d(6, affine=False)(seq[mask])                    # n_real,D
    masked_vs_alone = np.abs(outputs["masked BatchNorm"][mask] - alone).max()
    print(tr("masked BatchNorm vs BatchNorm on the real tokens alone:"), masked_vs_alone)
    """),
    md(r"""
    BatchNorm with the padding leaves the real tokens with a mean near $+0.8$ and a variance
    near 0.6 (averages over the 6 features); the masked BatchNorm gives them mean 0 and
    variance 1, and equals BatchNorm run on the real tokens alone (to rounding). LayerNorm's
    statistics are each token's own, so every real token has mean 0 and variance 1 over its
    features (up to $\epsilon$), padding or not.

    Worse, the pollution depends on the *other* sentences. Pad the same batch to 16 positions
    (as happens when a longer sentence joins it) and every real token's BatchNorm output
    changes, although no real token did. Its running statistics are polluted the same way, so
    evaluation is off too. LayerNorm normalises each token over its own features: a real
    token never sees a padding token, so it needs no mask at all, and its output does not
    change.
    """, zh=r"""
    带填充的 BatchNorm 让真实 token 的均值在 $+0.8$ 附近、方差在 0.6 附近（6 个特征上的平均）；
    带掩码的 BatchNorm 让它们均值为 0、方差为 1，并且与只在真实 token 上运行的 BatchNorm 相等
    （到舍入误差为止）。LayerNorm 的统计量是每个 token 自己的，所以不管有没有填充，每个真实
    token 在它的特征上均值都是 0、方差都是 1（只差 $\epsilon$）。

    更糟的是，这种污染取决于*其他*句子。把同一个 batch 填充到 16 个位置（有一个更长的句子加入时
    就会这样），每个真实 token 的 BatchNorm 输出都变了，尽管没有哪个真实 token 变过。它的移动
    统计量也被同样污染，所以推理也不对。LayerNorm 在每个 token 自己的特征上归一化：真实 token
    永远看不到填充 token，所以它根本不需要掩码，输出也不会变。

    """),
    code(r"""
    longer = np.zeros((4, 16, 6))                                         # the same tokens, padded to 16
    longer[:, :8] = seq
    mask16 = np.zeros((4, 16), dtype=bool)
    mask16[:, :8] = mask

    def bn_tokens(x):                                                     # N,L,D -> N,L,D
        return nc.BatchNorm1d(6, affine=False)(x.transpose(0, 2, 1)).transpose(0, 2, 1)

    ln = nc.LayerNorm(6, elementwise_affine=False)
    pad_change = {
        "BatchNorm, padding included": np.abs(bn_tokens(longer)[mask16] - bn_tokens(seq)[mask]).max(),
        "masked BatchNorm": np.abs(masked_batchnorm(longer.transpose(0, 2, 1), mask16).transpose(0, 2, 1)[mask16]
                                   - outputs["masked BatchNorm"][mask]).max(),
        N_("LayerNorm (no mask)"): np.abs(ln(longer)[mask16] - ln(seq)[mask]).max(),
    }
    print(tr("padded to 16 instead of 8, largest change of a real token's output:"))
    for name, change in pad_change.items():
        print("  " + pad(tr(name), 28), f"{change:.3g}")

    polluted = nc.BatchNorm1d(6, momentum=None)                           # momentum None: the plain average
    for _ in range(50):
        polluted(padded(lengths, pad_to=8)[0].transpose(0, 2, 1))
    print(pad(tr("running_mean after 50 padded batches:"), 38), polluted.running_mean.round(2))
    print(pad(tr("the real tokens' mean:"), 38), 2.0)
    """),
    md(r"""
    This is the usual argument for LayerNorm in NLP: with variable-length, padded batches,
    BatchNorm needs a mask to get its statistics right, and even then a token's output
    depends on the other sentences of its batch; LayerNorm needs neither. (Shen et al. 2020,
    "PowerNorm", add that BatchNorm's batch statistics also fluctuate much more in NLP
    Transformers than in vision networks; that part is not measured here.)
    """, zh=r"""
    这就是 NLP 里用 LayerNorm 的常见理由：对于长度不一、经过填充的 batch，BatchNorm 需要掩码才能
    把统计量算对，而且即便如此，一个 token 的输出仍然依赖于同一 batch 里的其他句子；LayerNorm 两者
    都不需要。（Shen 等人 2020 年的“PowerNorm”还指出，BatchNorm 的 batch 统计量在 NLP 的
    Transformer 里比在视觉网络里波动大得多；这一点这里没有测量。）

    """),
    md(r"""
    ## Where next

    * `normcore explain layernorm --shape 2x4` prints the step-through in a terminal.
    * RMSNorm drops the centring (and $\beta$): its tape is this one without the mean.
    """, zh=r"""
    ## 接下来

    * `normcore --lang zh explain layernorm --shape 2x4` 在终端里打印逐步推导。
    * RMSNorm 去掉了中心化（以及 $\beta$）：它的计算带就是这条去掉均值的计算带。

    """),
]
