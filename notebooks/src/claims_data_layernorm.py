"""The claims notebook's rows on LayerNorm: its axes, the printed example, eps, gamma and beta,
outlier features, PyTorch's defaults.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_layernorm.py's, under the row's id.
"""

from claims_rows import claim, zh, REPRODUCED, WRONG, W1_LN, W1_RMS, W3_BN, W3_LN

ROWS = [
    claim("ln-axes", "LayerNorm", ["W1", "W2", "W3", "W4"],
          "LayerNorm: one mean and variance per sample (token), independent of the batch",
          "LayerNorm standardises each sample (each token) over its own features, with the "
          "biased variance and eps inside the square root, so it does not depend on the batch "
          "size or on the other samples. (W2 adds eps to the standard deviation instead; the "
          "row on where eps goes, below, judges that.)",
          REPRODUCED,
          "normcore's LayerNorm equals the formula, and a token's output is the same alone and "
          "inside any batch.",
          zh=zh(
              {"W1": W1_LN + " › 原理与公式", "W2": "层归一化", "W3": W3_LN, "W4": "LayerNorm 方法"},
              "LayerNorm：每个样本（token）一组均值和方差，与 batch 无关",
              "LayerNorm 对每个样本（每个 token）在它自己的特征上做标准化，用有偏方差，eps 在根号里，"
              "所以它不依赖批次大小，也不依赖其他样本。（W2 则把 eps 加在标准差上；eps 该放在哪里，由下面"
              "关于 eps 的那一行评判。）",
              "normcore 的 LayerNorm 与公式相等，一个 token 无论单独输入还是放在任何 batch 里，输出都一样。")),
    claim("ln-printed", "LayerNorm", ["W3"],
          "W3's printed LayerNorm example (2 x 2 x 4)",
          "W3 prints a (2, 2, 4) input and the output of its LayerNorm and of nn.LayerNorm(4): "
          "the same to 4 decimals.",
          REPRODUCED,
          "Run on the printed input, normcore's LayerNorm(4) gives 7 of the 16 printed entries "
          "to the digit and the other 9 one unit off in the 4th decimal; an input that prints "
          "as W3's (every entry within 5e-5 of it) gives all 16 printed digits. The printed "
          "output is right; the printed input is rounded.",
          zh=zh(
              {"W3": W3_LN},
              "W3 打印的 LayerNorm 例子（2 x 2 x 4）",
              "W3 打印了一个 (2, 2, 4) 的输入，以及它的 LayerNorm 和 nn.LayerNorm(4) 的输出：保留 4 位小数"
              "完全相同。",
              "在打印出的输入上运行，normcore 的 LayerNorm(4) 给出的 16 个值里有 7 个逐位相同，另外 9 个在"
              "第 4 位小数上差 1；一个打印出来与 W3 相同的输入（每个值都在其 5e-5 以内）能给出全部 16 个"
              "打印值。打印的输出是对的；打印的输入被舍入了。")),
    claim("ln-output-shape", "LayerNorm", ["W3"],
          "W3's LayerNorm returns a [batch_size, seq_len, 1] tensor (its shape comment)",
          "W3's hand-written LayerNorm comments its output's shape as [batch_size, seq_len, 1].",
          WRONG,
          "A slip in a comment, not in the code: the output has the input's shape, [batch_size, "
          "seq_len, hidden_size]; [batch_size, seq_len, 1] is the shape of the statistics (the "
          "mean and variance, one per token, kept with keepdims so that they broadcast). W3's "
          "own RMSNorm code comments its output correctly.",
          zh=zh(
              {"W3": W3_LN},
              "W3 的 LayerNorm 返回 [batch_size, seq_len, 1] 的张量（它的形状注释）",
              "W3 手写的 LayerNorm 把输出的形状注释为 [batch_size, seq_len, 1]。",
              "这是注释里的笔误，代码没错：输出和输入形状相同，为 [batch_size, seq_len, hidden_size]；"
              "[batch_size, seq_len, 1] 是统计量的形状（均值和方差，每个 token 一个，用 keepdims 保留维度"
              "以便广播）。W3 自己的 RMSNorm 代码对输出形状的注释是对的。")),
    claim("eps-outside-sqrt", "LayerNorm", ["W1", "W2"],
          "divide by the standard deviation (or RMS) plus eps",
          "W2 writes LayerNorm and BatchNorm as (x - mu) / (sigma + eps), and W1 and W2 write "
          "RMSNorm as x / (RMS(x) + eps).",
          REPRODUCED,
          "A convention, not a mistake. The RMSNorm authors' PyTorch reference code "
          "(bzhangGo/rmsnorm, rmsnorm_torch.py) divides by RMS + eps, and the Annotated "
          "Transformer (harvardnlp) writes LayerNorm as (x - mean) / (std + eps), with torch's "
          "unbiased std; PyTorch and normcore put eps inside the square root, (x - mu) / "
          "sqrt(sigma^2 + eps), as do the RMSNorm authors' TensorFlow code and W1's own RMSNorm "
          "code (rsqrt(mean(x^2) + eps)). "
          "The two outputs differ by the factor sqrt(sigma^2 + eps) / (sigma + eps) exactly, so "
          "they agree unless the variance is comparable to eps: with eps = 1e-5, measured "
          "below, 1 - 5e-6 at variance 1, 1.0004 at 1e-2, 1.05 at 1e-4, 1.41 at 1e-5 and 3.3 "
          "at 1e-6. Mixing them is what goes wrong: a layer written one way and checked "
          "against, or loaded into, the other differs on rows of small variance. normcore's "
          "practice exercises ask for PyTorch's convention, so there an answer with eps outside "
          "is graded as this mistake (for RMSNorm it is recognised as the authors' published "
          "variant).",
          zh=zh(
              {"W1": W1_RMS + " › 原理与公式", "W2": ("层归一化", "批量归一化", "RMS 归一化")},
              "除以标准差（或 RMS）再加 eps",
              "W2 把 LayerNorm 和 BatchNorm 写成 (x - mu) / (sigma + eps)，W1 和 W2 把 RMSNorm 写成 "
              "x / (RMS(x) + eps)。",
              "这是一种约定，不是错误。RMSNorm 作者的 PyTorch 参考代码（bzhangGo/rmsnorm 中的 "
              "rmsnorm_torch.py）除以的正是 RMS + eps，Annotated Transformer（harvardnlp）也把 LayerNorm "
              "写成 (x - mean) / (std + eps)，用的是 torch 的无偏标准差；PyTorch 和 normcore 则把 eps 放在"
              "根号里：(x - mu) / sqrt(sigma^2 + eps)，RMSNorm 作者的 TensorFlow 代码和 W1 自己的 RMSNorm "
              "代码（rsqrt(mean(x^2) + eps)）也是这样。两种写法的输出恰好相差 sqrt(sigma^2 + eps) / "
              "(sigma + eps) 倍，所以除非方差与 eps 相当，两者是一致的：eps = 1e-5 时，下面实测，方差为 1 "
              "时是 1 - 5e-6，1e-2 时 1.0004，1e-4 时 1.05，1e-5 时 1.41，1e-6 时 3.3。出问题的是混用："
              "按一种写法实现的层，拿去和另一种对照，或加载另一种的权重，在方差小的行上就会不一致。normcore "
              "的练习题要求 PyTorch 的约定，所以在那里把 eps 放在根号外的答案会被判为这个错误（对 RMSNorm，"
              "评分器会认出这是作者发表的变体）。"),
          catalog="eps-outside-sqrt"),
    claim("gamma-beta", "LayerNorm", ["W1", "W4"],
          "gamma and beta let the network undo the normalization",
          "Forcing every layer's data to mean 0 and variance 1 could cost expressiveness; the "
          "learned gamma and beta let the network restore the scale and offset it needs.",
          REPRODUCED,
          "For BatchNorm exactly: gamma = sqrt(var + eps) and beta = mean give back the input "
          "(to 4e-15). For LayerNorm only in part: its gamma and beta are per feature while its "
          "statistics are per sample, so no gamma and beta restore rows of different scales "
          "(the best fit below leaves a large error).",
          zh=zh(
              {"W1": "注：为什么最后都需要乘以可学习的参数？", "W4": "归一化的可学习参数"},
              "gamma 和 beta 让网络能撤销归一化",
              "把每一层的数据都强行变成均值 0、方差 1 可能损失表达能力；可学习的 gamma 和 beta 让网络能恢复"
              "它需要的尺度和偏移。",
              "对 BatchNorm 完全成立：取 gamma = sqrt(var + eps)、beta = mean 就能还原输入（误差 4e-15）。"
              "对 LayerNorm 只部分成立：它的 gamma 和 beta 按特征设置，而统计量按样本计算，所以没有哪组 "
              "gamma 和 beta 能还原尺度各不相同的行（下面的最佳拟合仍留下很大的误差）。")),
    claim("ln-similar-distribution", "LayerNorm", ["W2"],
          "LayerNorm makes the features similarly distributed across samples",
          "LayerNorm normalises each sample's features, so that the features have a similar "
          "distribution from one sample to another, which helps training and generalisation.",
          REPRODUCED,
          "Partly right, and the right part is reproduced here: every sample's features get "
          "mean 0 and variance 1 (below, for every sample), so in those two numbers each "
          "sample's features are distributed alike. That is all LayerNorm matches. A given "
          "feature is not "
          "made similar across the samples: below, with four features of different means and "
          "spreads, each feature's mean across the samples stays different after LayerNorm "
          "(-0.3 to 1.4) and its spread is not 1 (0.23 to 0.61). Standardising each feature "
          "across the samples is BatchNorm's job. Nor is the shape of a sample's features made "
          "alike: LayerNorm is an affine map of each row, so a row with one outlier keeps it "
          "(next row). That this helps training and generalisation is not measured here.",
          zh=zh(
              {"W2": "层归一化"},
              "LayerNorm 让各个样本的特征分布相近",
              "LayerNorm 对每个样本的特征做归一化，使得不同样本之间的特征分布相近，有利于训练和泛化。",
              "部分正确，正确的那部分在此复现：每个样本的特征都被变成均值 0、方差 1（下面，每个样本都是"
              "如此），所以就这两个数而言，各个样本的特征分布是一样的。LayerNorm 对齐的也只有这两个数。"
              "某个特征在不同样本之间并不会变得相近：下面有四个均值和离散程度各不相同的特征，经过 "
              "LayerNorm 后，每个特征在样本间的均值仍然不同（-0.3 到 1.4），离散程度也不是 1（0.23 到 "
              "0.61）。在样本间对每个特征做标准化是 BatchNorm 的事。一个样本内各特征的分布形状也不会变得"
              "一样：LayerNorm 对每一行是仿射变换，有离群值的行仍然保留它（下一行）。这是否有利于训练和"
              "泛化，这里没有测量。")),
    claim("ln-outlier-feature", "LayerNorm", ["W1"],
          "LayerNorm is sensitive to features of very uneven size",
          "LayerNorm is sensitive to the feature dimension: if the features are unevenly "
          "distributed, normalization works less well.",
          REPRODUCED,
          "One large feature sets the row's mean and variance, and the other features are "
          "squeezed: below, adding 60 to one of 64 features shrinks the spread of the other 63 "
          "after LayerNorm from 1.0 to 0.13. Large Transformers do grow such outlier features, a "
          "few dimensions far larger than the rest (Dettmers et al. 2022 report them in every "
          "layer of models above about 6.7B parameters, and they are what makes their int8 "
          "quantisation hard); W1 gives no source, but this one is documented.",
          zh=zh(
              {"W1": W1_LN + " › 优缺点与适用场景"},
              "LayerNorm 对大小极不均匀的特征很敏感",
              "LayerNorm 对特征维度敏感：如果特征分布不均，归一化效果会受影响。",
              "一个很大的特征决定了整行的均值和方差，其余特征被挤压：下面，在 64 个特征中给一个加上 60，"
              "其余 63 个经 LayerNorm 后的离散程度从 1.0 缩小到 0.13。大型 Transformer 确实会长出这样的"
              "离群特征，少数几个维度远大于其余维度（Dettmers 等 2022 报告，参数量超过约 6.7B 的模型每一层"
              "都有，它们也是这些模型难以做 int8 量化的原因）；W1 没有给出处，但这一点是有文献记载的。")),
    claim("affine-defaults", "LayerNorm", ["W3"],
          "PyTorch's LayerNorm and BatchNorm are affine by default",
          "PyTorch's nn.LayerNorm controls the learnable gamma and beta with "
          "elementwise_affine, True by default; nn.BatchNorm1d, 2d and 3d are affine by default "
          "(affine=True).",
          REPRODUCED,
          "Both defaults are as W3 says, checked below on torch (when it is installed) and on "
          "normcore, which keeps PyTorch's: a LayerNorm or BatchNorm made without arguments has "
          "a weight of ones and a bias of zeros, and elementwise_affine=False or affine=False "
          "leaves none.",
          zh=zh(
              {"W3": (W3_LN, W3_BN)},
              "PyTorch 的 LayerNorm 和 BatchNorm 默认带仿射变换",
              "PyTorch 的 nn.LayerNorm 用 elementwise_affine 控制可学习的 gamma 和 beta，默认为 True；"
              "nn.BatchNorm1d、2d、3d 默认也带仿射变换（affine=True）。",
              "两个默认值都如 W3 所说，下面在 torch（如果已安装）和 normcore 上做了核对；normcore 沿用 PyTorch "
              "的默认值：不带参数创建的 LayerNorm 或 BatchNorm，weight 全为 1，bias 全为 0；"
              "elementwise_affine=False 或 affine=False 时则两者都没有。")),
]
