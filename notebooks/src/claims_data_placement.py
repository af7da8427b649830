"""The claims notebook's rows on where the norm sits (Pre-Norm and Post-Norm): the identity path,
the output's size, depth and width.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_placement.py's, under the row's id.
"""

from claims_rows import claim, zh, REPRODUCED, DISPUTED, UNSUPPORTED, W3_POSITION

ROWS = [
    claim("encoder-decoder", "Pre-Norm and Post-Norm", ["W3"],
          "the Post-LN and Pre-LN encoder-decoder, in pseudo-code",
          "W3 writes the Transformer decoder as three residual sub-layers: masked self-attention, "
          "attention to the encoder's output (cross-attention), a feed-forward; each followed "
          "by a LayerNorm of the residual sum (Post-LN), or with a LayerNorm on each sub-layer's "
          "input (Pre-LN).",
          REPRODUCED,
          "Written line by line with the sub-layers of a normcore TransformerDecoderBlock "
          "(its causal self-attention, its MultiheadAttention reading the encoder's output as "
          "keys and values, its feed-forward and its three LayerNorms), W3's pseudo-code gives "
          "exactly the block's output, in both positions. One thing the Pre-LN pseudo-code leaves "
          "out: a Pre-LN stack's output is a sum that no norm has seen, so a Pre-LN model adds a "
          "final LayerNorm after the encoder (its output is what the decoder attends to) and one "
          "after the decoder; normcore's TinySeq2Seq has both for position='pre' and neither "
          "for 'post'.",
          zh=zh(
              {"W3": W3_POSITION},
              "Post-LN 与 Pre-LN 的编码器-解码器伪代码",
              "W3 把 Transformer 解码器写成三个残差子层：带掩码的自注意力、对编码器输出的注意力（交叉注意力）、"
              "前馈网络；每个子层之后对残差和做一次 LayerNorm（Post-LN），或者对每个子层的输入做 LayerNorm"
              "（Pre-LN）。",
              "用 normcore TransformerDecoderBlock 的各个子层（它的因果自注意力、把编码器输出当作 key 和 value "
              "的 MultiheadAttention、前馈网络和三个 LayerNorm）逐行写出来，W3 的伪代码在两种位置下都恰好"
              "给出这个块的输出。Pre-LN 伪代码漏了一点：Pre-LN 堆叠的输出是一个没有经过任何归一化层的和，"
              "所以 Pre-LN 模型要在编码器之后（解码器关注的就是它的输出）和解码器之后各加一个最终的 "
              "LayerNorm；normcore 的 TinySeq2Seq 在 position='pre' 时两个都有，'post' 时都没有。")),
    claim("post-identity-weight", "Pre-Norm and Post-Norm", ["W3", "W4"],
          "Post-Norm at init: (x + F(x)) / sqrt(2), the input's weight 2^(-l/2)",
          "If x and F(x) are independent with variance 1, x + F(x) has variance 2 and the norm "
          "divides it by sqrt(2); repeated, the identity branch x_0 keeps only 2^(-l/2) of its "
          "weight after l Post-Norm layers, so the model leans on the residual branches.",
          REPRODUCED,
          "Under the write-ups' assumption (a variance-preserving branch, uncorrelated with its "
          "input, as at initialisation) the measured weight of x_0 follows 2^(-l/2) closely: 0.49 "
          "against 0.5 after 2 layers, 0.050 against 0.0625 after 8 (each layer keeps about "
          "0.69 of it on average instead of 0.71). The assumption is the write-ups': a branch "
          "that does not keep the variance makes the factor sqrt(1 + Var F(x)) instead of "
          "sqrt(2).",
          zh=zh(
              {"W3": W3_POSITION, "W4": ("方差假设与归一化的作用", "恒等分支被削弱")},
              "初始化时的 Post-Norm：(x + F(x)) / sqrt(2)，输入的权重为 2^(-l/2)",
              "如果 x 和 F(x) 独立、方差都为 1，x + F(x) 的方差为 2，归一化层把它除以 sqrt(2)；反复下去，"
              "经过 l 个 Post-Norm 层后，恒等分支 x_0 只剩 2^(-l/2) 的权重，所以模型依赖残差分支。",
              "在两篇文章的假设下（分支保持方差、与其输入不相关，如同初始化时），测得的 x_0 权重与 2^(-l/2) "
              "吻合得很好：2 层后 0.49 对 0.5，8 层后 0.050 对 0.0625（每层平均保留约 0.69，而不是 0.71）。"
              "这个假设是两篇文章的：分支不保持方差时，因子变为 sqrt(1 + Var F(x)) 而不是 sqrt(2)。")),
    claim("post-fixed-size", "Pre-Norm and Post-Norm", ["W4"],
          "Post-Norm keeps the stream's size fixed; the residual sum alone lets it grow",
          "A residual stack without a norm on the stream lets each layer's output grow with "
          "depth; Post-Norm rescales after every residual sum and so holds the size steady.",
          REPRODUCED,
          "Measured on the variance-preserving stack: the stream's RMS stays at 1 through 8 "
          "Post-Norm layers, and grows to 3 through 8 Pre-Norm layers, whose stream is never "
          "normalised (only each branch's input is).",
          zh=zh(
              {"W4": "残差连接的理解"},
              "Post-Norm 让残差流的大小保持不变；只有残差和的话它会增长",
              "残差流上不加归一化层的残差堆叠，每层的输出都随深度增长；Post-Norm 在每次残差相加后重新缩放，"
              "所以能保持大小稳定。",
              "在保持方差的堆叠上测量：经过 8 个 Post-Norm 层，残差流的 RMS 保持在 1；经过 8 个 Pre-Norm "
              "层，它增长到 3，因为 Pre-Norm 的残差流从不被归一化（被归一化的只是每个分支的输入）。")),
    claim("pre-identity-path", "Pre-Norm and Post-Norm", ["W1", "W3", "W4"],
          "Pre-Norm: x_L = x_0 + sum of branches; the identity weight stays 1",
          "In Pre-Norm x_{t+1} = x_t + F_t(Norm(x_t)) unrolls to x_0 plus the sum of every "
          "branch: the identity branch keeps weight 1, the gradient reaches the input directly, "
          "and the stream's size grows with depth (W4).",
          REPRODUCED,
          "The weight of x_0 stays at about 1 (0.97 to 1.00) at every depth, the stream's RMS "
          "grows like sqrt(1 + l), "
          "and in stacks of 2, 8 and 32 normcore Pre-LN TransformerBlocks at initialisation the "
          "gradient reaching the input measured larger than the output's (1.7, 3.3 and 5.3 "
          "times), growing with depth. That is an observation at initialisation, not a "
          "guarantee: the identity path passes dL/dy through untouched, but the branches' part "
          "is added to it and could in principle cancel some of it; here it does not.",
          zh=zh(
              {"W1": "Pre-Norm（Norm 在残差前）", "W3": W3_POSITION, "W4": "PreNorm 推导"},
              "Pre-Norm：x_L = x_0 + 各分支之和；恒等分支的权重保持为 1",
              "在 Pre-Norm 中，x_{t+1} = x_t + F_t(Norm(x_t)) 展开后是 x_0 加上所有分支之和：恒等分支的"
              "权重保持为 1，梯度直接到达输入，残差流的大小随深度增长（W4）。",
              "x_0 的权重在每个深度都保持在 1 左右（0.97 到 1.00），残差流的 RMS 按 sqrt(1 + l) 增长；在由 "
              "2、8、32 个 normcore Pre-LN TransformerBlock 组成、处于初始化状态的堆叠中，到达输入的梯度比"
              "输出处的大（1.7、3.3、5.3 倍），并随深度增长。这是初始化时的观察，不是保证：恒等路径把 "
              "dL/dy 原样传回，但分支的那一份会加到上面，原则上可能抵消掉一部分；这里没有。")),
    claim("pre-gradient-identity", "Pre-Norm and Post-Norm", ["W4"],
          "Pre-Norm's gradient goes mainly through the identity branch, so it may train slower",
          "In Pre-Norm the gradient mainly takes the identity branch, so the optimiser has to "
          "work harder to update the branches' parameters and training may be slower.",
          UNSUPPORTED,
          "W4 gives no source, and what can be measured here does not support the premise, "
          "though it is measured only at initialisation: there the part of the input gradient "
          "that comes through the branches is larger than the part the identity branch carries "
          "(dL/dy itself), and grows with depth in every initialisation (below, over 4 of them: "
          "1.5 to 1.8, 2.8 to 3.9 and 5.3 to 8.2 times as large for 2, 8 and 32 blocks). How the split "
          "moves during training, and whether Pre-Norm trains slower, this notebook does not "
          "measure.",
          zh=zh(
              {"W4": "PreNorm 推导"},
              "Pre-Norm 的梯度主要走恒等分支，所以可能训练得更慢",
              "在 Pre-Norm 中，梯度主要经恒等分支传回，所以优化器更新各分支的参数更费力，训练可能更慢。",
              "W4 没有给出处，这里能测量的结果也不支持这个前提，不过只测了初始化时：那时输入梯度中经分支"
              "传回的部分比恒等分支携带的部分（即 dL/dy 本身）更大，并且在每次初始化中都随深度增长（下面，"
              "4 次初始化：2、8、32 个块时分别是 1.5 到 1.8、2.8 到 3.9、5.3 到 8.2 倍）。训练过程中这个"
              "比例怎样变化，Pre-Norm 是否训练得更慢，本 notebook 都没有测量。")),
    claim("pre-wider-not-deeper", "Pre-Norm and Post-Norm", ["W1", "W3"],
          "Pre-Norm's layers merge into a wider one, so it underperforms Post-Norm",
          "Deep in a Pre-Norm stack consecutive inputs x_t and x_{t+1} are nearly the same, so "
          "two layers act like one wider layer: the effective depth is less than the real "
          "depth, and Pre-Norm ends up worse than Post-Norm of the same depth (W1: its layers "
          "update alike, so a deep Pre-Norm stack is more like widening than deepening).",
          DISPUTED,
          "The premise is reproduced: the cosine between consecutive Pre-Norm inputs climbs "
          "toward 1 (sqrt((1 + l) / (2 + l)) in theory). The conclusion is an argument (Su "
          "2022, the blog post W3 cites), and the literature disagrees on it: Liu et al. (2020) "
          "report Post-LN ahead of Pre-LN when it is made to train, Xiong et al. (2020) report "
          "Pre-LN as good or better without warmup, and most large models since are Pre-LN. "
          "Settling it needs trained models far larger than this notebook's, so it is not "
          "tested here.",
          zh=zh(
              {"W1": ("Pre-Norm（Norm 在残差前）", "2. 核心区别：训练稳定性 vs 模型表达力"),
               "W3": W3_POSITION},
              "Pre-Norm 的层会合并成更宽的一层，所以效果不如 Post-Norm",
              "在 Pre-Norm 堆叠的深处，相邻的输入 x_t 和 x_{t+1} 几乎相同，所以两层的作用就像一个更宽的层："
              "有效深度小于真实深度，Pre-Norm 最终不如同样深度的 Post-Norm（W1：各层的更新量相近，所以"
              "深层的 Pre-Norm 更像是在加宽而不是加深）。",
              "前提复现了：相邻 Pre-Norm 输入之间的余弦趋近于 1（理论上是 sqrt((1 + l) / (2 + l))）。结论"
              "是一个论证（苏剑林 2022，W3 引用的博客），文献对它意见不一：Liu 等（2020）报告，Post-LN 只要"
              "能训练起来就领先于 Pre-LN，Xiong 等（2020）报告 Pre-LN 不用 warmup 也一样好或更好，而此后"
              "大多数大模型都是 Pre-LN。要判定它，需要远大于本 notebook 的训练好的模型，所以这里不做检验。")),
    claim("depth-vs-width", "Pre-Norm and Post-Norm", ["W3"],
          "a basic rule: a network's depth matters more than its width",
          "It is basic knowledge in deep learning that depth matters more than width; since "
          "Pre-Norm turns depth into width, it should do worse.",
          DISPUTED,
          "There are functions that depth buys cheaply and width only at great cost (Telgarsky "
          "2016; Eldan & Shamir 2016), measured below: composing a two-ReLU 'tent' L times gives "
          "a sawtooth of 2^L linear pieces from 2L ReLUs, and a network of one hidden ReLU "
          "layer needs a ReLU per kink, 2^L - 1 of them (255 for L = 8, against 16). But as a "
          "general rule for trained networks it is disputed: wide residual networks (Zagoruyko "
          "& Komodakis 2016) match much deeper ones, and Kaplan et al. (2020) find a language "
          "model's loss depends little on its depth-to-width shape at a fixed number of "
          "parameters, over a wide range. W3 cites no source for it.",
          zh=zh(
              {"W3": W3_POSITION},
              "一条基本常识：网络的深度比宽度更重要",
              "深度学习的基本常识是深度比宽度更重要；既然 Pre-Norm 把深度变成了宽度，它的效果应该更差。",
              "确实存在一些函数，用深度得到很便宜，用宽度则代价极大（Telgarsky 2016；Eldan 和 Shamir 2016），"
              "下面做了测量：把一个由两个 ReLU 组成的“帐篷”函数复合 L 次，用 2L 个 ReLU 得到一个有 2^L 段"
              "线性部分的锯齿波，而单隐藏层的 ReLU 网络每个拐点都需要一个 ReLU，共 2^L - 1 个（L = 8 时是 "
              "255 个，对 16 个）。但作为训练好的网络的一般规律，这是有争议的：宽残差网络（Zagoruyko 和 "
              "Komodakis 2016）能与深得多的网络打平，Kaplan 等（2020）发现，在参数量固定时，语言模型的损失"
              "在很大范围内几乎不取决于深宽比。W3 没有给出处。")),
]
