"""The claims notebook's rows on BatchNorm's statistics: its axes, the write-ups' printed example,
the running statistics and their momentum, evaluation mode.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_batchnorm.py's, under the row's id.
"""

from claims_rows import claim, zh, REPRODUCED, WRONG, W1_BN, W3_BN, W4_STATS

ROWS = [
    claim("bn-axes", "BatchNorm", ["W1", "W3", "W4"],
          "BatchNorm: one mean and variance per feature, over the batch (the class-scores table)",
          "BatchNorm standardises each feature over the samples of the batch, with the biased "
          "variance and eps inside the square root, then scales by gamma and shifts by beta. "
          "On W4's table of two students' scores it averages each subject over the students "
          "(Chinese: (90 + 60) / 2 = 75), where LayerNorm averages each student over the "
          "subjects (student A: 80).",
          REPRODUCED,
          "normcore's BatchNorm1d equals the formula to rounding, and its per-column means are "
          "W4's. A word on W4's mnemonic: it calls BatchNorm the horizontal (横向) comparison "
          "and LayerNorm the vertical (纵向) one, while its own recipe reads BatchNorm down a "
          "column (竖着看) and LayerNorm along a row (横着看): BatchNorm compares a student with "
          "the others, LayerNorm a student's subjects with each other.",
          zh=zh(
              {"W1": W1_BN + " › 原理与公式", "W3": W3_BN, "W4": "\"平均值\"和\"标准差\"是怎么算出来的?"},
              "BatchNorm：每个特征一组均值和方差，在 batch 上计算（成绩表的例子）",
              "BatchNorm 对每个特征在 batch 内的样本上做标准化，用有偏方差，eps 在根号里，然后乘以 gamma 缩放、"
              "加上 beta 平移。在 W4 两个学生成绩的表上，它对每一科在学生之间求平均（语文：(90 + 60) / 2 "
              "= 75），而 LayerNorm 对每个学生在各科之间求平均（学生 A：80）。",
              "normcore 的 BatchNorm1d 与公式在舍入误差内相等，按列求得的均值就是 W4 的那些。关于 W4 的"
              "口诀多说一句：它把 BatchNorm 叫作“横向比”、LayerNorm 叫作“纵向比”，而它自己的算法却是 "
              "BatchNorm 竖着看（按列）、LayerNorm 横着看（按行）：BatchNorm 是拿一个学生和别人比，"
              "LayerNorm 是拿一个学生的各科自己比。")),
    claim("bn-index-slips", "BatchNorm", ["W4"],
          "W4's BatchNorm formulas: the variance's sum over x_i, the mean vector indexed up to m",
          "W4 writes the variance of feature k1 as (1/m) sum_i (x_i - mu_k1)^2, and gathers the "
          "per-feature statistics into mu = [mu_k1, mu_k2, ..., mu_km].",
          WRONG,
          "Two slips of notation in a derivation that is otherwise right. The variance of feature "
          "k1 sums (x_ik1 - mu_k1)^2, the k1-th entry of each sample: x_i is the whole sample, and "
          "taken literally the formula subtracts feature 1's mean from every feature (below: the "
          "right 0.46 for feature 1, and 30 and 9.3 for features that are not feature 1's at "
          "all). And there is one mean per feature, k of them, not m (the batch size): the last "
          "index should be k, not m. The text around the formulas says the right thing.",
          zh=zh(
              {"W4": "BatchNorm 方法"},
              "W4 的 BatchNorm 公式：方差对 x_i 求和，均值向量的下标写到 m",
              "W4 把特征 k1 的方差写成 (1/m) sum_i (x_i - mu_k1)^2，并把各特征的统计量写成 "
              "mu = [mu_k1, mu_k2, ..., mu_km]。",
              "推导本身是对的，只是有两处记号笔误。特征 k1 的方差应对 (x_ik1 - mu_k1)^2 求和，即每个样本的"
              "第 k1 个分量：x_i 是整个样本，照字面理解，公式会从每个特征里都减去特征 1 的均值（下面：特征 "
              "1 得到正确的 0.46，而另外两个特征得到 30 和 9.3，根本不是特征 1 的方差）。另外，每个特征一个"
              "均值，共 k 个，而不是 m 个（m 是批次大小）：最后的下标应是 k 而不是 m。公式周围的文字说得是对的。")),
    claim("bn-printed", "BatchNorm", ["W3"],
          "W3's printed BatchNorm example (4 x 3, training mode)",
          "W3 prints a 4 x 3 input and the training-mode output of its BatchNorm and of "
          "PyTorch's nn.BatchNorm1d(3), the same to 4 decimals.",
          REPRODUCED,
          "Run on the printed input, normcore's BatchNorm1d(3) gives 10 of the 12 printed "
          "entries to the digit and the other 2 one unit off in the 4th decimal. That is the "
          "printed input's rounding, not a disagreement: W3's input was printed to 4 decimals, "
          "and an input that prints the same (every entry within 5e-5 of it) gives all 12 "
          "printed digits (`reproduce_printed` finds one). The printout is right, and yet W3's "
          "class is not: its running statistics are wrong, which a training-mode printout "
          "cannot show (see 'W3's BatchNorm matches nn.BatchNorm1d' below).",
          zh=zh(
              {"W3": W3_BN},
              "W3 打印的 BatchNorm 例子（4 x 3，训练模式）",
              "W3 打印了一个 4 x 3 的输入，以及它的 BatchNorm 和 PyTorch 的 nn.BatchNorm1d(3) 在训练模式下"
              "的输出，两者保留 4 位小数完全相同。",
              "在打印出的输入上运行，normcore 的 BatchNorm1d(3) 给出的 12 个值里有 10 个逐位相同，另外 2 个"
              "在第 4 位小数上差 1。这是打印的输入被舍入造成的，不是分歧：W3 的输入只打印到 4 位小数，而一个"
              "打印出来相同的输入（每个值都在其 5e-5 以内）能给出全部 12 个打印值（`reproduce_printed` 找到"
              "了一个）。打印结果是对的，但 W3 的类并不对：它的移动统计量是错的，而训练模式的打印结果显示"
              "不出这一点（见下面“W3 的 BatchNorm 与 nn.BatchNorm1d 一致”一行）。")),
    claim("bn-per-position", "BatchNorm", ["W2"],
          "BatchNorm on a (b, s, d) tensor: statistics per position, over the batch only",
          "W2 writes BatchNorm on a (b, s, d) tensor with a mean and a standard deviation for "
          "each (s, d) pair, taken over the b sequences only (gamma and beta per feature d).",
          REPRODUCED,
          "A legitimate variant, not the usual layer: it is BatchNorm1d(s * d) applied to the "
          "tensor flattened to (b, s * d), each (position, feature) pair a channel of its own, "
          "which suits fixed-length inputs whose positions mean the same thing in every sample "
          "(normcore computes it that way below, equal to W2's formula to rounding). It is not "
          "what PyTorch's BatchNorm1d does to a sequence: on (N, C, L) that keeps one mean and "
          "variance per feature, over the batch *and* the positions, and the two differ. The "
          "per-position variant has s times as many statistics, each from only b numbers (with "
          "b = 2 every output is -1 or +1 up to eps, here 0.99 to 1 in size), and it cannot "
          "take sequences of another length. Written where an exercise asks for BatchNorm1d on "
          "(N, C, L), it is the catalogued mistake named below.",
          zh=zh(
              {"W2": "批量归一化"},
              "(b, s, d) 张量上的 BatchNorm：每个位置一组统计量，只在 batch 上计算",
              "W2 在 (b, s, d) 张量上写的 BatchNorm，对每一对 (s, d) 各有一个均值和标准差，只在 b 个序列上"
              "计算（gamma 和 beta 按特征 d 各一个）。",
              "这是一个合理的变体，但不是通常的那种层：它相当于把张量展平成 (b, s * d) 后用 "
              "BatchNorm1d(s * d)，每一对（位置，特征）自成一个通道，适合定长输入、且每个位置在各样本里含义"
              "相同的情形（下面 normcore 就这样计算，在舍入误差内等于 W2 的公式）。这不是 PyTorch 的 "
              "BatchNorm1d 对序列做的事：对 (N, C, L)，它对每个特征只保留一组均值和方差，在 batch *和*位置上"
              "一起计算，两者结果不同。按位置计算的变体有 s 倍的统计量，每个只来自 b 个数（b = 2 时每个输出"
              "都是 -1 或 +1，只差 eps，这里大小在 0.99 到 1 之间），而且不能处理别的长度的序列。在要求对 "
              "(N, C, L) 写 BatchNorm1d 的练习里这样写，就是下面点名的那个已收录的错误。"),
          catalog="bn-stats-per-position"),
    claim("bn-momentum-flipped", "BatchNorm", ["W3"],
          "running = momentum * running + (1 - momentum) * batch, with momentum = 0.1",
          "The running statistics are updated as running = momentum * running + (1 - momentum) "
          "* batch; W3's class uses this with momentum = 0.1, PyTorch's default, and compares "
          "itself with nn.BatchNorm1d.",
          WRONG,
          "In PyTorch (and normcore) momentum weights the *new* batch: running = (1 - momentum) "
          "* running + momentum * batch. W3's rule with 0.1 keeps 10% of the old value and takes "
          "90% of the batch, so after one step its running mean is 9 times PyTorch's. W4 writes "
          "the same formula but with momentum 0.9 to 0.999 and reads it that way throughout: "
          "the other (decay) convention, used consistently, so W4 is not wrong here (next "
          "claim). Only a number moved between the conventions without 1 - momentum goes wrong, "
          "as W3's 0.1 does.",
          zh=zh(
              {"W3": W3_BN},
              "running = momentum * running + (1 - momentum) * batch，且 momentum = 0.1",
              "移动统计量按 running = momentum * running + (1 - momentum) * batch 更新；W3 的类用这个公式，"
              "取 PyTorch 的默认值 momentum = 0.1，并拿自己和 nn.BatchNorm1d 比较。",
              "在 PyTorch（和 normcore）里，momentum 是*新* batch 的权重：running = (1 - momentum) * running + "
              "momentum * batch。W3 的公式取 0.1，保留旧值的 10%、取 batch 统计量的 90%，所以一步之后它的移动均值"
              "是 PyTorch 的 9 倍。W4 写的是同一个公式，但 momentum 取 0.9 到 0.999，并且自始至终按这个"
              "意思理解：这是另一种（衰减）约定，用得前后一致，所以 W4 在这里没有错（下一条）。只有把一个"
              "数从一种约定搬到另一种、却不换成 1 - momentum，才会出错，W3 的 0.1 就是这样。"),
          catalog="bn-momentum-flipped"),
    claim("momentum-decay", "BatchNorm", ["W4"],
          "a momentum closer to 1 gives smoother running statistics (decay convention)",
          "With running = momentum * running + (1 - momentum) * batch and momentum 0.9, 0.99 or "
          "0.999, a momentum closer to 1 reacts more slowly and smooths more.",
          REPRODUCED,
          "In this (Keras-style decay) convention the statement is right; in normcore's and "
          "PyTorch's the same layer has momentum = 1 - decay. Measured over 500 independent "
          "runs of 600 batches of 16 from N(3, 2^2): the running mean's noise is about 3 times "
          "smaller with decay 0.99 (momentum 0.01) than with decay 0.9 (momentum 0.1), as the "
          "average's theory predicts: batch noise times sqrt(m / (2 - m)).",
          zh=zh(
              {"W4": W4_STATS},
              "momentum 越接近 1，移动统计量越平滑（衰减约定）",
              "按 running = momentum * running + (1 - momentum) * batch，取 momentum 为 0.9、0.99 或 "
              "0.999，momentum 越接近 1，反应越慢、越平滑。",
              "在这种（Keras 式的衰减）约定下，这句话是对的；在 normcore 和 PyTorch 的约定下，同一个层的 "
              "momentum = 1 - decay。用 500 次独立运行测量，每次 600 个大小为 16、来自 N(3, 2^2) 的 batch："
              "decay 0.99（momentum 0.01）时移动均值的噪声比 decay 0.9（momentum 0.1）时小约 3 倍，与"
              "平均值理论的预测一致：batch 噪声乘以 sqrt(m / (2 - m))。")),
    claim("bn-running-var-biased", "BatchNorm", ["W3"],
          "the running variance is updated with the biased batch variance",
          "W3's class updates running_var with the batch variance it normalises with, the "
          "biased one (divided by n).",
          WRONG,
          "PyTorch and normcore normalise with the biased variance but feed the *unbiased* one "
          "(divided by n - 1) into running_var, because the running value estimates the "
          "population variance. With n = 4 the biased one is 3/4 of it, so running_var settles "
          "at 3/4 of the true variance (measured below over 2000 batches).",
          zh=zh(
              {"W3": W3_BN},
              "移动方差用有偏的 batch 方差更新",
              "W3 的类用它做归一化的那个 batch 方差，即有偏方差（除以 n），来更新 running_var。",
              "PyTorch 和 normcore 用有偏方差做归一化，但送进 running_var 的是*无偏*方差（除以 n - 1），"
              "因为移动值要估计的是总体方差。n = 4 时有偏方差是无偏方差的 3/4，所以 running_var 最终停在"
              "真实方差的 3/4（下面用 2000 个 batch 测得）。"),
          catalog="bn-running-var-biased"),
    claim("printed-test-passes", "BatchNorm", ["W3"],
          "W3's BatchNorm matches nn.BatchNorm1d (one training forward printed)",
          "W3's hand-written BatchNorm is shown to match PyTorch's by printing one training-mode "
          "forward of each: the same numbers.",
          WRONG,
          "One training forward uses only the batch's own statistics, so it cannot see the "
          "running statistics, and W3's class gets both wrong (flipped momentum, biased "
          "variance). Below, that class is written in NumPy next to normcore's BatchNorm1d: the "
          "training outputs agree to 1e-15, the running statistics do not, and so the "
          "evaluation outputs differ. A test of a BatchNorm must compare running_mean and "
          "running_var after a few steps, and the evaluation output, as normcore's grader does "
          "(`normcore practice check`).",
          zh=zh(
              {"W3": W3_BN},
              "W3 的 BatchNorm 与 nn.BatchNorm1d 一致（打印了一次训练模式的前向）",
              "W3 为了说明手写的 BatchNorm 与 PyTorch 的一致，各打印了一次训练模式的前向：数字相同。",
              "一次训练模式的前向只用到这个 batch 自己的统计量，所以看不到移动统计量，而 W3 的类恰恰在这两处"
              "都错了（动量方向反了、有偏方差）。下面用 NumPy 写出那个类，放在 normcore 的 BatchNorm1d "
              "旁边：训练输出在 1e-15 内一致，移动统计量不一致，于是推理输出也不同。测试一个 BatchNorm，"
              "必须在几步之后比较 running_mean 和 running_var，并比较推理输出，normcore 的评分器就是这么做的"
              "（`normcore practice check`）。"),
          catalog="bn-momentum-flipped, bn-running-var-biased"),
    claim("bn-eval-squared-var", "BatchNorm", ["W4"],
          "at inference divide by sqrt(running_var ** 2 + eps)",
          "At inference BatchNorm computes x_hat = (x - running_mean) / sqrt(running_var^2 + "
          "eps).",
          WRONG,
          "running_var already is a variance (sigma squared); squaring it again divides by "
          "sigma^2 instead of sigma. After training on data of variance 4 the evaluation outputs "
          "come out with a spread of about 1/2 instead of 1; on data of variance 1/4 they would "
          "be twice too large.",
          zh=zh(
              {"W4": W4_STATS},
              "推理时除以 sqrt(running_var ** 2 + eps)",
              "推理时 BatchNorm 计算 x_hat = (x - running_mean) / sqrt(running_var^2 + eps)。",
              "running_var 本身已经是方差（sigma 的平方）；再平方一次，就成了除以 sigma^2 而不是 sigma。"
              "在方差为 4 的数据上训练之后，推理输出的离散程度约为 1/2 而不是 1；在方差为 1/4 的数据上，"
              "输出会大一倍。"),
          catalog="bn-eval-squared-var"),
    claim("running-buffers", "BatchNorm", ["W4"],
          "gamma starts at 1 and beta at 0, running mean at 0 and variance at 1; only gamma and "
          "beta are learned",
          "gamma starts at 1 and beta at 0 (no scaling, no shift at first); running_mean starts "
          "at 0 and running_var at 1, updated by the moving average during training, and they "
          "take no part in backpropagation.",
          REPRODUCED,
          "normcore's BatchNorm starts from exactly these values, lists only gamma and beta "
          "(PyTorch's weight and bias) as parameters, and a backward pass leaves the running "
          "statistics untouched.",
          zh=zh(
              {"W4": ("归一化的可学习参数", W4_STATS)},
              "gamma 初始为 1、beta 为 0，移动均值初始为 0、移动方差为 1；只有 gamma 和 beta 是学出来的",
              "gamma 初始为 1、beta 为 0（一开始不缩放、不平移）；running_mean 初始为 0、running_var 为 1，"
              "训练时按移动平均更新，不参与反向传播。",
              "normcore 的 BatchNorm 正是从这些值开始的，参数里只有 gamma 和 beta（PyTorch 的 weight 和 "
              "bias），反向传播也不会动移动统计量。")),
    claim("eval-running-stats", "BatchNorm", ["W3", "W4"],
          "at inference BatchNorm uses the running statistics, so any batch size works",
          "At inference BatchNorm normalises with the running statistics gathered in training, "
          "because the inference batch is small (often one sample) and its own statistics would "
          "be unusable.",
          REPRODUCED,
          "In evaluation normcore's BatchNorm is a fixed affine map: a sample's output is the "
          "same alone or inside a batch. In training a single sample has no batch statistics: "
          "normcore (like PyTorch) refuses it with a ValueError.",
          zh=zh(
              {"W3": W3_BN, "W4": W4_STATS},
              "推理时 BatchNorm 使用移动统计量，所以任何批次大小都行",
              "推理时 BatchNorm 用训练中积累的移动统计量做归一化，因为推理的 batch 很小（常常只有一个样本），"
              "它自己的统计量没法用。",
              "在推理模式下，normcore 的 BatchNorm 是一个固定的仿射变换：一个样本无论单独输入还是放在 batch 里，"
              "输出都一样。在训练模式下，单个样本没有 batch 统计量：normcore（和 PyTorch 一样）会用 ValueError "
              "拒绝它。")),
    claim("single-sample-blowup", "BatchNorm", ["W4"],
          "on one sample the batch variance is 0 and the division blows up",
          "If inference used a single sample's own statistics, the variance would be tiny or "
          "zero and the division would blow up.",
          WRONG,
          "The numerator vanishes with the variance: one sample minus its own mean is 0, so "
          "x_hat = 0 / sqrt(eps) = 0 and the output is beta, whatever the input. Nothing blows "
          "up; the information is lost. In general |x_hat| <= sqrt(n - 1) for a batch of n "
          "(with two samples x_hat is always -1 and +1). W4's second point, that the output "
          "would hang on the few samples at hand, is the real problem.",
          zh=zh(
              {"W4": W4_STATS},
              "只有一个样本时，batch 方差为 0，除法会爆炸",
              "如果推理时用单个样本自己的统计量，方差会极小甚至为零，除法就会爆炸。",
              "分子随方差一起消失：一个样本减去它自己的均值是 0，所以 x_hat = 0 / sqrt(eps) = 0，无论输入"
              "是什么，输出都是 beta。没有任何东西爆炸；丢掉的是信息。一般地，大小为 n 的 batch 有 "
              "|x_hat| <= sqrt(n - 1)（两个样本时 x_hat 总是 -1 和 +1）。W4 的第二点，即输出会取决于手头"
              "那几个样本，才是真正的问题。")),
]
