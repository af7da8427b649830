"""Source of notebooks/batchnorm.ipynb (build with: python notebooks/build.py batchnorm).

It is one piece, though long: it holds nothing but the notebook's cells in order, each helper
defined in the code cell that shows it, so the file reads as the notebook does (one source per
notebook: helpers moved out would no longer be shown).
"""

from build import CLASS_SCORES, code, md, question

CELLS = [
    md(r"""
    # BatchNorm, one node at a time

    BatchNorm standardises every feature (channel) over the batch: each column of an `(N, C)`
    input gets mean 0 and variance 1, then a learned scale $\gamma$ and shift $\beta$. This
    notebook builds it up from a table of test scores to the backward pass, node by node, with
    numbers at every step:

    1. the intuition: test scores normalised by subject (BatchNorm) or by student (LayerNorm)
    2. the formulas
    3. the forward in code
    4. the backward, derived step by step, and the step-through tape
    5. the compact backward formula and why it equals the staged one
    6. the gradient check
    7. the pitfalls: momentum convention, biased vs unbiased variance, where eps goes,
       training vs evaluation
    8. figures
    9. why $\gamma$ and $\beta$: the layer can still be the identity

    Everything below runs in a few seconds with `normcore` importable (`pip install -e .` in the
    repository, or run `python notebooks/build.py batchnorm` to rebuild this notebook).
    """, zh=r"""
    # BatchNorm，一个节点一个节点地看

    BatchNorm 在 batch 上对每个特征（通道）做标准化：`(N, C)` 输入的每一列先变成均值 0、方差 1，
    再乘上可学习的缩放 $\gamma$、加上平移 $\beta$。这个 notebook 从一张成绩表出发，一个节点
    一个节点地讲到反向传播，每一步都有数字：

    1. 直觉：按科目（BatchNorm）或按学生（LayerNorm）归一化考试成绩
    2. 公式
    3. 前向的代码
    4. 逐步推导反向，以及逐步推导的计算带
    5. 紧凑的反向公式，以及它为什么等于分步的结果
    6. 梯度检查
    7. 易错点：动量的约定、有偏与无偏方差、eps 放在哪里、训练与推理
    8. 图
    9. 为什么要有 $\gamma$ 和 $\beta$：这一层仍然可以是恒等映射

    只要能 import `normcore`（在仓库里 `pip install -e .`，或运行
    `python notebooks/build.py batchnorm` 重建这个 notebook），下面的内容几秒钟就能跑完。

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
    ## 1. Intuition: test scores, by subject or by student

    Four students sat three tests. Each row is a student (a *sample*; the rows together are the
    *batch*), each column a subject (a *feature*).

    * **BatchNorm** looks down a column: *how did each student do in maths compared with the
      class?* It needs the whole class (the batch) to answer.
    * **LayerNorm** looks along a row: *which subject is each student's best?* It needs nothing
      but the student's own scores.
    """, zh=r"""
    ## 1. 直觉：考试成绩，按科目看还是按学生看

    四个学生考了三门。每一行是一个学生（一个*样本*；所有行合起来就是一个 *batch*），每一列是
    一门科目（一个*特征*）。

    * **BatchNorm** 竖着看一列：*每个学生的数学和全班比起来怎么样？* 要回答它，需要整个班
      （整个 batch）。
    * **LayerNorm** 横着看一行：*每个学生哪一科最好？* 它只需要这个学生自己的成绩。

    """),
    code(CLASS_SCORES, r"""

    by_subject = nc.BatchNorm1d(3, affine=False)(scores)          # each column over the 4 students
    by_student = nc.LayerNorm(3, elementwise_affine=False)(scores)  # each row over its 3 subjects

    print(" " * 6 + pad(tr("BatchNorm, by subject"), 28) + tr("LayerNorm, by student"))
    for name, b, l in zip(students, by_subject, by_student):
        print(f"{name:<5} {b}    {l}")
    print("\n" + tr("column means after BatchNorm:"), tidy(by_subject.mean(axis=0)))
    print(tr("column variances after BatchNorm:"), by_subject.var(axis=0))
    print(tr("row means after LayerNorm:"), tidy(by_student.mean(axis=1)))
    """),
    md(r"""
    Ben scored 30 points below Ana in every subject. BatchNorm keeps that (his column entries
    are all negative), LayerNorm forgets it: his row `60 50 40` has the same shape as Ana's
    `90 80 70`, so both become about `(1.22, 0, -1.22)`. (The variances are 1 up to the $\epsilon$ in
    the denominator.)

    **A batch of two.** BatchNorm's statistics come from the batch, so a tiny batch makes them
    crude. With two students every standardised score is $\pm 1$ (up to $\epsilon$), whatever
    the scores were: the output says only who was higher.
    """, zh=r"""
    Ben 每一科都比 Ana 低 30 分。BatchNorm 保留了这一点（他那一行的值全是负的），LayerNorm
    则把它忘了：他的那一行 `60 50 40` 和 Ana 的 `90 80 70` 形状相同，所以两人都变成大约
    `(1.22, 0, -1.22)`。（方差为 1，只差分母里的那个 $\epsilon$。）

    **只有两个样本的 batch。** BatchNorm 的统计量来自 batch，batch 太小，统计量就很粗糙。只有两个
    学生时，不管原来的成绩是多少，标准化后的每个成绩都是 $\pm 1$（只差 $\epsilon$）：输出只
    说明了谁高谁低。

    """),
    code(r"""
    print(nc.BatchNorm1d(3, affine=False)(scores[:2]))
    print(nc.BatchNorm1d(3, affine=False)(scores[2:]))
    """),
    question(r"""
    In training mode, what does BatchNorm output for a batch in which every student got the same
    maths score, and what would it output with $\epsilon = 0$?
    """, r"""
    The maths column has variance 0, so $\hat{x} = 0 / \sqrt{0 + \epsilon} = 0$ for every
    student and the output is $\beta$ (0 without affine): the column carries no information,
    and the layer says so. With $\epsilon = 0$ it would compute $0/0$ and return `nan`. Any
    $\epsilon$ avoids that, $\sigma + \epsilon$ as well as $\sqrt{\sigma^2 + \epsilon}$; the
    reason it sits inside the root is the backward ($\sqrt{v}$ has an infinite slope at
    $v = 0$, section 7: "Where eps goes"), and PyTorch, TensorFlow and Flax put it there too.
    """, zh=(r"""
    训练模式下，如果一个 batch 里每个学生的数学成绩都一样，BatchNorm 输出什么？$\epsilon = 0$
    时又会输出什么？

    """, r"""
    数学这一列的方差为 0，所以对每个学生都有 $\hat{x} = 0 / \sqrt{0 + \epsilon} = 0$，输出就是
    $\beta$（不带仿射参数时是 0）：这一列不携带任何信息，这一层的输出也如实反映了这一点。
    若 $\epsilon = 0$，它会算 $0/0$，返回 `nan`。任何 $\epsilon$ 都能避免这一点，
    $\sigma + \epsilon$ 和 $\sqrt{\sigma^2 + \epsilon}$ 都可以；把它放在根号里面，是为了反向
    传播（$\sqrt{v}$ 在 $v = 0$ 处斜率无穷大，见第 7 节“eps 放在哪里”），PyTorch、TensorFlow
    和 Flax 也都放在那里。

    """)),
    md(r"""
    ## 2. The formulas

    For an input $x$ of shape $(N, C)$, channel $c$ is standardised over the $N$ samples (for
    $(N, C, L)$ or $(N, C, H, W)$ over every axis but $C$; $n$ is the number of values per
    channel):

    $$\mu_c = \frac{1}{n}\sum_{i} x_{ic}, \qquad
      \sigma_c^2 = \frac{1}{n}\sum_{i} (x_{ic} - \mu_c)^2, \qquad
      r_c = \frac{1}{\sqrt{\sigma_c^2 + \epsilon}}$$

    $$\hat{x}_{ic} = (x_{ic} - \mu_c)\, r_c, \qquad y_{ic} = \gamma_c\, \hat{x}_{ic} + \beta_c$$

    The variance used to normalise is the **biased** one (divide by $n$). During training the
    layer also keeps running estimates for evaluation, with momentum $m = 0.1$ weighting the
    *new* batch and the **unbiased** variance:

    $$\text{running mean} \leftarrow (1 - m)\,\text{running mean} + m\,\mu, \qquad
      \text{running var} \leftarrow (1 - m)\,\text{running var} + m\,\tfrac{n}{n-1}\sigma^2$$

    In evaluation the running statistics replace the batch's:
    $\hat{x} = (x - \text{running mean}) / \sqrt{\text{running var} + \epsilon}$.
    """, zh=r"""
    ## 2. 公式

    对形状为 $(N, C)$ 的输入 $x$，通道 $c$ 在 $N$ 个样本上做标准化（对 $(N, C, L)$ 或
    $(N, C, H, W)$，则在除 $C$ 以外的所有轴上；$n$ 是每个通道的值的个数）：

    $$\mu_c = \frac{1}{n}\sum_{i} x_{ic}, \qquad
      \sigma_c^2 = \frac{1}{n}\sum_{i} (x_{ic} - \mu_c)^2, \qquad
      r_c = \frac{1}{\sqrt{\sigma_c^2 + \epsilon}}$$

    $$\hat{x}_{ic} = (x_{ic} - \mu_c)\, r_c, \qquad y_{ic} = \gamma_c\, \hat{x}_{ic} + \beta_c$$

    归一化用的是**有偏**方差（除以 $n$）。训练时这一层还要为推理维护移动估计：动量
    $m = 0.1$ 是*新* batch 的权重，方差用的是**无偏**方差：

    $$\text{running mean} \leftarrow (1 - m)\,\text{running mean} + m\,\mu, \qquad
      \text{running var} \leftarrow (1 - m)\,\text{running var} + m\,\tfrac{n}{n-1}\sigma^2$$

    推理时用移动统计量代替 batch 的统计量：
    $\hat{x} = (x - \text{running mean}) / \sqrt{\text{running var} + \epsilon}$。

    """),
    md(r"""
    ## 3. The forward in code

    A layer with random $\gamma$ and $\beta$ (never the initial ones and zeros when checking
    gradients: those hide mistakes), on an input whose mean is far from 0.
    """, zh=r"""
    ## 3. 前向的代码

    一个 $\gamma$ 和 $\beta$ 都是随机值的层（检查梯度时千万别用初始的全 1 和全 0，它们会把
    错误藏起来），输入的均值远离 0。

    """),
    code(r"""
    rng = np.random.default_rng(42)
    x = rng.normal(loc=3.0, scale=2.0, size=(4, 3))
    bn = nc.BatchNorm1d(3)
    bn.gamma.data[...] = rng.standard_normal(3)
    bn.beta.data[...] = rng.standard_normal(3)

    y = bn(x)
    print(bn)
    print("y =\n", y)

    # the same by hand, from the formulas
    mean, var = x.mean(axis=0), x.var(axis=0)                # var: biased, divides by N
    x_hat = (x - mean) / np.sqrt(var + bn.eps)
    print(tr("largest difference from the formulas:"), np.abs(x_hat * bn.gamma.data + bn.beta.data - y).max())

    print("running_mean:", bn.running_mean, tr("= 0.1 * batch mean:"), 0.1 * mean)
    print("running_var: ", bn.running_var, tr("= 0.9 + 0.1 * unbiased var:"), 0.9 + 0.1 * x.var(axis=0, ddof=1))
    """),
    md(r"""
    ## 4. The backward, derived step by step

    Take the loss $L = \sum_{ic} y_{ic}\, dy_{ic}$ with a random upstream gradient $dy$, so
    $\partial L / \partial y = dy$. The forward is nine elementary steps; the backward visits them
    in reverse, and each step needs only its own local derivative. Write $\bar{v}$ for
    $\partial L / \partial v$.

    | step | forward | backward |
    |---|---|---|
    | shift | $y = s + \beta$ | $\bar{s} = \bar{y}$, $\ \bar{\beta}_c = \sum_i \bar{y}_{ic}$ |
    | scale | $s = \hat{x}\,\gamma$ | $\bar{\hat{x}} = \bar{s}\,\gamma$, $\ \bar{\gamma}_c = \sum_i \bar{s}_{ic}\,\hat{x}_{ic}$ |
    | normalise | $\hat{x} = x_c\, r$ | $\bar{x}_c \mathrel{+}= \bar{\hat{x}}\, r$, $\ \bar{r}_c = \sum_i \bar{\hat{x}}_{ic}\, x_{c,ic}$ |
    | rsqrt | $r = v^{-1/2}$ | $\bar{v} = -\tfrac{1}{2} v^{-3/2}\, \bar{r} = -\tfrac{1}{2} r^3\, \bar{r}$ |
    | add eps | $v = \sigma^2 + \epsilon$ | $\overline{\sigma^2} = \bar{v}$ |
    | variance | $\sigma^2_c = \frac{1}{n}\sum_i q_{ic}$ | $\bar{q}_{ic} = \overline{\sigma^2_c} / n$ |
    | square | $q = x_c^2$ | $\bar{x}_c \mathrel{+}= 2\, x_c\, \bar{q}$ |
    | centre | $x_c = x - \mu$ | $\bar{x} \mathrel{+}= \bar{x}_c$, $\ \bar{\mu}_c = -\sum_i \bar{x}_{c,ic}$ |
    | mean | $\mu_c = \frac{1}{n}\sum_i x_{ic}$ | $\bar{x} \mathrel{+}= \bar{\mu} / n$ |

    $x_c$ feeds two steps (square and normalise) and $x$ feeds two (mean and centre), so each
    receives two shares that add up (the $\mathrel{+}=$). `normcore.derivations` builds exactly
    this tape. Its node table, generated from the code:

    <<tape batchnorm 4x3>>

    Now the numbers. The step-through uses the same $x$, $\gamma$, $\beta$ and a random $dy$:
    """, zh=r"""
    ## 4. 逐步推导反向

    取损失 $L = \sum_{ic} y_{ic}\, dy_{ic}$，$dy$ 是随机的上游梯度，于是
    $\partial L / \partial y = dy$。前向由九个基本步骤组成；反向传播按相反的顺序走一遍，每一步
    只需要它自己的局部导数。记 $\bar{v}$ 为 $\partial L / \partial v$。

    | 步骤 | 前向 | 反向 |
    |---|---|---|
    | 平移 | $y = s + \beta$ | $\bar{s} = \bar{y}$，$\ \bar{\beta}_c = \sum_i \bar{y}_{ic}$ |
    | 缩放 | $s = \hat{x}\,\gamma$ | $\bar{\hat{x}} = \bar{s}\,\gamma$，$\ \bar{\gamma}_c = \sum_i \bar{s}_{ic}\,\hat{x}_{ic}$ |
    | 归一化 | $\hat{x} = x_c\, r$ | $\bar{x}_c \mathrel{+}= \bar{\hat{x}}\, r$，$\ \bar{r}_c = \sum_i \bar{\hat{x}}_{ic}\, x_{c,ic}$ |
    | 平方根倒数 | $r = v^{-1/2}$ | $\bar{v} = -\tfrac{1}{2} v^{-3/2}\, \bar{r} = -\tfrac{1}{2} r^3\, \bar{r}$ |
    | 加 eps | $v = \sigma^2 + \epsilon$ | $\overline{\sigma^2} = \bar{v}$ |
    | 方差 | $\sigma^2_c = \frac{1}{n}\sum_i q_{ic}$ | $\bar{q}_{ic} = \overline{\sigma^2_c} / n$ |
    | 平方 | $q = x_c^2$ | $\bar{x}_c \mathrel{+}= 2\, x_c\, \bar{q}$ |
    | 中心化 | $x_c = x - \mu$ | $\bar{x} \mathrel{+}= \bar{x}_c$，$\ \bar{\mu}_c = -\sum_i \bar{x}_{c,ic}$ |
    | 均值 | $\mu_c = \frac{1}{n}\sum_i x_{ic}$ | $\bar{x} \mathrel{+}= \bar{\mu} / n$ |

    $x_c$ 进入两个步骤（平方和归一化），$x$ 也进入两个（均值和中心化），所以它们各自收到两份
    梯度，两份相加（即 $\mathrel{+}=$）。`normcore.derivations` 建的正是这条计算带。下面是它的
    节点表，由代码生成：

    <<tape batchnorm 4x3>>

    再看数字。逐步推导用同样的 $x$、$\gamma$、$\beta$ 和一个随机的 $dy$：

    """),
    code(r"""
    dy = rng.standard_normal(x.shape)
    st = step_through("batchnorm", x, gamma=bn.gamma.data, beta=bn.beta.data, dy=dy)
    print(st.text(latex=False, parts=("forward",)))
    """),
    md(r"""
    The backward, from $dy$ back to $x$. At each node: where its gradient came from, its local
    derivative, the rule, and the share it sends to each input.
    """, zh=r"""
    反向传播，从 $dy$ 回到 $x$。每个节点列出：它的梯度从哪里来、它的局部导数、所用的规则，
    以及它传给每个输入的那一份。

    """),
    code(r"""
    print(st.text(latex=False, parts=("backward",)))
    """),
    md(r"""
    Every node's staged gradient is then checked twice: against `BatchNorm1d.backward` (for $x$,
    $\gamma$, $\beta$) and against a numerical gradient, obtained by nudging that node's value,
    replaying the nodes after it and measuring the change in $L$.
    """, zh=r"""
    然后每个节点分步算出的梯度都要检查两遍：一遍对照 `BatchNorm1d.backward`（对 $x$、
    $\gamma$、$\beta$），一遍对照数值梯度：稍微扰动这个节点的值，重放它之后的节点，测量 $L$
    的变化。

    """),
    code(r"""
    print(st.text(parts=("checks",)))
    """),
    md(r"""
    **The tape as a picture.** `st.graph()` draws this tape's nodes and edges
    (`normcore explain batchnorm --shape 4x3 --graph FILE.png` writes the same picture to a
    file). Each box shows a node's formula and shape: the statistics hold one value per
    channel, shape $(1, 3)$. The routes from $x$ to $\hat{x}$ have a colour and a line style
    each: straight through the centring (solid), through the mean (dashed), and through the
    variance (dash-dot), which leaves from $x_c$. The backward adds up what comes back along
    each; section 5 shows the three shares.
    """, zh=r"""
    **把计算带画出来。** `st.graph()` 画出这条计算带的节点和边
    （`normcore explain batchnorm --shape 4x3 --graph FILE.png` 把同样的图写进文件）。每个框里
    是一个节点的公式和形状：统计量每个通道一个值，形状为 $(1, 3)$。从 $x$ 到 $\hat{x}$ 的几条
    路径各有自己的颜色和线型：直接穿过中心化的（实线）、经过均值的（虚线）、经过方差的
    （点划线，从 $x_c$ 出发）。反向传播把沿每条路径传回的梯度加起来；第 5 节给出这三份。

    <<figure font note>>
    """),
    code(r"""
    st.graph()
    """),
    md(r"""
    ## 5. The compact formula, and why it equals the staged one

    Collect the three paths from $x$ to $\hat{x}$ with $g = \bar{\hat{x}} = dy\,\gamma$, per channel,
    with means over the $n$ values:

    * **directly** through the centring: $r\, g$
    * **through the variance**: $2 x_c \cdot \frac{1}{n} \cdot \left(-\tfrac{1}{2} r^3 \sum_i g_i\, x_{c,i}\right)
      = -r\, \hat{x}\, \operatorname{mean}(g\, \hat{x})$
    * **through the mean**: $-\frac{1}{n}\sum_i \bar{x}_{c,i} = -r \operatorname{mean}(g)$; the
      variance path adds nothing here because $\sum_i x_{c,i} = 0$.

    Added up:

    $$\bar{x} = r\left(g - \operatorname{mean}(g) - \hat{x}\,\operatorname{mean}(g\,\hat{x})\right)$$

    which is what `BatchNorm1d.backward` computes in one line. The tape's shares are exactly
    these three terms:
    """, zh=r"""
    ## 5. 紧凑公式，以及它为什么等于分步的结果

    把从 $x$ 到 $\hat{x}$ 的三条路径合起来，记 $g = \bar{\hat{x}} = dy\,\gamma$，按通道计算，
    均值取自 $n$ 个值：

    * **直接**穿过中心化：$r\, g$
    * **经过方差**：$2 x_c \cdot \frac{1}{n} \cdot \left(-\tfrac{1}{2} r^3 \sum_i g_i\, x_{c,i}\right)
      = -r\, \hat{x}\, \operatorname{mean}(g\, \hat{x})$
    * **经过均值**：$-\frac{1}{n}\sum_i \bar{x}_{c,i} = -r \operatorname{mean}(g)$；方差那条路径
      在这里没有贡献，因为 $\sum_i x_{c,i} = 0$。

    加起来：

    $$\bar{x} = r\left(g - \operatorname{mean}(g) - \hat{x}\,\operatorname{mean}(g\,\hat{x})\right)$$

    `BatchNorm1d.backward` 用一行算的就是它。计算带上的三份正好是这三项：

    """),
    code(r"""
    t = st.tape
    g, r, x_hat = t["x_hat"].grad, t["rstd"].value, t["x_hat"].value

    direct = t["x_hat"].share("xc")            # x_hat -> xc, then xc -> x passes it on unchanged
    through_var = t["xc2"].share("xc")         # x_hat -> rstd -> var_eps -> var -> xc2 -> xc
    through_mean = t["mean"].share("x")        # ... -> xc -> mean -> x

    print(pad(tr("direct == r * g:"), 44), np.allclose(direct, r * g))
    print(pad(tr("through var == -r * x_hat * mean(g x_hat):"), 44), np.allclose(through_var, -r * x_hat * (g * x_hat).mean(axis=0)))
    print(pad(tr("through mean == -r * mean(g):"), 44), np.allclose(through_mean, -r * g.mean(axis=0)))

    bn.zero_grad()
    bn.forward(x)
    dx_compact = bn.backward(dy)
    print(pad(tr("sum of the three - BatchNorm1d.backward:"), 44), np.abs(direct + through_var + through_mean - dx_compact).max())
    """),
    md(r"""
    Two consequences you can see in the numbers: each column of $\bar{x}$ sums to zero (shifting
    a channel changes nothing after BatchNorm) and is orthogonal to $\hat{x}$ up to $\epsilon$
    (scaling a channel changes nothing either).
    """, zh=r"""
    从数字里能看出两个推论：$\bar{x}$ 的每一列之和为零（平移一个通道，BatchNorm 之后什么都
    不变），并且与 $\hat{x}$ 正交，只差 $\epsilon$（缩放一个通道也什么都不变）。

    """),
    code(r"""
    print(pad(tr("column sums of dx:"), 26), tidy(dx_compact.sum(axis=0)))
    print(pad(tr("column sums of dx * x_hat:"), 26), tidy((dx_compact * x_hat).sum(axis=0)))
    """),
    md(r"""
    **The Jacobian, next to LayerNorm's.** The LayerNorm notebook writes one row's Jacobian as
    $\partial \hat{x}_i / \partial x_j = \frac{r}{D}\left(D\,\delta_{ij} - 1 - \hat{x}_i \hat{x}_j\right)$,
    over the $D$ features of a sample. BatchNorm's is the same three-term matrix over the $n$
    values of a channel, down a column instead of along a row, and zero between channels:

    $$\frac{\partial \hat{x}_{ic}}{\partial x_{jc}} = \frac{r_c}{n}\left(n\,\delta_{ij} - 1 - \hat{x}_{ic}\,\hat{x}_{jc}\right),
      \qquad \frac{\partial \hat{x}_{ic}}{\partial x_{jd}} = 0 \quad (d \ne c)$$

    Each term is one route of the picture: $n\,\delta_{ij}$ the direct one, $-1$ the mean's,
    $-\hat{x}_{ic}\hat{x}_{jc}$ the variance's. So $\bar{x}_{:,c} = J_c\, g_{:,c}$, the compact
    formula above. One function builds both Jacobians; the check below compares it with central
    differences of `BatchNorm1d`'s forward and with the tape's $\bar{x}$. For an $(N, C)$ input
    BatchNorm in training, without affine parameters, is LayerNorm on the transpose. Only that
    far: BatchNorm's $\gamma, \beta$ are per column and its running statistics, used in
    evaluation, have no LayerNorm counterpart.
    """, zh=r"""
    **雅可比矩阵，和 LayerNorm 的放在一起看。** LayerNorm 的 notebook 把一行的雅可比矩阵写成
    $\partial \hat{x}_i / \partial x_j = \frac{r}{D}\left(D\,\delta_{ij} - 1 - \hat{x}_i \hat{x}_j\right)$，
    取自一个样本的 $D$ 个特征。BatchNorm 的是同样的三项矩阵，取自一个通道的 $n$ 个值，沿一列
    而不是沿一行，不同通道之间为零：

    $$\frac{\partial \hat{x}_{ic}}{\partial x_{jc}} = \frac{r_c}{n}\left(n\,\delta_{ij} - 1 - \hat{x}_{ic}\,\hat{x}_{jc}\right),
      \qquad \frac{\partial \hat{x}_{ic}}{\partial x_{jd}} = 0 \quad (d \ne c)$$

    每一项对应图中的一条路径：$n\,\delta_{ij}$ 是直接路径，$-1$ 是均值的，
    $-\hat{x}_{ic}\hat{x}_{jc}$ 是方差的。所以 $\bar{x}_{:,c} = J_c\, g_{:,c}$，正是上面的紧凑
    公式。两个雅可比矩阵由同一个函数构造；下面的检查把它与 `BatchNorm1d` 前向的中心差分、
    与计算带上的 $\bar{x}$ 比较。对 $(N, C)$ 输入，训练模式下不带仿射参数的 BatchNorm 就是
    作用在转置上的 LayerNorm。也仅止于此：BatchNorm 的 $\gamma, \beta$ 按列设置，而它在推理时
    使用的移动统计量，在 LayerNorm 里没有对应物。

    """),
    code(r"""
    def norm_jacobian(v_hat, r):     # d v_hat / d v of one standardised vector: a row or a column
        n = v_hat.size
        return r / n * (n * np.eye(n) - 1 - np.outer(v_hat, v_hat))

    plain = nc.BatchNorm1d(3, affine=False)            # x_hat itself: no gamma, no beta
    h, (N, C) = 1e-6, x.shape
    numerical = np.zeros((N, C, N, C))                 # d x_hat[i, c] / d x[j, d]
    for j in range(N):
        for d in range(C):
            step = np.zeros_like(x)
            step[j, d] = h
            numerical[:, :, j, d] = (plain(x + step) - plain(x - step)) / (2 * h)

    for c in range(C):
        J = norm_jacobian(x_hat[:, c], r[0, c])
        diff = np.abs(J - numerical[:, c, :, c]).max()
        print(tr("channel {c}: J - central differences {diff:.1e}; J g == the tape's dL/dx: {same}").format(
            c=c, diff=diff, same=np.allclose(J @ g[:, c], t["x"].grad[:, c])))
        assert diff < 1e-6 and np.allclose(J @ g[:, c], t["x"].grad[:, c])
    across = max(np.abs(numerical[:, c, :, d]).max() for c in range(C) for d in range(C) if d != c)
    print(tr("largest d x_hat / d x between two different channels:"), across)
    same = np.allclose(nc.LayerNorm(N, elementwise_affine=False)(x.T), x_hat.T)
    print(tr("BatchNorm on x == LayerNorm on x.T:"), same)
    assert across < 1e-6 and same
    """),
    question(r"""
    BatchNorm's Jacobian is zero between two different channels. Which entries of LayerNorm's
    Jacobian are zero, and what does each zero say about which values can influence which?
    """, r"""
    LayerNorm's is zero between two different samples (rows): a sample's output depends only on
    its own features, so a batch can have any size, even 1. BatchNorm's zeros are between
    channels; instead, every sample of a channel influences every other sample of it, which is
    why a training-mode output depends on the rest of the batch.
    """, zh=(r"""
    BatchNorm 的雅可比矩阵在两个不同通道之间为零。LayerNorm 的雅可比矩阵哪些元素为零？每个零
    说明了哪些值能影响哪些值？

    """, r"""
    LayerNorm 的雅可比矩阵在两个不同样本（行）之间为零：一个样本的输出只依赖它自己的特征，
    所以 batch 可以是任意大小，甚至是 1。BatchNorm 的零在通道之间；而在同一个通道内，每个样本都
    影响其他所有样本，所以训练模式下的输出依赖于 batch 里的其他样本。

    """)),
    md(r"""
    ## 6. The gradient check

    `nc.gradcheck` compares every analytic gradient (of $x$, $\gamma$ and $\beta$) with central
    differences, in float64 and with a random upstream gradient. It checks a copy, so the
    layer's running statistics are left alone. In evaluation the running statistics are
    constants and the backward is just $\bar{x} = g\, r$; that is checked too.
    """, zh=r"""
    ## 6. 梯度检查

    `nc.gradcheck` 用中心差分检查每一个解析梯度（$x$、$\gamma$ 和 $\beta$ 的），在 float64 下，
    用随机的上游梯度。它检查的是一份副本，所以不会动这一层的移动统计量。推理时移动统计量是
    常数，反向传播就只是 $\bar{x} = g\, r$；这个也一并检查。

    """),
    code(r"""
    report = nc.gradcheck(bn, x)
    print(report)
    assert report.passed

    print(nc.gradcheck(bn.eval(), x))
    bn.train();
    """),
    question(r"""
    In evaluation the backward is just $\bar{x} = g\, r$. Which routes of the picture are gone,
    and why?
    """, r"""
    Both the route through the mean and the route through the variance. In evaluation $\mu$ and
    $\sigma^2$ are the running statistics, constants that do not depend on this batch's $x$, so
    only the direct route is left, with $r = 1/\sqrt{\text{running var} + \epsilon}$.
    """, zh=(r"""
    推理时反向传播只是 $\bar{x} = g\, r$。图中哪些路径不见了？为什么？

    """, r"""
    经过均值的路径和经过方差的路径都不见了。推理时 $\mu$ 和 $\sigma^2$ 是移动统计量，是与这个
    batch 的 $x$ 无关的常数，所以只剩下直接路径，其中 $r = 1/\sqrt{\text{running var} + \epsilon}$。

    """)),
    md(r"""
    **Why a random upstream gradient?** With $L = \sum y$ (every $dy = 1$) the input gradient of
    a norm is exactly zero: $g$ is constant per channel, so $g - \operatorname{mean}(g) = 0$ and
    $\operatorname{mean}(g\hat{x}) = 0$. A broken backward that returns zeros would pass.
    """, zh=r"""
    **为什么要用随机的上游梯度？** 如果 $L = \sum y$（每个 $dy$ 都是 1），归一化层的输入梯度
    恰好为零：$g$ 在每个通道内是常数，所以 $g - \operatorname{mean}(g) = 0$ 且
    $\operatorname{mean}(g\hat{x}) = 0$。一个只返回零的错误反向也能通过检查。

    """),
    code(r"""
    bn.forward(x)
    print(tidy(bn.backward(np.ones_like(x))))
    """),
    md(r"""
    ## 7. Pitfalls

    ### Momentum: which side does it weight?

    In normcore and PyTorch `momentum=0.1` is the weight of the **new** batch:
    `running = 0.9 * running + 0.1 * batch`. Other frameworks (and some write-ups) use the
    opposite convention, `running = momentum * running + (1 - momentum) * batch` with
    `momentum=0.9` or `0.99`. Both are fine; mixing them is not. Plugging `0.1` into the second
    formula turns the running mean into little more than the last batch's mean.
    """, zh=r"""
    ## 7. 易错点

    ### 动量是谁的权重？

    在 normcore 和 PyTorch 里，`momentum=0.1` 是**新** batch 的权重：
    `running = 0.9 * running + 0.1 * batch`。别的框架（以及一些文章）用相反的约定，
    `running = momentum * running + (1 - momentum) * batch`，取 `momentum=0.9` 或 `0.99`。两种
    都没问题，混用就不行了。把 `0.1` 代进第二个公式，移动均值就几乎只剩最后一个 batch 的均值。

    """),
    code(r"""
    rng_stream = np.random.default_rng(1)
    layer = nc.BatchNorm1d(1)
    ours, flipped, batch_means = [], [], []
    r_flip = 0.0
    for step in range(60):
        batch = rng_stream.normal(5.0, 2.0, size=(8, 1))
        layer(batch)
        r_flip = 0.1 * r_flip + 0.9 * batch.mean()     # momentum=0.1 read as the weight of the past
        ours.append(layer.running_mean[0]); flipped.append(r_flip); batch_means.append(batch.mean())

    with figure_words(tr) as say:   # the figure's words: Chinese when a Chinese font is installed
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.plot(batch_means, ".", color="0.6", label=say("batch mean"))
        ax.plot(ours, label="(1 - m) running + m batch, m = 0.1")
        ax.plot(flipped, label=say("{rule} (mixed up)").format(rule="m running + (1 - m) batch, m = 0.1"))
        ax.axhline(5.0, color="k", lw=0.8)
        ax.set_xlabel(say("training step")); ax.set_ylabel(say("running mean")); ax.legend(fontsize=8)
        plt.show()
    print(tr("spread over the last 30 steps: ours {ours:.3f}, mixed up {mixed:.3f}").format(
        ours=np.std(ours[30:]), mixed=np.std(flipped[30:])))
    """),
    md(r"""
    ### Biased vs unbiased variance

    The batch is normalised with the **biased** variance (divide by $n$); the running variance
    stores the **unbiased** one (divide by $n - 1$), because it estimates the population
    variance. A hand-written layer that calls `torch.var(x)` (unbiased by default) to normalise,
    or NumPy's `x.var()` (biased) for the running estimate, is off by a factor $n/(n-1)$: large
    for small batches.
    """, zh=r"""
    ### 有偏方差与无偏方差

    batch 用**有偏**方差归一化（除以 $n$）；移动方差存的是**无偏**方差（除以 $n - 1$），因为
    它估计的是总体方差。手写的层如果用 `torch.var(x)`（默认无偏）来归一化，或者用 NumPy 的
    `x.var()`（有偏）来算移动估计，就差一个因子 $n/(n-1)$：batch 越小，差得越多。

    """),
    code(r"""
    layer = nc.BatchNorm1d(3, momentum=1.0)          # momentum 1: running = this batch
    layer(x)
    print(pad(tr("biased") + " x.var(axis=0):", 32), x.var(axis=0))
    print(pad(tr("unbiased") + " x.var(axis=0, ddof=1):", 32), x.var(axis=0, ddof=1))
    print(pad("running_var:", 32), layer.running_var)
    wrong = (x - x.mean(0)) / np.sqrt(x.var(axis=0, ddof=1) + 1e-5)
    print(tr("x_hat with the unbiased variance is too small by sqrt(3/4):"), (wrong / ((x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)))[0])
    """),
    md(r"""
    ### Where eps goes

    $\epsilon$ belongs **inside** the square root: $r = 1/\sqrt{\sigma^2 + \epsilon}$. Written as
    $1/(\sqrt{\sigma^2} + \epsilon)$ it is a different layer: the outputs differ when the variance
    is small, and for a constant channel ($\sigma^2 = 0$) the derivative of $\sqrt{\sigma^2}$ is
    infinite, so the backward produces `inf`/`nan`, where $\sqrt{\sigma^2 + \epsilon}$ gives the
    finite $1/\sqrt{\epsilon} \approx 316$.
    """, zh=r"""
    ### eps 放在哪里

    $\epsilon$ 应该放在平方根**里面**：$r = 1/\sqrt{\sigma^2 + \epsilon}$。写成
    $1/(\sqrt{\sigma^2} + \epsilon)$ 就是另一个层了：方差很小时输出不同；对于常数通道
    （$\sigma^2 = 0$），$\sqrt{\sigma^2}$ 的导数是无穷大，反向传播得到 `inf`/`nan`，而
    $\sqrt{\sigma^2 + \epsilon}$ 给出的是有限的 $1/\sqrt{\epsilon} \approx 316$。

    """),
    code(r"""
    eps = 1e-5
    for var in [4.0, 1e-4, 1e-6, 0.0]:
        inside, outside = 1 / np.sqrt(var + eps), 1 / (np.sqrt(var) + eps)
        with np.errstate(divide="ignore"):
            slope_outside = -0.5 / np.sqrt(var) / (np.sqrt(var) + eps) ** 2   # d outside / d var
        print(f"var={var:<7g} 1/sqrt(var+eps)={inside:<10.4g} 1/(sqrt(var)+eps)={outside:<10.4g} "
              + tr("d/dvar of the second: {slope:.3g}").format(slope=slope_outside))
    """),
    md(r"""
    ### The running variance is a variance

    At evaluation the denominator is $\sqrt{\text{running var} + \epsilon}$. Squaring the running
    variance (as if it were a standard deviation) shrinks or inflates every output. Train a layer
    on data with variance 4, then evaluate on the same distribution: the right formula gives
    outputs with spread about 1, the squared one about 0.5.
    """, zh=r"""
    ### 移动方差就是方差

    推理时分母是 $\sqrt{\text{running var} + \epsilon}$。把移动方差再平方（当成标准差来用），
    每个输出都会被缩小或放大。在方差为 4 的数据上训练一个层，再在同一分布上推理：正确的公式
    给出的输出离散程度约为 1，平方后的约为 0.5。

    """),
    code(r"""
    stream = np.random.default_rng(2)
    layer = nc.BatchNorm1d(1, affine=False)
    for _ in range(200):
        layer(stream.normal(1.0, 2.0, size=(32, 1)))
    test = stream.normal(1.0, 2.0, size=(1000, 1))
    right = layer.eval()(test)
    squared = (test - layer.running_mean) / np.sqrt(layer.running_var ** 2 + layer.eps)
    print(tr("running_var {var:.3f}; output std: right {right:.3f}, squared running_var {squared:.3f}").format(
        var=layer.running_var[0], right=right.std(), squared=squared.std()))
    """),
    md(r"""
    ### Training vs evaluation

    In training a sample's output depends on the other samples of its batch; in evaluation it
    does not. Forgetting `model.eval()` makes predictions depend on what they are batched with,
    and a batch of one cannot be normalised at all.
    """, zh=r"""
    ### 训练与推理

    训练时，一个样本的输出依赖于同一 batch 里的其他样本；推理时则不依赖。忘了调用
    `model.eval()`，预测结果就取决于它和哪些样本放在同一个 batch 里；而只有一个样本的 batch 根本
    没法归一化。

    """),
    code(r"""
    sample = x[:1]
    layer = nc.BatchNorm1d(3)
    for _ in range(20):
        layer(rng.normal(3.0, 2.0, size=(16, 3)))
    print(pad(tr("train, batched with x[1:3]:"), 30), layer(np.vstack([sample, x[1:3]]))[0])
    print(pad(tr("train, batched with x[2:4]:"), 30), layer(np.vstack([sample, x[2:4]]))[0])
    layer.eval()
    print(pad(tr("eval, either batch:"), 30), layer(np.vstack([sample, x[1:3]]))[0], layer(np.vstack([sample, x[2:4]]))[0])
    try:
        layer.train()(sample)
    except ValueError as err:
        print(tr("train, batch of one:"), err)
    """),
    md(r"""
    ## 8. Figures

    How noisy are the batch statistics? The mean of a batch of $N$ samples from a unit-variance
    feature has a standard deviation of $1/\sqrt{N}$, so a small batch normalises each sample
    with a noticeably wrong mean and variance. (The experiments in `figures/` go further; see the
    README.)
    """, zh=r"""
    ## 8. 图

    batch 统计量有多嘈杂？从一个方差为 1 的特征里取 $N$ 个样本组成 batch，batch 均值的标准差是
    $1/\sqrt{N}$，所以小 batch 会用明显偏离的均值和方差去归一化每个样本。（`figures/` 里的实验
    走得更远；见 README。）

    """),
    code(r"""
    sizes = [2, 4, 8, 16, 32, 64, 128]
    draws = np.random.default_rng(3).standard_normal((2000, max(sizes)))
    spread_mean = [draws[:, :n].mean(axis=1).std() for n in sizes]
    spread_var = [draws[:, :n].var(axis=1).std() for n in sizes]
    with figure_words(tr) as say:
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.loglog(sizes, spread_mean, "o-", label=say("std of the batch mean"))
        ax.loglog(sizes, spread_var, "s-", label=say("std of the batch variance"))
        ax.loglog(sizes, 1 / np.sqrt(sizes), "k:", label="1 / sqrt(N)")
        ax.set_xlabel(say("batch size N")); ax.legend(fontsize=8)
        plt.show()
    """),
    md(r"""
    **From the experiments** (`normcore figures` draws them; each is backed by a test that
    asserts its claim on the measured numbers).

    *Why normalise at all.* A deep tanh network with large weights: without a norm most units sit
    in the flat tails of tanh, and the weight gradients *explode* toward the input, growing about
    threefold per layer to seven orders of magnitude above the last layer's. The saturated units
    pass almost nothing back (tanh' < 0.02), but each layer's weights, at 16 times the usual
    scale, multiply the gradient by more than the small slopes take away. With BatchNorm (or
    LayerNorm) before every activation almost no unit saturates and every layer gets gradients of
    about the same size.

    ![Saturated units and gradient norm per layer, no norm vs BatchNorm vs LayerNorm](../figures/saturation_gradients.png)

    *Internal covariate shift* (Ioffe & Szegedy 2015, Fig. 1): the 15th, 50th and 85th
    percentiles of one last-layer sigmoid input over training, both panels on the same axis,
    taken in training mode (BatchNorm with batch statistics, as a training step sees them).
    They drift with and without BatchNorm: measured over all 100 units and the whole run, in
    units of the distribution's width, BatchNorm's percentiles end up about a third of a width
    from where they were (0.37), the plain network's about half (0.51, much of it in its first
    steps). What BatchNorm removes is most of the jitter from one checkpoint to the next (83%).
    Do not read the figure as "BatchNorm works by stopping covariate
    shift": Santurkar et al. (2018) trained networks with noise added after every BatchNorm,
    so that the distributions shifted more than without BatchNorm, and they trained about as
    well; they trace BatchNorm's benefit to a smoother loss landscape instead.

    ![Percentiles of a last-layer sigmoid input over training, with and without BatchNorm](../figures/covariate_shift_percentiles.png)

    *Batch size* (Wu & He 2018): at a fixed budget of samples, BatchNorm's error climbs as the
    batch shrinks, and its training-mode and evaluation-mode outputs part ways; GroupNorm and
    LayerNorm do not care.

    ![Error against batch size for BatchNorm, GroupNorm and LayerNorm](../figures/batch_size_error.png)

    *Running statistics* under momentum 0.1, the mixed-up 0.9, and `None` (the cumulative
    average): 0.1 settles within about 30 batches, 0.9 stays as noisy as a single batch, `None`
    keeps improving like an average of all batches seen.

    ![Error of running_mean and running_var against batches seen, for three momenta](../figures/running_stats_convergence.png)
    """, zh=r"""
    **来自实验**（由 `normcore figures` 画出；每一张都有一个测试，在测得的数字上断言它的结论）。

    *为什么要归一化。* 一个权重很大的深层 tanh 网络：没有归一化层时，大多数单元落在 tanh 平坦
    的两端，而权重梯度朝输入方向*爆炸*：每往前一层大约增长三倍，到最前面比最后一层高出七个数量级。
    饱和的单元几乎不往回传梯度（tanh' < 0.02），但每一层的权重是通常尺度的 16 倍，它们对梯度的
    放大超过了那些小斜率造成的衰减。在每个激活函数之前加上 BatchNorm（或 LayerNorm），几乎没有
    单元饱和，每一层得到的梯度大小都差不多。

    ![每层的饱和单元比例和梯度范数：无归一化、BatchNorm、LayerNorm](../figures/saturation_gradients.png)

    *内部协变量偏移*（Ioffe & Szegedy 2015，图 1）：最后一层某个 sigmoid 输入在训练过程中的
    第 15、50、85 百分位数，两幅子图用同样的纵轴，都在训练模式下取得（BatchNorm 用 batch 统计量，
    就像一个训练步看到的那样）。有没有 BatchNorm，它们都在漂移：在全部 100 个单元和整个训练
    过程上测量，以分布宽度为单位，BatchNorm 的百分位数最后离起点约三分之一个宽度（0.37），
    不加归一化的网络约一半（0.51，大部分发生在最初几步）。BatchNorm 消除的是相邻两个检查点
    之间的大部分抖动（83%）。不要把这张图理解成“BatchNorm 靠阻止协变量偏移起作用”：
    Santurkar 等人（2018）在每个 BatchNorm 之后加入噪声，让分布的偏移比不用 BatchNorm 时还大，
    网络照样训练得差不多好；他们把 BatchNorm 的好处归因于更平滑的损失曲面。

    ![有无 BatchNorm 时，最后一层 sigmoid 输入的百分位数在训练中的变化](../figures/covariate_shift_percentiles.png)

    *批次大小*（Wu & He 2018）：在固定的样本预算下，batch 越小，BatchNorm 的误差越高，它在训练
    模式和推理模式下的输出也越来越不一致；GroupNorm 和 LayerNorm 不受影响。

    ![BatchNorm、GroupNorm 和 LayerNorm 的误差随批次大小的变化](../figures/batch_size_error.png)

    *移动统计量*，分别用动量 0.1、弄反的 0.9 和 `None`（累积平均）：0.1 大约 30 个 batch 内就
    稳定下来，0.9 始终和单个 batch 一样嘈杂，`None` 像对所有已见 batch 取平均那样持续变好。

    ![三种动量下，running_mean 和 running_var 的误差随已处理 batch 数的变化](../figures/running_stats_convergence.png)

    """),
    md(r"""
    *The loss landscape* (Santurkar et al. 2018): along the gradient of an 8-layer ReLU MLP, at
    the same learning rate, the gradient changes about three times less with BatchNorm and the
    loss varies about a quarter less: a smoother landscape along the direction training takes.

    ![Loss and gradient change along the gradient, with and without BatchNorm](../figures/loss_landscape.png)

    *Batch noise*: with BatchNorm's statistics taken over ghost batches of 64 down to 4 samples
    (the SGD batch fixed at 64), the noise shows as a growing gap between the training loss in
    training and in evaluation mode, but at this scale it does not regularise: no variant
    generalises as well as the same MLP without a norm.

    ![Accuracy and training loss against the ghost-batch size](../figures/batch_noise.png)
    """, zh=r"""
    *损失曲面*（Santurkar 等人 2018）：沿一个 8 层 ReLU MLP 的梯度方向，在相同的学习率下，
    有 BatchNorm 时梯度的变化只有约三分之一，损失的变化少了约四分之一：沿训练所走的方向，
    曲面更平滑。

    ![有无 BatchNorm 时，沿梯度方向的损失和梯度变化](../figures/loss_landscape.png)

    *batch 噪声*：BatchNorm 的统计量取自 64 个到 4 个样本的幽灵 batch（SGD 的 batch 固定为 64），
    噪声表现为训练损失在训练模式和推理模式下的差距越来越大；但在这个规模上它没有正则化作用：
    没有哪个变体的泛化比同一个不加归一化层的 MLP 更好。

    ![准确率和训练损失随幽灵批次大小的变化](../figures/batch_noise.png)

    """),
    md(r"""
    ## 9. Why $\gamma$ and $\beta$: the layer can still be the identity

    Standardising looks like a loss: after it every channel has mean 0 and variance 1, so the
    next layer can no longer be handed a channel with another offset or spread (a sigmoid, for
    instance, would only ever see its near-linear middle). The learned $\gamma$ and $\beta$ give
    that back. With $\gamma_c = \sqrt{\sigma_c^2 + \epsilon}$ and $\beta_c = \mu_c$,

    $$y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\,\sqrt{\sigma^2 + \epsilon} + \mu = x,$$

    so BatchNorm with its affine parameters can represent the identity: whatever the network
    without the norm computes, the network with it can compute too. Normalising changes how
    the network is parametrised, and so how gradient descent moves through it, not what it can
    express. Measured on a batch whose channels have very different means and spreads:
    """, zh=r"""
    ## 9. 为什么要有 $\gamma$ 和 $\beta$：这一层仍然可以是恒等映射

    标准化看起来会丢东西：之后每个通道都是均值 0、方差 1，下一层就再也拿不到别的偏移或离散
    程度的通道了（比如 sigmoid 只会看到它接近线性的中间段）。可学习的 $\gamma$ 和 $\beta$ 把这些
    还了回来。取 $\gamma_c = \sqrt{\sigma_c^2 + \epsilon}$、$\beta_c = \mu_c$，

    $$y = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\,\sqrt{\sigma^2 + \epsilon} + \mu = x,$$

    所以带仿射参数的 BatchNorm 可以表示恒等映射：不加归一化层的网络能算的，加了它的网络也能
    算。归一化改变的是网络的参数化方式，从而改变梯度下降在其中的走法，而不是它能表达什么。
    在一个各通道均值和离散程度相差很大的 batch 上测量：

    """),
    code(r"""
    batch = np.random.default_rng(9).normal(loc=[-40.0, 0.5, 7.0, 25.0], scale=[0.01, 1.0, 5.0, 30.0], size=(64, 4))
    identity = nc.BatchNorm1d(4)
    identity.gamma.data[...] = np.sqrt(batch.var(axis=0) + identity.eps)   # undo the division
    identity.beta.data[...] = batch.mean(axis=0)                           # undo the centring
    identity_error = np.abs(identity(batch) - batch).max()
    print(tr("training mode, gamma = sqrt(var + eps), beta = mean: max |y - x| = {error:.1e}").format(
        error=identity_error))

    identity.eval()                                                        # running statistics now
    identity.gamma.data[...] = np.sqrt(identity.running_var + identity.eps)
    identity.beta.data[...] = identity.running_mean
    unseen = np.random.default_rng(10).normal(size=(5, 4)) * 100
    identity_error_eval = np.abs(identity(unseen) - unseen).max()
    print(tr("evaluation mode, from the running statistics, on new data: max |y - x| = {error:.1e}").format(
        error=identity_error_eval))
    identity.train();
    """),
    md(r"""
    Both are rounding errors of float64: the identity is exact. Two limits of the argument:

    * In training, $\mu$ and $\sigma^2$ are those of the current batch, so a fixed $\gamma$
      and $\beta$ give the identity exactly only for the batch they were set from; on another
      batch of 64 from the same distribution the output is off by a fraction of each
      channel's standard deviation (0.3 to 0.6 of it at worst, below). The argument is about
      what the layer *can* express, not a claim that training finds the identity.
    * It needs $\gamma$ and $\beta$ to have one entry per normalised group. BatchNorm
      normalises per channel and has one $\gamma_c$ per channel, so it works. LayerNorm
      normalises each *sample* but its $\gamma$ and $\beta$ are per *feature*: they can undo
      one sample's statistics, not every sample's at once. What LayerNorm removes (each
      sample's own offset and scale) stays removed; that is the invariance it is built for.
    """, zh=r"""
    两者都是 float64 的舍入误差：恒等映射是精确的。这个论证有两个限度：

    * 训练时，$\mu$ 和 $\sigma^2$ 是当前 batch 的，所以固定的 $\gamma$ 和 $\beta$ 只对设定它们的
      那个 batch 精确地给出恒等映射；换成同一分布的另一个 64 样本 batch，输出与输入相差各通道标准差
      的一部分（下面各通道最坏的差距在 0.3 到 0.6 个标准差之间）。这个论证说的是这一层*能*表达什么，而不是
      说训练会找到恒等映射。
    * 它要求 $\gamma$ 和 $\beta$ 在每个被归一化的组上各有一个值。BatchNorm 按通道归一化，每个
      通道有一个 $\gamma_c$，所以成立。LayerNorm 对每个*样本*归一化，但它的 $\gamma$ 和 $\beta$
      是按*特征*设置的：它们能抵消一个样本的统计量，却不能同时抵消所有样本的。LayerNorm 去掉
      的东西（每个样本自己的偏移和尺度）再也补不回来；这正是它要的不变性。

    """),
    code(r"""
    identity.gamma.data[...] = np.sqrt(batch.var(axis=0) + identity.eps)   # set from `batch` again
    identity.beta.data[...] = batch.mean(axis=0)
    other_batch = np.random.default_rng(11).normal(loc=[-40.0, 0.5, 7.0, 25.0], scale=[0.01, 1.0, 5.0, 30.0], size=(64, 4))
    other_batch_change = np.abs(identity(other_batch) - other_batch).max(axis=0) / other_batch.std(axis=0)
    print(tr("another batch, |y - x| / std(x) per channel:"), other_batch_change)

    rows = np.random.default_rng(12).normal(size=(3, 4)) * [[1.0], [5.0], [0.2]] + [[0.0], [10.0], [-3.0]]
    ln = nc.LayerNorm(4)
    ln.gamma.data[...] = np.sqrt(rows[0].var() + ln.eps)                  # row 0's statistics
    ln.beta.data[...] = rows[0].mean()
    layernorm_row_error = np.abs(ln(rows) - rows).max(axis=1)
    print(tr("LayerNorm set from row 0, max |y - x| per row:"), layernorm_row_error)
    """),
    md(r"""
    LayerNorm with $\gamma$ and $\beta$ set from row 0 gives row 0 back exactly and misses
    the other two rows, which have another offset and spread, by about 17 and 4.
    """, zh=r"""
    用第 0 行的统计量设定 $\gamma$ 和 $\beta$ 的 LayerNorm，精确地还原了第 0 行，而另外两行的
    偏移和离散程度不同，分别差了约 17 和 4。

    """),
    md(r"""
    ## Where next

    * `normcore explain batchnorm --shape 4x3` prints the step-through above in a terminal.
    * The LayerNorm notebook does the same along the other axis; GroupNorm and InstanceNorm sit
      in between.
    """, zh=r"""
    ## 接下来

    * `normcore --lang zh explain batchnorm --shape 4x3` 在终端里打印上面的逐步推导。
    * LayerNorm 的 notebook 沿另一个轴做同样的事；GroupNorm 和 InstanceNorm 介于两者之间。

    """),
]
