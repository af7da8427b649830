"""Source of notebooks/pre_post_norm.ipynb and of pre_post_norm_zh.ipynb, the same notebook with
each Markdown cell's Chinese text (``zh``): python notebooks/build.py pre_post_norm pre_post_norm_zh.

It is one piece, though long: it holds nothing but the notebook's cells in order, each helper
defined in the code cell that shows it, so the file reads as the notebook does (one source per
notebook: helpers moved out would no longer be shown).
"""

from build import code, md, question

CELLS = [
    md(r"""
    # Pre-Norm vs Post-Norm: where the norm sits in a Transformer block

    A Transformer block wraps each sub-layer $F$ (attention, then the feed-forward) in a residual
    connection and a norm. Where the norm goes changes how signals and gradients travel through a
    deep stack:

    * **Post-Norm** (the original Transformer, BERT): $y = \operatorname{Norm}(x + F(x))$
    * **Pre-Norm** (GPT-2 onwards, LLaMA): $y = x + F(\operatorname{Norm}(x))$
    * **DeepNorm**: $y = \operatorname{Norm}(\alpha x + F(x))$, Post-Norm with an up-weighted
      identity path and a down-scaled initialisation of $F$

    In $x + F(x)$, $x$ (carried over unchanged) is the **identity path** and $F(x)$ the
    **residual branch**; the notebook uses the two names in that sense only.

    1. the intuition: the residual stream and its identity path
    2. the formulas, forward and backward
    3. the forward in code: what happens to the residual stream
    4. the backward: the norm on the gradient's path, and the softmax inside attention, node by node
    5. the gradient check of a block in every position
    6. the pitfalls: warmup, the final norm, the "divide by $\sqrt{2}$" argument, DeepNorm's constants
    7. figures: training with and without warmup
    8. the decoder block of an encoder-decoder Transformer, written out in both positions

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """, zh=r"""
    # Pre-Norm 与 Post-Norm：归一化层放在 Transformer 块的哪里

    Transformer 块把每个子层 $F$（先是注意力，然后是前馈网络）包在一个残差连接和一个归一化层
    里。归一化层放在哪里，决定了信号和梯度在很深的堆叠中怎样传递：

    * **Post-Norm**（原始的 Transformer、BERT）：$y = \operatorname{Norm}(x + F(x))$
    * **Pre-Norm**（GPT-2 及以后、LLaMA）：$y = x + F(\operatorname{Norm}(x))$
    * **DeepNorm**：$y = \operatorname{Norm}(\alpha x + F(x))$，即加大恒等分支的权重、把 $F$
      的初始化缩小的 Post-Norm

    在 $x + F(x)$ 中，原样传过去的 $x$ 是**恒等分支**，$F(x)$ 是**残差分支**；本 notebook 只在
    这个意义上使用这两个名字。

    1. 直觉：残差流和它的恒等分支
    2. 公式，前向和反向
    3. 前向的代码：残差流怎样变化
    4. 反向：梯度路径上的归一化层，以及注意力里的 softmax，逐节点推导
    5. 每种位置下一个块的梯度检查
    6. 易错点：warmup、最后的归一化层、“除以 $\sqrt{2}$”的论证、DeepNorm 的常数
    7. 图：用与不用 warmup 的训练
    8. 编码器-解码器 Transformer 的解码器块，两种位置都逐行写出

    只要能 import `normcore`（在仓库里 `pip install -e .`），几秒钟就能跑完。
    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    import normcore as nc
    from normcore.derivations import step_through
    from normcore.i18n import translator
    from normcore.i18n.figures import figure_words
    from normcore.optim import grad_norm, linear_warmup

    np.set_printoptions(precision=4, suppress=True)
    tr = translator("notebooks")   # what the cells print, in the notebook's language
    """),
    md(r"""
    ## 1. Intuition: the identity path

    Think of the residual stream as a running draft: every block reads it and adds a correction.
    In **Pre-Norm** each block reads a normalised *copy* of the draft, and its correction is added
    to the draft itself; nothing ever rescales the draft, so the input reaches the output (and the
    output's gradient reaches the input) along an untouched identity path. In **Post-Norm** the
    draft is renormalised after every correction: the stream stays at unit scale, but everything,
    the identity path included, passes through a norm in every block.

    ## 2. The formulas

    With $G'(g)$ meaning "the backward of $G$ applied to the gradient $g$":

    | position | forward | backward |
    |---|---|---|
    | pre | $y = x + F(\operatorname{Norm}(x))$ | $\bar{x} = \bar{y} + \operatorname{Norm}'(F'(\bar{y}))$ |
    | post | $y = \operatorname{Norm}(x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \ \bar{x} = \bar{z} + F'(\bar{z})$ |
    | deepnorm | $y = \operatorname{Norm}(\alpha x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \ \bar{x} = \alpha\bar{z} + F'(\bar{z})$ |

    DeepNorm, for a decoder-only stack of $N$ blocks, uses $\alpha = (2N)^{1/4}$ and initialises the
    feed-forward and the attention's value and output projections with gain $\beta = (8N)^{-1/4}$.
    `nc.TransformerBlock(d_model, n_heads, position=...)` implements all three (and `"none"`,
    no norm at all).
    """, zh=r"""
    ## 1. 直觉：恒等分支

    把残差流想成一份不断修改的草稿：每个块读它，再往上加一处修改。在 **Pre-Norm** 中，每个块读
    的是草稿归一化之后的*副本*，它的修改加在草稿本身上；从来没有什么去重新缩放草稿，所以输入沿着
    一条原封不动的恒等分支到达输出（输出的梯度也沿着它回到输入）。在 **Post-Norm** 中，每次修改
    之后草稿都被重新归一化：残差流保持在单位尺度上，但所有东西，包括恒等分支，在每个块里都要经过
    一个归一化层。

    ## 2. 公式

    记 $G'(g)$ 为“把 $G$ 的反向作用在梯度 $g$ 上”：

    | 位置 | 前向 | 反向 |
    |---|---|---|
    | pre | $y = x + F(\operatorname{Norm}(x))$ | $\bar{x} = \bar{y} + \operatorname{Norm}'(F'(\bar{y}))$ |
    | post | $y = \operatorname{Norm}(x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \ \bar{x} = \bar{z} + F'(\bar{z})$ |
    | deepnorm | $y = \operatorname{Norm}(\alpha x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \ \bar{x} = \alpha\bar{z} + F'(\bar{z})$ |

    对 $N$ 个块的仅解码器堆叠，DeepNorm 取 $\alpha = (2N)^{1/4}$，并用增益 $\beta = (8N)^{-1/4}$
    初始化前馈网络以及注意力的值投影和输出投影。`nc.TransformerBlock(d_model, n_heads,
    position=...)` 实现了这三种（外加 `"none"`，完全不用归一化层）。
    """),
    code(r"""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((2, 4, 8))                    # (B, T, d_model)
    for position in ("pre", "post", "deepnorm"):
        block = nc.TransformerBlock(8, n_heads=2, position=position, n_layers=6, rng=0)
        y = block(x)
        print(f"{position:<9}", tr("alpha={alpha:.3f}  output rms {rms:.3f}  parameters {n}").format(
            alpha=block.alpha, rms=np.sqrt((y ** 2).mean()), n=sum(p.size for p in block.parameters())))
    print(tr("DeepNorm constants for N = 6:"), nc.nn.deepnorm_constants(6))
    """),
    question(r"""
    Read the backward column of the table. In which position does the output's gradient
    $\bar{y}$ reach the block's input $x$ without passing through any norm's backward?
    """, r"""
    Pre-Norm: $\bar{x} = \bar{y} + \dots$, the identity path hands $\bar{y}$ to $x$ untouched,
    block after block. In Post-Norm and DeepNorm the first step is
    $\bar{z} = \operatorname{Norm}'(\bar{y})$, so even the identity path passes through a
    norm's backward in every block (DeepNorm then weights it by $\alpha$).
    """, zh=(r"""
    看表中反向那一列。在哪种位置下，输出的梯度 $\bar{y}$ 不经过任何归一化层的反向就能到达块的
    输入 $x$？
    """, r"""
    Pre-Norm：$\bar{x} = \bar{y} + \dots$，恒等分支把 $\bar{y}$ 原封不动地交给 $x$，一个块接
    一个块都是这样。在 Post-Norm 和 DeepNorm 中，第一步就是 $\bar{z} = \operatorname{Norm}'(\bar{y})$，
    所以在每个块里，连恒等分支也要经过归一化层的反向（DeepNorm 随后再给它乘上 $\alpha$）。
    """)),
    md(r"""
    ## 3. The forward in code: the residual stream

    Stack twelve blocks at initialisation and follow the root-mean-square size of the stream
    after each block, and the size of the gradient on the way back (a random upstream gradient at
    the top).
    """, zh=r"""
    ## 3. 前向的代码：残差流

    在初始化状态下堆叠十二个块，跟踪每个块之后残差流的均方根大小，以及反向时梯度的大小（在顶部
    给一个随机的上游梯度）。
    """),
    code(r"""
    x = rng.standard_normal((4, 8, 16))
    dy = rng.standard_normal(x.shape)
    sizes, grads = {}, {}
    for position in ("pre", "post"):
        blocks = [nc.TransformerBlock(16, 2, position=position, rng=i) for i in range(12)]
        h, sizes[position] = x, []
        for b in blocks:
            h = b(h)
            sizes[position].append(np.sqrt((h ** 2).mean()))
        g, grads[position] = dy, []
        for b in reversed(blocks):
            g = b.backward(g)
            grads[position].append(np.sqrt((g ** 2).mean()))
        grads[position].reverse()
        print(f"{position:<5}", tr("stream rms per block:"), np.round(sizes[position], 2))
        print(" " * 5, tr("gradient rms at each block's input:"), np.round(grads[position], 2))
    """),
    md(r"""
    Pre-Norm's stream grows block after block (each adds a correction, nothing rescales), and
    so does the gradient going down: the identity path hands every block the full upstream
    gradient plus what its own branch adds. Post-Norm's stream is pinned at unit scale, and its
    gradient is pinned too: each block's backward starts with the norm's backward, which divides
    by the size of $x + F(x)$ and projects out two directions.

    ## 4. The backward: the norm on the gradient's path

    In a Post-Norm block the first thing the gradient meets is LayerNorm's backward, on the
    residual sum $z = x + F(x)$. That is exactly the LayerNorm step-through, with $z$ as its input.
    Here for a sequence of three tokens at the block's second norm, `norm2` (with its own
    $\gamma$ and $\beta$), checked against the block itself:
    """, zh=r"""
    Pre-Norm 的残差流一块接一块地变大（每个块都加上一处修改，没有什么去重新缩放），往下传的梯度
    也一样：恒等分支把完整的上游梯度交给每个块，再加上这个块自己的分支贡献的那部分。Post-Norm 的
    残差流被钉在单位尺度上，它的梯度也被钉住了：每个块的反向都从归一化层的反向开始，而它要除以
    $x + F(x)$ 的大小，并投影掉两个方向。

    ## 4. 反向：梯度路径上的归一化层

    在 Post-Norm 块里，梯度遇到的第一个东西是 LayerNorm 在残差和 $z = x + F(x)$ 上的反向。这正是
    以 $z$ 为输入的 LayerNorm 逐步推导。下面对一个含 3 个 token 的序列，在块的第二个归一化层
    `norm2` 上做一遍（用它自己的 $\gamma$ 和 $\beta$），并与块本身核对：
    """),
    code(r"""
    block = nc.TransformerBlock(8, 2, position="post", rng=1)
    xb = rng.standard_normal((1, 3, 8))
    block.zero_grad()
    yb = block(xb)
    dyb = rng.standard_normal(yb.shape)
    block.backward(dyb)

    # rebuild z = h + ffn(h), the input of norm2, from the block's own children
    h = block.norm1(xb + block.attn(xb))
    z = h + block.ffn(h)
    st = step_through("layernorm", z[0], gamma=block.norm2.gamma.data, beta=block.norm2.beta.data, dy=dyb[0])
    print(tr("dL/dz from the tape vs norm2.backward:"), np.abs(st.tape["x"].grad - block.norm2.backward(dyb)[0]).max())
    print(st.text(latex=False, parts=("checks",)))
    """),
    md(r"""
    **The softmax inside attention.** Attention scores $S = qk^\top/\sqrt{D}$ become weights
    $P = \operatorname{softmax}(S)$ row by row, with the future masked to $-\infty$. Its tape is
    max, shift, exp, sum, reciprocal, normalise; the compact backward is
    $\bar{S} = P \odot (\bar{P} - \sum_j \bar{P}\odot P)$. Masked entries have $P = 0$, so they
    get no gradient, and the path through the row maximum carries exactly zero (softmax ignores a
    shift of its row), as the numbers show:
    """, zh=r"""
    **注意力里的 softmax。** 注意力分数 $S = qk^\top/\sqrt{D}$ 逐行经过 softmax 变成权重
    $P = \operatorname{softmax}(S)$，未来的位置被掩码为 $-\infty$。它的计算图依次是：取最大值、
    平移、取指数、求和、取倒数、归一化；紧凑的反向是
    $\bar{S} = P \odot (\bar{P} - \sum_j \bar{P}\odot P)$。被掩码的元素 $P = 0$，所以得不到梯度；
    经过行最大值的路径带回的恰好是零（softmax 不受整行平移的影响），下面的数字显示了这一点：
    """),
    code(r"""
    T = 4
    scores = rng.standard_normal((T, T))
    scores[np.triu_indices(T, 1)] = -np.inf                 # causal mask: no looking ahead
    st = step_through("softmax", scores, seed=3)
    print(st.text(latex=False, parts=("forward",)))
    """),
    code(r"""
    print(st.text(latex=False, parts=("backward",)))
    """),
    code(r"""
    print(st.text(parts=("checks",)))
    """),
    question(r"""
    The route through the row maximum $m$ brings back exactly zero. Why, and why does the tape
    subtract the maximum at all?
    """, r"""
    Softmax ignores a shift of its row, and $m$ only shifts the row, so the loss does not depend
    on it: its gradient is $-\sum_j \bar{z}_j$, and $\bar{z}$ sums to zero over the row because
    the rest of the tape, a softmax of $z$, ignores a shift of $z$ as well. The maximum is
    subtracted for the forward's sake: $e^{s}$ overflows for large scores, while
    $e^{s - m} \le 1$.
    """, zh=(r"""
    经过行最大值 $m$ 的路线带回的恰好是零。为什么？计算图又为什么要减去最大值？
    """, r"""
    softmax 不受整行平移的影响，而 $m$ 只是平移这一行，所以损失与它无关：它的梯度是
    $-\sum_j \bar{z}_j$，而 $\bar{z}$ 按行加起来为零，因为计算图其余的部分，即 $z$ 的 softmax，
    同样不受 $z$ 平移的影响。减去最大值是为了前向：分数很大时 $e^{s}$ 会溢出，而
    $e^{s - m} \le 1$。
    """)),
    md(r"""
    ## 5. The gradient check of a block in every position

    Every parameter of the block (attention projections, feed-forward, both norms) and the
    input, in float64 with a random upstream gradient:
    """, zh=r"""
    ## 5. 每种位置下一个块的梯度检查

    块的每个参数（注意力的各个投影、前馈网络、两个归一化层）以及输入，在 float64 下用随机的上游
    梯度检查：
    """),
    code(r"""
    xs = rng.standard_normal((2, 3, 4))
    for position in ("pre", "post", "deepnorm"):
        for norm in ("layernorm", "rmsnorm"):
            block = nc.TransformerBlock(4, 2, d_ff=6, norm=norm, position=position, n_layers=2, rng=0)
            report = nc.gradcheck(block, xs)
            worst = max(c.rel_error for c in report.checks)
            print(f"{position:<9} {norm:<10}", tr("{n:>2} gradients, worst rel error {worst:.1e}").format(
                n=len(report.checks), worst=worst), tr("pass") if report.passed else tr("FAIL"))
            assert report.passed
    """),
    md(r"""
    ## 6. Pitfalls

    ### Post-Norm wants warmup

    A Post-Norm stack trained with a large learning rate from step 0 can stall or diverge; a short
    linear warmup usually rescues it. Xiong et al. (2020) trained Pre-Norm Transformers without
    warmup, but that does not make warmup obsolete: GPT-2, GPT-3 and LLaMA are Pre-Norm, and
    GPT-3 and LLaMA report training with a warmup all the same. Section 7 shows the difference on small copy and reversal
    tasks.

    ### Pre-Norm needs a final norm

    The Pre-Norm stream is never normalised (section 3), so the model needs one more norm before
    the output projection. `nc.TinyTransformer(position="pre")` adds `norm_f`; Post-Norm and
    DeepNorm blocks already end in a norm.
    """, zh=r"""
    ## 6. 易错点

    ### Post-Norm 需要 warmup

    Post-Norm 堆叠如果从第 0 步起就用大学习率训练，可能停滞或发散；一段短的线性 warmup 通常能
    把它救回来。Xiong 等（2020）训练 Pre-Norm Transformer 时没有用 warmup，但这并不意味着
    warmup 过时了：GPT-2、GPT-3 和 LLaMA 都是 Pre-Norm，而 GPT-3 和 LLaMA 报告的训练照样用了
    warmup。第 7 节在小的复制任务和反转任务上展示了这个差别。

    ### Pre-Norm 需要一个最后的归一化层

    Pre-Norm 的残差流从来没有被归一化过（第 3 节），所以模型在输出投影之前还需要一个归一化层。
    `nc.TinyTransformer(position="pre")` 会加上 `norm_f`；Post-Norm 和 DeepNorm 的块本来就以
    归一化层结尾。
    """),
    code(r"""
    for position in ("pre", "post"):
        model = nc.TinyTransformer(vocab_size=10, d_model=8, n_layers=2, n_heads=2, max_len=6, position=position, rng=0)
        print(position, tr("has a final norm:"), hasattr(model, "norm_f"))
    """),
    md(r"""
    ### "Post-Norm divides the identity path by $\sqrt{2}$ in every block"

    A common argument: if $x$ and $F(x)$ each have variance 1 and are independent, $x + F(x)$ has
    variance 2, so the norm divides by $\sqrt{2}$ and the identity path's weight shrinks by
    $1/\sqrt{2}$ per block. The conclusion (the identity path is damped, block after block) is
    right in spirit, but the numbers rest on assumptions worth measuring. At initialisation $F(x)$
    is far from unit variance. It is uncorrelated with $x$ (what the variance of the sum needs),
    though not independent of it: $F(x)$ is a function of $x$. The factor actually applied is the
    norm's $r = 1/\sqrt{\operatorname{var}(z) + \epsilon}$, per token:
    """, zh=r"""
    ### “Post-Norm 在每个块里把恒等分支除以 $\sqrt{2}$”

    一个常见的论证：如果 $x$ 和 $F(x)$ 的方差都是 1 且相互独立，$x + F(x)$ 的方差就是 2，于是
    归一化层除以 $\sqrt{2}$，恒等分支的权重每过一个块就缩小为原来的 $1/\sqrt{2}$。结论（恒等分支
    一块接一块地被削弱）大方向是对的，但这些数字所依赖的假设值得测一测。初始化时 $F(x)$ 的方差
    远不到 1。它与 $x$ 不相关（和的方差需要的正是这一点），但并不独立：$F(x)$ 是 $x$ 的函数。
    实际乘上的因子是归一化层的 $r = 1/\sqrt{\operatorname{var}(z) + \epsilon}$，每个 token 各有
    一个：
    """),
    code(r"""
    block = nc.TransformerBlock(16, 2, position="post", rng=0)
    xt = rng.standard_normal((4, 8, 16))
    f = block.attn(xt)
    z = xt + f
    print(tr("variance of x: {x:.3f}, of F(x): {f:.3f}, of x + F(x): {z:.3f}").format(
        x=xt.var(-1).mean(), f=f.var(-1).mean(), z=z.var(-1).mean()))
    correlation = np.corrcoef(xt.ravel(), f.ravel())[0, 1]
    print(tr("correlation of x and F(x): {c:.3f}").format(c=correlation))
    r = (1 / np.sqrt(z.var(-1) + 1e-5)).mean()
    print(tr("the norm's factor r, mean over tokens: {r:.3f} (1/sqrt(2) = {half:.3f})").format(r=r, half=1 / np.sqrt(2)))
    assert f.var(-1).mean() < 0.5 * xt.var(-1).mean() and abs(correlation) < 0.05 and 0.85 < r < 0.95
    """),
    md(r"""
    Here $F(x)$ has less than half the variance of $x$ and the factor is about 0.9, not 0.71: the
    variance assumption, not the independence one, is what fails. Where both hold (branches
    uncorrelated with their input, with unit variance), the
    experiment behind `figures/effective_depth.png` measures exactly $2^{-l/2}$ for the weight of
    the input in the Post-Norm stream, and shows the Pre-Norm side of the story: the stream's
    norm grows like $\sqrt{1 + l}$ and consecutive layers' inputs become almost parallel.

    ![Effective depth: the input's weight, consecutive layers' cosine and the stream's norm](../figures/effective_depth.png)
    """, zh=r"""
    这里 $F(x)$ 的方差不到 $x$ 的一半，因子约为 0.9，而不是 0.71：不成立的是方差的假设，不是独立
    的假设。在两个假设都成立的情形下（各分支与其输入不相关，且方差为 1），
    `figures/effective_depth.png` 背后的实验测得 Post-Norm 残差流中输入的权重恰好是 $2^{-l/2}$，
    并给出了 Pre-Norm 这一边的情况：残差流的范数按 $\sqrt{1 + l}$ 增长，相邻各层的输入变得几乎
    平行。

    ![有效深度：输入的权重、相邻层的余弦相似度和残差流的范数](../figures/effective_depth.png)

    <<figure font note>>
    """),
    md(r"""
    ### DeepNorm's constants depend on the architecture

    $\alpha = (2N)^{1/4}$, $\beta = (8N)^{-1/4}$ are the decoder-only values for $N$ blocks; an
    encoder-decoder model uses different ones. They are not a free choice: $\alpha$ and $\beta$
    are derived together so that one update changes the model's output by a bounded amount.
    """, zh=r"""
    ### DeepNorm 的常数取决于架构

    $\alpha = (2N)^{1/4}$、$\beta = (8N)^{-1/4}$ 是 $N$ 个块的仅解码器模型的取值；编码器-解码器
    模型用的是另一组。它们不能随便选：$\alpha$ 和 $\beta$ 是一起推导出来的，为的是让一次更新对
    模型输出的改变有界。
    """),
    code(r"""
    for N in (1, 6, 24, 100):
        alpha, beta = nc.nn.deepnorm_constants(N)
        print(f"N={N:<4} alpha={alpha:.3f} beta={beta:.3f}")
    """),
    md(r"""
    ## 7. Figures: training with and without warmup

    From the experiments (`normcore figures`; each claim is asserted by a test). A 12-block
    Transformer on a copy task at one Adam learning rate (2e-3), three initialisations each:
    without warmup Post-LN stays at the chance loss, with a linear warmup it learns; Pre-LN and
    DeepNorm learn either way. One depth and one learning rate: a case where Post-LN needs
    warmup, not the depth or rate at which the need begins (the smaller run at the end of this
    section stalls a 4-block Post-LN without warmup, at a higher rate).

    ![Training loss of Post-LN, Pre-LN and DeepNorm with and without warmup](../figures/warmup.png)

    Why (Xiong et al. 2020): at initialisation Post-LN's parameter gradients near the output are
    several times Pre-LN's, and Post-LN's last block's does not shrink with depth, while Pre-LN's
    does. Read the bands, not only the means: on average Post-LN's gradients rise toward the
    output, but the bands of its first and last block overlap, so a single model can have them
    the other way round. Pre-LN's last-block gradient falls with a log-log slope of about -0.3
    here, shallower than the -1/2 of the theory's $O(\sqrt{1/L})$ bound.

    ![Gradient norms at initialisation by block, and the last block's against depth](../figures/pre_post_gradients.png)

    And a small random change of every weight moves a Post-LN model's output in proportion to its
    depth, a Pre-LN model's only about logarithmically (Liu et al. 2020): Post-LN amplifies the
    large early updates that warmup holds back.

    ![Output change under a small random weight change against depth](../figures/output_change.png)

    A smaller run, in a few seconds: four models (4 blocks, width 16, one initialisation) learn
    to reverse a sequence of 5 symbols with AdamW at a learning rate of 0.03 for 80 steps.
    """, zh=r"""
    ## 7. 图：用与不用 warmup 的训练

    来自实验（`normcore figures`；每个结论都由一个测试断言）。一个 12 个块的 Transformer 做复制
    任务，用同一个 Adam 学习率（2e-3），每种设置三次初始化：不用 warmup 时 Post-LN 停在随机猜测
    的损失上，用线性 warmup 就能学会；Pre-LN 和 DeepNorm 用不用都能学会。只有一个深度、一个学习
    率：这说明存在 Post-LN 需要 warmup 的情形，但说明不了这种需要从哪个深度或学习率开始出现（本节
    末尾较小的实验里，一个 4 块的 Post-LN 在更高的学习率下不用 warmup 也停滞了）。

    ![Post-LN、Pre-LN 和 DeepNorm 用与不用 warmup 时的训练损失](../figures/warmup.png)

    原因（Xiong 等 2020）：初始化时，Post-LN 靠近输出的参数梯度是 Pre-LN 的好几倍，而且 Post-LN
    最后一个块的梯度不随深度减小，Pre-LN 的则会减小。要看带状区间，不要只看均值：平均而言 Post-LN
    的梯度朝输出方向增大，但它第一个块和最后一个块的区间有重叠，所以单个模型可能正好反过来。这里
    Pre-LN 最后一个块的梯度在双对数坐标下以约 -0.3 的斜率下降，比理论上 $O(\sqrt{1/L})$ 上界的
    -1/2 平缓。

    ![初始化时各块的梯度范数，以及最后一个块的梯度范数随深度的变化](../figures/pre_post_gradients.png)

    而对每个权重做一个小的随机改动，Post-LN 模型的输出变化与深度成正比，Pre-LN 模型的只大约按
    对数增长（Liu 等 2020）：训练初期的大更新会被 Post-LN 放大，而 warmup 正是把这些更新压住。

    ![权重的小随机改动引起的输出变化随深度的变化](../figures/output_change.png)

    再来一个小一点的实验，几秒钟就能跑完：四个模型（4 个块、宽度 16、一次初始化）用 AdamW、学习率
    0.03 训练 80 步，学习把 5 个符号的序列倒过来。
    """),
    code(r"""
    task = nc.tasks.ReverseTask(n_tokens=5, n_symbols=8)
    runs = {"pre": ("pre", None), "post": ("post", None), "post + warmup": ("post", linear_warmup(0.03, 40)),
            "deepnorm": ("deepnorm", None)}
    styles = {"pre": ("#0072B2", "--"), "post": ("#D55E00", "-"), "post + warmup": ("#E69F00", ":"),
              "deepnorm": ("#009E73", "-.")}   # Okabe-Ito colours, and a line style each
    with figure_words(tr) as say:   # the figure's words: Chinese when a Chinese font is installed
        fig, ax = plt.subplots(figsize=(6, 3.2))
        for label, (position, schedule) in runs.items():
            model = nc.TinyTransformer(vocab_size=task.vocab_size, d_model=16, n_layers=4, n_heads=2,
                                       max_len=task.seq_len, position=position, rng=0)
            history = nc.fit(model, task, nc.AdamW(model.parameters(), lr=0.03), steps=80,
                             schedule=schedule, progress=False, batch_size=16, seed=1)
            color, linestyle = styles[label]
            ax.plot(history["loss"], color=color, linestyle=linestyle, label=label)
            print(f"{label:<14}", tr("final loss {loss:.3f}, accuracy {accuracy:.2f}").format(
                loss=history["loss"][-10:].mean(), accuracy=history["accuracy"][-10:].mean()))
        ax.set_xlabel(say("step")); ax.set_ylabel(say("training loss")); ax.set_yscale("log"); ax.legend()
        plt.show()
    """),
    md(r"""
    What these numbers show (the means of the last 10 steps): Pre-LN and DeepNorm learn the task
    (accuracy 1.00 and 0.99); Post-LN without warmup does not (loss 2.0, accuracy 0.21).
    Post-LN with warmup learns, but slowly and not stably: its loss falls to about 0.7 by step
    72, then jumps to 2.8 at the last step (79), so it ends at loss 1.08 and accuracy 0.53.
    Warmup helps Post-LN here, but in 80 steps it neither catches up with Pre-LN nor stays
    stable: a weaker result than the figure's, from one initialisation.
    """, zh=r"""
    这些数字说明了什么（最后 10 步的均值）：Pre-LN 和 DeepNorm 学会了这个任务（准确率 1.00 和
    0.99）；不用 warmup 的 Post-LN 没有学会（损失 2.0，准确率 0.21）。用了 warmup 的 Post-LN
    学会了，但学得慢，也不稳定：它的损失到第 72 步降到约 0.7，然后在最后一步（第 79 步）跳到
    2.8，所以最后的损失是 1.08，准确率 0.53。在这里 warmup 帮了 Post-LN，但 80 步内它既没有追上
    Pre-LN，也没有保持稳定：这个结果来自一次初始化，比图中的结论弱。
    """),
    md(r"""
    ## 8. The decoder block, written out

    An encoder-decoder Transformer's decoder block has three sub-layers instead of two:
    masked (causal) self-attention over the target, attention from the target to the
    encoder's output (the *memory*: queries from the target, keys and values from the
    memory), and the feed-forward. Each gets its residual connection and its norm in the same
    place as in the encoder block. Post-LN normalises each residual sum; Pre-LN normalises only
    what each sub-layer reads, and leaves the memory as the encoder delivered it.

    Below, both forms written out line by line with the sub-layers of a
    `nc.TransformerDecoderBlock`, so the weights are the block's own, and compared with the
    block's forward:
    """, zh=r"""
    ## 8. 把解码器块逐行写出来

    编码器-解码器 Transformer 的解码器块有三个子层，而不是两个：在目标序列上带掩码（因果）的
    自注意力，从目标序列到编码器输出（即 *memory*：查询来自目标序列，键和值来自 memory）的注意力，
    以及前馈网络。每个子层的残差连接和归一化层都放在和编码器块相同的位置。Post-LN 对每个残差和
    做归一化；Pre-LN 只对每个子层读入的东西做归一化，memory 则保持编码器给出的样子。

    下面用 `nc.TransformerDecoderBlock` 的各个子层把两种形式逐行写出来，这样权重就是这个块自己
    的，再与块的前向比较：
    """),
    code(r"""
    def post_ln_decoder(b, x, memory):
        x = b.norm1(x + b.self_attn(x))                    # causal self-attention: query i sees keys j <= i
        x = b.norm2(x + b.cross_attn(x, memory, memory))   # attend to the encoder's output
        x = b.norm3(x + b.ffn(x))                          # position-wise feed-forward
        return x

    def pre_ln_decoder(b, x, memory):
        x = x + b.self_attn(b.norm1(x))
        x = x + b.cross_attn(b.norm2(x), memory, memory)   # the memory itself is not normalised here
        x = x + b.ffn(b.norm3(x))
        return x

    target = rng.standard_normal((2, 5, 8))                # (B, Tt, d_model): the decoder's input
    memory = rng.standard_normal((2, 7, 8))                # (B, Ts, d_model): the encoder's output
    for position, by_hand in (("post", post_ln_decoder), ("pre", pre_ln_decoder)):
        block = nc.TransformerDecoderBlock(8, 2, position=position, rng=3)
        difference = np.abs(by_hand(block, target, memory) - block(target, memory)).max()
        print(f"{position:<5}", tr("max |written out - TransformerDecoderBlock| = {difference:.1e}").format(
            difference=difference))
        assert difference < 1e-12
    """),
    md(r"""
    What the position changes for the gradient: in Pre-LN, each line is
    $x \leftarrow x + F(\operatorname{Norm}(x))$, so the output's gradient reaches the block's
    input along the identity path untouched, $\bar{x} = \bar{y} + \dots$, through all three
    sub-layers; in Post-LN every line ends in a norm, so every gradient, the identity path's
    included, goes through `norm3`, `norm2` and `norm1`'s backward on its way down. The
    memory's gradient is the cross-attention's key gradient plus its value gradient
    (`backward` returns both `dx` and `dmemory`). With the three branches silenced (their
    output projections set to zero), the Pre-LN block's backward is exactly the identity and
    the Post-LN block's is not:
    """, zh=r"""
    位置对梯度改变了什么：在 Pre-LN 中每一行都是 $x \leftarrow x + F(\operatorname{Norm}(x))$，
    所以输出的梯度沿恒等分支原封不动地到达块的输入，$\bar{x} = \bar{y} + \dots$，穿过全部三个
    子层；在 Post-LN 中每一行都以归一化层结尾，所以每一份梯度，包括恒等分支上的那份，往下传时都
    要经过 `norm3`、`norm2` 和 `norm1` 的反向。memory 的梯度是交叉注意力的键梯度加上值梯度
    （`backward` 同时返回 `dx` 和 `dmemory`）。把三个分支静音（把它们的输出投影置零）之后，
    Pre-LN 块的反向恰好是恒等映射，Post-LN 块的则不是：
    """),
    code(r"""
    dy = rng.standard_normal(target.shape)
    for position in ("pre", "post"):
        block = nc.TransformerDecoderBlock(8, 2, position=position, rng=3)
        for projection in (block.self_attn.o, block.cross_attn.o, block.ffn.fc2):
            projection.weight.data[...] = 0
        block(target, memory)
        dx, dmemory = block.backward(dy)
        print(f"{position:<5} max |dx - dy| = {np.abs(dx - dy).max():.2f}   max |dmemory| = {np.abs(dmemory).max():.2f}")
    """),
    md(r"""
    ## Where next

    * `normcore explain softmax --shape 4x4 --causal` and `normcore explain layernorm` print the
      two tapes above.
    * `normcore gradcheck --only TransformerBlock` checks every block position.
    """, zh=r"""
    ## 接下来

    * `normcore --lang zh explain softmax --shape 4x4 --causal` 和
      `normcore --lang zh explain layernorm` 打印上面的两张计算图。
    * `normcore --lang zh gradcheck --only TransformerBlock` 检查块的每一种位置。
    """),
]
