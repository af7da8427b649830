"""Source of notebooks/interview_practice.ipynb and of interview_practice_zh.ipynb, the same
notebook with each Markdown cell's Chinese text (``zh``): python notebooks/build.py
interview_practice interview_practice_zh.

It is one piece, though long: it holds nothing but the notebook's cells in order, each helper
defined in the code cell that shows it, so the file reads as the notebook does (one source per
notebook: helpers moved out would no longer be shown).
"""

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
    """, zh=r"""
    # 面试练习：手撕归一化层，前向加反向

    “用 NumPy 手写 LayerNorm（或 BatchNorm、RMSNorm），前向加反向”是一道标准的面试题。它考你
    记不记得公式、缓存的东西对不对、形状有没有写错、能不能推出由三项组成的反向，以及能不能用
    梯度检查*证明*它是对的。这本 notebook 既是一份写好的答案，也是一套练习：

    1. 一张表讲清直觉：在哪个轴上、算哪些统计量
    2. 要烂熟于心的公式
    3. 十分钟从零写出 LayerNorm 的前向
    4. 用逐节点的计算图推导它的反向
    5. 紧凑公式，以及它为什么等于分步的结果
    6. 证明它正确的梯度检查
    7. 易错点：经典错误，以及每个错误在数字上留下的“指纹”
    8. 图：把这些指纹放在一起看
    9. 归一化层之外：softmax、交叉熵、注意力和残差块

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
    ## 1. Intuition: which axis

    The first question to settle out loud, with the class's test scores (rows are students,
    columns subjects):

    | norm | statistics over | scores analogy | batch needed? | running stats? |
    |---|---|---|---|---|
    | BatchNorm | the batch (and spatial) axes, per channel | each subject across the class | yes | yes, for eval |
    | LayerNorm | the feature axes, per sample | each student across their subjects | no | no |
    | RMSNorm | the feature axes, per sample, no mean | each student's scores divided by their size | no | no |
    | GroupNorm | groups of channels, per sample | each student within sciences, within humanities | no | no |
    """, zh=r"""
    ## 1. 直觉：在哪个轴上

    面试时先把这个问题说清楚。用全班的考试成绩来想（行是学生，列是科目）：

    | 归一化层 | 统计量取自 | 成绩表类比 | 需要一个 batch？ | 移动统计量？ |
    |---|---|---|---|---|
    | BatchNorm | batch（及空间）轴，每个通道各算一份 | 竖着看：每一科在全班里比 | 需要 | 有，推理时用 |
    | LayerNorm | 特征轴，每个样本各算一份 | 横着看：每个学生的各科自己比 | 不需要 | 没有 |
    | RMSNorm | 特征轴，每个样本各算一份，不减均值 | 每个学生的成绩除以它们的均方根 | 不需要 | 没有 |
    | GroupNorm | 每个样本内的一组通道 | 每个学生在理科内、文科内分别比 | 不需要 | 没有 |
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
    """, zh=r"""
    ## 2. 公式

    记 $g = dy\,\gamma$，均值都在被归一化的轴上取，$r = 1/\sqrt{\operatorname{var} + \epsilon}$：

    | | 前向 | 对 x 的反向 |
    |---|---|---|
    | LayerNorm / BatchNorm（训练） | $\hat{x} = (x - \mu)\,r$，$\ y = \gamma\hat{x} + \beta$ | $\bar{x} = r\,(g - \operatorname{mean}(g) - \hat{x}\operatorname{mean}(g\hat{x}))$ |
    | RMSNorm | $\hat{x} = x\,r$，$r = 1/\sqrt{\operatorname{mean}(x^2) + \epsilon}$，$\ y = \gamma\hat{x}$ | $\bar{x} = r\,(g - \hat{x}\operatorname{mean}(g\hat{x}))$ |
    | BatchNorm（推理） | $\hat{x} = (x - \text{running mean}) / \sqrt{\text{running var} + \epsilon}$ | $\bar{x} = g / \sqrt{\text{running var} + \epsilon}$ |

    对所有这些层都有 $\bar{\gamma} = \sum dy\,\hat{x}$、$\bar{\beta} = \sum dy$，求和遍及 $\gamma$
    被广播的每一个轴。还要说出来：归一化用有偏方差；BatchNorm 的移动方差用无偏方差；$\epsilon$
    在根号里面；`momentum` 是新 batch 统计量的权重（PyTorch 的约定）。

    ## 3. 十分钟写出 LayerNorm 的前向

    下面的答案采用 `normcore practice` 打分时要求的形式（构造函数和属性与 `torch.nn.LayerNorm`
    相同）：两个参数，前向只缓存 $\hat{x}$ 和 $r$，反向的每一行都注明形状。面试时只用 NumPy 写；
    这里让它继承 `nc.Module`，好让 `nc.gradcheck` 能逐项检查它。类属性 `mistake` 可以换上某个
    经典失误，供第 7 节使用；`None` 表示正确的层。
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
    print(tr("forward, largest difference from nc.LayerNorm:"), np.abs(mine(x) - ref(x)).max())
    """),
    md(r"""
    ## 4. The backward, derived with the tape

    If the compact formula does not come to mind, derive it: write the forward as elementary
    steps and take each step's local derivative, last step first. The table below is what
    `normcore.derivations` builds for LayerNorm; `normcore explain layernorm` prints it with
    numbers.

    <<tape layernorm 3x4>>

    Following the gradient into $x$ along its three paths:
    """, zh=r"""
    ## 4. 用计算图推导反向

    紧凑公式想不起来时，就推导：把前向拆成基本运算，从最后一步往前，逐步求每一步的局部导数。
    下表就是 `normcore.derivations` 为 LayerNorm 建的计算图；`normcore --lang zh explain layernorm`
    会带着数字把它打印出来。

    <<tape layernorm 3x4>>

    沿三条路径把梯度传回 $x$：
    """),
    code(r"""
    dy = rng.standard_normal(x.shape)
    st = step_through("layernorm", x, gamma=mine.gamma.data, beta=mine.beta.data, dy=dy)
    t = st.tape
    for node, to in [("x_hat", "xc"), ("xc2", "xc"), ("xc", "x"), ("mean", "x")]:
        print(pad(tr("share {node} -> {to}").format(node=node, to=to), 22), t[node].share(to)[0])
    print(pad(tr("dL/dx, row 0:"), 22), t["x"].grad[0])
    """),
    md(r"""
    ## 5. The compact formula, and why it equals the staged one

    Direct path $r g$; through the variance $-r\hat{x}\operatorname{mean}(g\hat{x})$; through the
    mean $-r\operatorname{mean}(g)$ (the variance path contributes nothing there, since the
    centred values sum to zero). Their sum is the one-line backward of our `LayerNorm`. The
    step-through checks the staged gradient against `nc.LayerNorm.backward` node by node:
    """, zh=r"""
    ## 5. 紧凑公式，以及它为什么等于分步的结果

    直接路径给出 $r g$；经过方差的路径给出 $-r\hat{x}\operatorname{mean}(g\hat{x})$；经过均值的
    路径给出 $-r\operatorname{mean}(g)$（方差那条路径在这里没有贡献，因为中心化后的值之和为零）。
    三者相加，就是我们 `LayerNorm` 那一行反向。逐节点推导会把分步得到的梯度和
    `nc.LayerNorm.backward` 一个节点一个节点地对照：
    """),
    code(r"""
    print(st.text(parts=("checks",)))
    mine.zero_grad(); mine(x)
    print("\n" + tr("our LayerNorm.backward vs the tape:"), np.abs(mine.backward(dy) - t["x"].grad).max())
    """),
    md(r"""
    ## 6. The gradient check that proves it

    In an interview, finish with this: central differences in float64, a **random** upstream
    gradient and random $\gamma$ and $\beta$. With $dy = 1$ and $\gamma$ at its initial ones,
    $g = dy\,\gamma$ is constant along the row, both correction terms cancel it, and the input
    gradient is exactly zero: a backward that returns zeros would pass.
    """, zh=r"""
    ## 6. 证明它正确的梯度检查

    面试的最后用它收尾：float64 下的中心差分，**随机的**上游梯度，随机的 $\gamma$ 和 $\beta$。
    如果 $dy = 1$ 且 $\gamma$ 还是初始的全 1，那么 $g = dy\,\gamma$ 沿一行是常数，两个修正项正好
    把它抵消，输入梯度恰好为零：一个只返回零的反向也能通过。
    """),
    code(r"""
    report = nc.gradcheck(mine, x)
    print(report)
    assert report.passed
    fresh = LayerNorm(4)                       # gamma = 1, beta = 0
    fresh(x)
    print("\n" + tr("with dy = ones and gamma = ones, the input gradient is") + "\n", tidy(fresh.backward(np.ones_like(x))))
    """),
    question(r"""
    Keep $dy = 1$ but give $\gamma$ random values. Is the check of $\bar{x}$ meaningful now?
    """, r"""
    Yes, in part: $g = dy\,\gamma = \gamma$ varies along the row, so neither
    $g - \operatorname{mean}(g)$ nor $\hat{x}\operatorname{mean}(g\hat{x})$ cancels and
    $\bar{x}$ is not zero. But every row then gets the same $g$; a random $dy$ tests more, at
    no cost.
    """, zh=(r"""
    保持 $dy = 1$，但给 $\gamma$ 随机的值。现在对 $\bar{x}$ 的检查有意义吗？
    """, r"""
    部分有意义：$g = dy\,\gamma = \gamma$ 沿一行在变化，所以 $g - \operatorname{mean}(g)$ 和
    $\hat{x}\operatorname{mean}(g\hat{x})$ 都不会抵消，$\bar{x}$ 不为零。但每一行拿到的 $g$
    都相同；随机的 $dy$ 能测得更多，而且不费任何代价。
    """)),
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
    """, zh=r"""
    ## 7. 易错点：每个错误都留下指纹

    每种经典失误都会让不同的检查失败。看*哪些*检查失败，不读代码就能猜出是哪个错误：

    * 前向错了：统计量上的错误（用了无偏方差、eps 放在根号外）；
    * 前向对、$\bar{x}$ 错、$\bar{\gamma}, \bar{\beta}$ 对：输入的反向少了一项；如果
      $\sum_j \bar{x}_j \ne 0$，少掉的项里有均值那一项；
    * $\bar{\gamma}$ 错：求和的方式错了（在样本上取了平均而不是求和）。

    `normcore practice` 把这种推断变成诊断：它把你的类和 normcore 的层放在同样的输入上运行
    （秩 2 到 4、float32、单个样本、常数行、极小的方差），某项检查失败时，就把每个已收录的错误
    在同样的输入上跑一遍，点出数字和你一致的那一个。它从不读你的源代码。下表最后一列就是它的
    结论。没有收录的失误（这里是把 x_hat 那一项加上而不是减去）只会失败，不被点名，只给提示：
    只有某个已收录的错误能给出你的数字时，评分器才会点名。
    """),
    code(r"""
    from normcore.practice import EXERCISES, grade

    MISTAKES = [None, N_("unbiased variance"), N_("eps outside the root"), N_("statistics held constant"),
                N_("no x_hat term"), N_("no mean term"), N_("dgamma averaged"), N_("x_hat term added")]

    def shown(mistake):   # a mistake's name in the notebook's language; None is the correct layer
        return tr(mistake) if mistake else tr("correct")

    def with_mistake(mistake):
        return type("LayerNorm", (LayerNorm,), {"mistake": mistake})

    def fingerprint(mistake, x, seed=0):
        # relative errors of the forward and of the gradients of x, gamma and beta
        layer = with_mistake(mistake)(x.shape[-1])
        layer.gamma.data[...], layer.beta.data[...] = ref.gamma.data, ref.beta.data
        report = nc.gradcheck(layer, x, seed=seed)
        return [nc.rel_error(layer(x), ref(x))] + [report[name].rel_error for name in ("x", "gamma", "beta")]

    print(pad(tr("mistake"), 25), f"{'forward':>8} {'dx':>8} {'dgamma':>8} {'dbeta':>8} ",
          tr("normcore practice says"))
    table = {}
    for mistake in MISTAKES:
        table[mistake] = fingerprint(mistake, x)
        report = grade(with_mistake(mistake), EXERCISES["layernorm"])
        verdict = (tr("pass") if report.passed
                   else ", ".join(report.diagnosis_ids) or tr("FAIL (no catalogued match)"))
        print(pad(shown(mistake), 25), " ".join(f"{v:>8.0e}" for v in table[mistake]) + f"  {verdict}")
    """),
    md(r"""
    The grader's full report for one of them, as `normcore practice check FILE` prints it:
    """, zh=r"""
    其中一个的完整评分报告，和 `normcore practice check FILE` 打印的一样：
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
    """, zh=(r"""
    一个 LayerNorm 的前向和 $\gamma$、$\beta$ 的检查都通过了，每一行都有 $\sum_j \bar{x}_j = 0$，
    但 $\bar{x}$ 还是错的。你首先怀疑哪一项？打印哪个和来确认？
    """, r"""
    方差那一项，$-r\,\hat{x}\operatorname{mean}(g\hat{x})$。漏掉它，$\sum_j \bar{x}_j = 0$ 依然成立
    （剩下的 $r\,(g - \operatorname{mean}(g))$ 之和为零），但此时
    $\sum_j \bar{x}_j \hat{x}_j = r \sum_j g_j \hat{x}_j$，不为零：打印 `(dx * x_hat).sum(-1)`，
    正确的反向会让它保持在 0 附近。
    """)),
    md(r"""
    **Practise at the terminal.** `normcore practice new layernorm` writes `my_layernorm.py`, a
    skeleton with the contract and TODOs; fill it in and run `normcore practice check
    my_layernorm.py`. The same for `batchnorm`, `rmsnorm`, `groupnorm`, `dropout`, `softmax`
    and `cross_entropy`;
    `normcore practice list --mistakes` prints the whole catalog with each mistake's symptom, and
    `normcore practice solution NAME` a reference answer.
    """, zh=r"""
    **在终端里练。** `normcore practice new layernorm --lang zh` 写出 `my_layernorm.py`，一份写明
    约定和 TODO 的骨架代码；补全后运行 `normcore practice check my_layernorm.py --lang zh`。
    `batchnorm`、`rmsnorm`、`groupnorm`、`dropout`、`softmax` 和 `cross_entropy` 也一样；
    `normcore practice list --mistakes` 打印整个错误目录和每个错误的症状，
    `normcore practice solution NAME` 打印参考答案。
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
    """, zh=r"""
    同样的习惯也能抓住 BatchNorm 特有的失误：跑几步之后，把移动统计量和 `nc.BatchNorm1d` 的比一比
    （动量方向反了，`bn-momentum-flipped`，或移动方差用了有偏方差，`bn-running-var-biased`，只会
    在这里露馅，任何梯度里都看不出来）；再比较推理模式的输出（推理时仍用 batch 统计量，
    `bn-eval-batch-stats`，或 $\sqrt{\text{running var}^2 + \epsilon}$，`bn-eval-squared-var`，
    只在这里出现）。评分器的 BatchNorm 练习跑的正是这些探针。手工检查移动统计量：
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
    print("running_mean, nc.BatchNorm1d:", ref_bn.running_mean, "", pad(tr("flipped momentum:"), 17), flipped_mean)
    print("running_var,  nc.BatchNorm1d:", ref_bn.running_var, "", pad(tr("biased update:"), 17), biased_var)
    """),
    md(r"""
    ## 8. Figures: the fingerprints side by side

    The relative errors of section 7 on a log scale (a correct layer sits around $10^{-10}$, a
    mistake near $10^{-1}$ to $1$). One row per mistake, one column per check.
    """, zh=r"""
    ## 8. 图：把指纹放在一起看

    第 7 节的相对误差，取对数坐标（正确的层在 $10^{-10}$ 附近，错误在 $10^{-1}$ 到 $1$ 之间）。
    每行一个错误，每列一项检查。

    <<figure font note>>
    """),
    code(r"""
    columns = ["forward", "dx", "dgamma", "dbeta"]
    grid = np.array([table[m] for m in MISTAKES])
    with figure_words(tr) as say:   # the figure's words: Chinese when a Chinese font is installed
        fig, ax = plt.subplots(figsize=(8, 4.2))
        im = ax.imshow(np.log10(np.maximum(grid, 1e-16)), cmap="cividis", vmin=-12, vmax=0, aspect="auto")
        ax.set_xticks(range(len(columns)), columns)
        ax.set_yticks(range(len(MISTAKES)), [say(m) if m else say("correct") for m in MISTAKES])
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                dark = np.log10(max(grid[i, j], 1e-16)) < -6                 # cividis is dark there
                ax.text(j, i, f"{grid[i, j]:.0e}", ha="center", va="center", fontsize=7,
                        color="white" if dark else "black")
        fig.colorbar(im, ax=ax, label=say("log10 relative error"))
        ax.set_title(say("Which check each mistake breaks"))
        plt.tight_layout(); plt.show()
    """),
    md(r"""
    And the BatchNorm slip that no gradient check sees, from the experiments (`normcore
    figures`): with the momentum convention flipped, the running statistics never settle; they
    stay as noisy as a single batch (momentum 0.9: orange, crosses), where PyTorch's
    `momentum=0.1` settles within about 30 batches (blue, circles).

    ![Error of the running statistics against batches seen, for three momenta](../figures/running_stats_convergence.png)
    """, zh=r"""
    还有一个任何梯度检查都看不到的 BatchNorm 失误，来自实验（`normcore figures`）：动量约定弄反
    之后，移动统计量永远稳定不下来，始终和单个 batch 一样嘈杂（动量 0.9：橙色、叉号）；而 PyTorch 的
    `momentum=0.1` 大约 30 个 batch 之内就稳定了（蓝色、圆点）。

    ![三种动量下，移动统计量的误差随已处理的 batch 数的变化](../figures/running_stats_convergence.png)
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
    """, zh=r"""
    ## 9. 归一化层之外：softmax、交叉熵、注意力、残差块

    面试题库里，注意力、softmax 和交叉熵出现得比归一化层还多；而“写一个 Transformer 层”的题目
    最后总会落到一个带归一化层的残差块上。它们每个都有一道 `normcore practice` 练习；下面用
    normcore 自己的层，把评分器那些错误所依据的事实测出来。

    ### 9.1 Softmax：完整的雅可比矩阵，以及减去最大值

    每个 $y_i$ 都依赖于同一切片里的每个 $x_j$：$\partial y_i/\partial x_j = y_i([i=j] - y_j)$。
    作用在 $dy$ 上：$\bar{x} = y\,(dy - \sum dy\,y)$。由于输出之和为 1，这个 $\bar{x}$ 沿该轴之和
    为零；只取对角线 $dy\,y(1-y)$（sigmoid 的导数）则不然。
    """),
    code(r"""
    xs = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    sm = nc.Softmax(axis=-1)
    ys, dys = sm(xs), rng.standard_normal(xs.shape)
    print(pad(tr("row sums of dx, whole Jacobian:"), 31), tidy(sm.backward(dys).sum(-1)))
    print(pad(tr("row sums of dx, diagonal only:"), 31), tidy((dys * ys * (1 - ys)).sum(-1)))
    print(nc.gradcheck(nc.Softmax(axis=-1), xs))

    big = np.array([1000.0, 1001.0])
    with np.errstate(all="ignore"):
        print(tr("exp(x) / sum(exp(x)) at 1000:"), np.exp(big) / np.exp(big).sum(),
              " " + tr("with the max subtracted:"), nc.Softmax()(big))
    """),
    md(r"""
    ### 9.2 Cross-entropy: log-softmax, and the fused gradient

    $\log p = z - \log\sum e^{z}$ with $z = x - \max x$ is finite however small $p$ is;
    $\log(\operatorname{softmax}(x))$ is not. Through log-softmax the gradient fuses to
    $\partial L/\partial x = (p - \text{onehot}(y)) / N$: no division by $p$, each row sums to
    zero. Below, the second sample's target logit is 803 below its best one.
    """, zh=r"""
    ### 9.2 交叉熵：log-softmax，以及融合后的梯度

    取 $z = x - \max x$，$\log p = z - \log\sum e^{z}$ 无论 $p$ 多小都是有限的；
    $\log(\operatorname{softmax}(x))$ 则不是。经过 log-softmax，梯度融合为
    $\partial L/\partial x = (p - \text{onehot}(y)) / N$：没有除以 $p$，每行之和为零。下面第二个
    样本的目标 logit 比它最大的 logit 小 803。
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
    print(tr("loss:"), loss, " " + tr("as log(softmax(x)):"), as_log_of_softmax)
    print(tr("fused dlogits:") + "\n", dlogits, "\n" + tr("row sums:"), dlogits.sum(1))
    print(tr("through 1/p and the Jacobian:") + "\n", unfused)
    """),
    md(r"""
    ### 9.3 Attention: the scale, the mask, three shares of dx

    With unit-variance queries and keys, a score $q \cdot k$ over $D$ channels has standard
    deviation $\sqrt{D}$; dividing by $\sqrt{D}$ (the *head* dimension) brings it back to 1.
    Without it, the softmax rows grow peaked as $D$ grows: the mean largest weight over 16 keys
    is measured below.
    """, zh=r"""
    ### 9.3 注意力：缩放、掩码、dx 的三份贡献

    query 和 key 的方差为 1 时，$D$ 个通道上的得分 $q \cdot k$ 的标准差是 $\sqrt{D}$；除以
    $\sqrt{D}$（*每个头*的维度）又把它拉回 1。不缩放的话，$D$ 越大，softmax 的每一行越尖：
    下面测的是 16 个 key 上最大权重的平均值。
    """),
    code(r"""
    for D in (4, 16, 64, 256):
        q, k = rng.standard_normal((2, 500, 16, D))               # 500 queries, 16 keys each
        scores = np.einsum("nd,njd->nj", q[:, 0], k)              # (500, 16)
        top = {s: nc.Softmax()(scores / s).max(-1).mean() for s in (1.0, np.sqrt(D))}
        print(f"D={D:>3}:", tr("std of q.k {std:5.1f}   mean top weight: unscaled {unscaled:.2f}, "
                                 "/ sqrt(D) {scaled:.2f}").format(
            std=scores.std(), unscaled=top[1.0], scaled=top[np.sqrt(D)]))
    """),
    md(r"""
    The causal mask is added to the scores as $-\infty$ *before* the softmax, so each row
    renormalises over the keys it may see. Zeroing the weights *after* the softmax leaves rows
    that no longer sum to 1. And since $x$ feeds the query, key and value projections, its
    gradient is the sum of three shares; the gradient check of normcore's
    `MultiheadSelfAttention` (causal, two heads) proves all of them and every weight's:
    """, zh=r"""
    因果掩码要在 softmax *之前*以 $-\infty$ 加到得分上，这样每一行只在它能看到的 key 上重新归一化。
    在 softmax *之后*把权重置零，各行之和就不再是 1。另外，$x$ 同时进入 query、key 和 value 的
    投影，所以它的梯度是三份贡献之和；对 normcore 的 `MultiheadSelfAttention`（因果、两个头）
    做梯度检查，就证明了这三份以及每个权重的梯度：
    """),
    code(r"""
    S = rng.standard_normal((4, 4))
    future = np.triu(np.ones((4, 4), dtype=bool), k=1)
    before = nc.Softmax()(np.where(future, -np.inf, S))
    after = np.where(future, 0.0, nc.Softmax()(S))
    print(pad(tr("row sums, mask before the softmax:"), 34), before.sum(-1))
    print(pad(tr("row sums, mask after the softmax:"), 34), after.sum(-1))

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
    """, zh=r"""
    ### 9.4 残差块：恒等路径把 dy 原样传回

    Pre-Norm：$y = x + F(\mathrm{LN}(x))$，所以 $\bar{x} = dy + \mathrm{LN}^\top F^\top dy$：上游
    梯度经恒等路径原封不动地到达，再加上分支的那一份。Post-Norm：$y = \mathrm{LN}(x + F(x))$，
    梯度先经过归一化层的反向，$dz = \mathrm{LN}^\top dy$，然后 $\bar{x} = dz + F^\top dz$。丢掉
    恒等路径的那一份，少掉的恰好是 $dy$（Pre）或 $dz$（Post）。用 normcore 的
    `TransformerBlock`（注意力和前馈网络两个子层，都会检查）：
    """),
    code(r"""
    for position in ("pre", "post"):
        block = nc.TransformerBlock(8, 2, d_ff=16, position=position, rng=1)
        xb = rng.standard_normal((2, 4, 8))
        dyb = rng.standard_normal(xb.shape)                       # a random upstream gradient
        report = nc.gradcheck(block, xb, dy=dyb)
        worst = max(report.checks, key=lambda c: c.rel_error)
        print(tr("{position:>4}-Norm block: {n} gradients, all pass: {passed}; largest relative "
                 "error {error:.1e} ({name})").format(position=position, n=len(report.checks),
                                                      passed=report.passed, error=worst.rel_error,
                                                      name=worst.name))
    """),
    md(r"""
    Practise each at the terminal: `normcore practice list` shows the path from easy to hard,
    `normcore practice new attention` writes a skeleton, and `normcore practice check` names
    the mistake your numbers match.
    """, zh=r"""
    每一个都可以在终端里练：`normcore practice list` 给出由易到难的路线，
    `normcore practice new attention --lang zh` 写出骨架，`normcore practice check` 点出与你的
    数字吻合的错误。
    """),
    md(r"""
    ## Where next

    * Write your own BatchNorm and RMSNorm the same way, and check them with `nc.gradcheck`.
    * `normcore explain batchnorm` and `normcore explain rmsnorm` show their tapes with numbers.
    """, zh=r"""
    ## 接下来

    * 用同样的方法写出你自己的 BatchNorm 和 RMSNorm，并用 `nc.gradcheck` 检查。
    * `normcore --lang zh explain batchnorm` 和 `normcore --lang zh explain rmsnorm` 带着数字展示
      它们的计算图。
    """),
]
