"""The claims notebook's rows on what normalization is for: fixed distributions, the standard
normal, [0, 1], saturation, low precision, large inputs.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_purpose.py's, under the row's id.
"""

from claims_rows import claim, zh, REPRODUCED, WRONG

ROWS = [
    claim("fixed-distribution", "What normalization is for", ["W1"],
          "normalization fixes each layer's input distribution, and that is why it helps",
          "Normalization holds every layer's input at mean 0 and variance 1 for the whole of "
          "training; this cures internal covariate shift, which is why training becomes stable.",
          WRONG,
          "Two statements, with different verdicts. That normalization fixes the distribution: "
          "wrong, and that is the row's verdict, measured below. The statistics are fixed only "
          "*before* gamma and beta, which are learned: the next layer sees gamma * x_hat + beta, "
          "and that moves as they train (below: 200 SGD steps on a small regression shift a "
          "channel's mean by 0.42 and change a channel's standard deviation by 0.70); and only "
          "two moments are fixed, not the distribution's shape (row 'standardised data follow "
          "the standard normal distribution'). That curing internal covariate shift is why it "
          "helps: disputed. Ioffe and Szegedy (2015) proposed it as the reason; Santurkar et al. "
          "(2018) injected a changing shift after every BatchNorm, trained as fast as before, "
          "and traced the benefit to a smoother loss landscape instead. That experiment is not "
          "rerun here, so this notebook takes no side.",
          zh=zh(
              {"W1": "一、归一化的核心意义：解决「内部协变量偏移」"},
              "归一化固定了每一层输入的分布，这就是它起作用的原因",
              "归一化让每一层的输入在整个训练过程中都保持均值 0、方差 1；这消除了内部协变量偏移，"
              "所以训练变得稳定。",
              "这里有两个说法，结论不同。说归一化固定了分布：错误，这一行的结论指的就是它，下面有测量。"
              "统计量只在 gamma 和 beta *之前*是固定的，而 gamma、beta 是可学习的：下一层看到的是 "
              "gamma * x_hat + beta，它会随训练而变化（下面：在一个小回归问题上做 200 步 SGD，某个通道的"
              "均值移动了 0.42，某个通道的标准差变化了 0.70）；而且固定的只是两个矩，不是分布的形状"
              "（见“标准化后的数据服从标准正态分布”一行）。说消除内部协变量偏移是它起作用的原因：有争议。"
              "Ioffe 和 Szegedy（2015）提出它就是原因；Santurkar 等人（2018）在每个 BatchNorm 之后注入"
              "不断变化的偏移，训练照样一样快，他们转而把好处归因于更平滑的损失曲面。这个实验这里没有"
              "重跑，所以本 notebook 不站在任何一边。")),
    claim("zscore-normal", "What normalization is for", ["W3"],
          "standardised data follow the standard normal distribution",
          "After z-score normalization (subtract the mean, divide by the standard deviation) the "
          "data follow the standard normal distribution, mean 0 and standard deviation 1.",
          WRONG,
          "Mean 0 and standard deviation 1, yes; normal, no. Standardising is an affine map, so "
          "it keeps the shape of the distribution: skewed data stay exactly as skewed. Below, "
          "exponential data standardised by BatchNorm keep their skewness of about 2 (a normal "
          "distribution's is 0).",
          zh=zh(
              {"W3": "五、手撕归一化和正则化"},
              "标准化后的数据服从标准正态分布",
              "经过 z-score 归一化（减去均值，除以标准差）之后，数据服从标准正态分布，均值 0、标准差 1。",
              "均值 0、标准差 1，对；正态分布，不对。标准化是一个仿射变换，不会改变分布的形状：偏斜的"
              "数据标准化后偏斜程度完全不变。下面，指数分布的数据经 BatchNorm 标准化后，偏度仍约为 2"
              "（正态分布的偏度是 0）。")),
    claim("range-0-1", "What normalization is for", ["W2"],
          "normalization maps data into a fixed range such as [0, 1]",
          "Normalization maps the data into a fixed interval such as [0, 1], changing the units "
          "but not the shape of the distribution.",
          WRONG,
          "That describes min-max scaling, not these layers. BatchNorm, LayerNorm and RMSNorm "
          "standardise (or rescale): the output has mean 0 (RMSNorm: mean square 1), takes "
          "negative values and has no fixed bounds; for a row of d features LayerNorm's largest "
          "possible entry is sqrt(d - 1), reached by a single outlier. The shape part holds: "
          "within a row the map is affine, so the row's values keep their order and spacing.",
          zh=zh(
              {"W2": "概念与定义"},
              "归一化把数据映射到 [0, 1] 这样的固定区间",
              "归一化把数据映射到 [0, 1] 这样的固定区间，改变的是量纲，而不是分布的形状。",
              "这说的是最小-最大缩放，不是这些层。BatchNorm、LayerNorm 和 RMSNorm 做的是标准化（或缩放）："
              "输出的均值为 0（RMSNorm：均方为 1），有负值，也没有固定的上下界；对一行 d 个特征，"
              "LayerNorm 可能的最大输出是 sqrt(d - 1)，由单个离群值取到。关于形状的那一半成立：在一行之内"
              "这是仿射变换，所以一行的各个值保持原来的顺序和间距。")),
    claim("sigmoid-saturation", "What normalization is for", ["W1", "W3", "W4"],
          "large pre-activations saturate the sigmoid; normalization keeps units in range",
          "Weights of large variance give large pre-activations; beyond |z| = 4 the sigmoid is "
          "flat (0.98 or 0.02) and its gradient close to zero. Normalizing the pre-activations "
          "keeps the units out of the flat tails (W3 and W4: normalization eases vanishing and "
          "exploding gradients).",
          REPRODUCED,
          "sigmoid(4) = 0.982 and its slope there is 0.018, a 14th of the slope at 0 (0.25). In a "
          "sigmoid MLP with unit-variance weights most pre-activations land beyond |z| = 4; with "
          "a LayerNorm before each sigmoid almost none do. normcore's saturation figure shows "
          "the same for tanh in a deeper network.",
          zh=zh(
              {"W1": "一、归一化的核心意义：解决「内部协变量偏移」", "W3": "五、手撕归一化和正则化",
               "W4": (None, "总结")},
              "过大的预激活值让 sigmoid 饱和；归一化让神经元留在有效范围内",
              "方差大的权重带来大的预激活值；|z| 超过 4 时，sigmoid 几乎是平的（0.98 或 0.02），梯度"
              "接近零。对预激活值做归一化，能让神经元避开两端平坦的饱和区（W3 和 W4：归一化能缓解梯度消失"
              "和梯度爆炸）。",
              "sigmoid(4) = 0.982，那里的斜率是 0.018，只有 0 处斜率（0.25）的十四分之一。在权重方差为 1 "
              "的 sigmoid MLP 里，大多数预激活值落在 |z| > 4 的地方；在每个 sigmoid 前加一个 LayerNorm，"
              "几乎一个都没有。normcore 的 saturation 图在更深的 tanh 网络里展示了同样的现象。")),
    claim("sigmoid-into-saturation", "What normalization is for", ["W4"],
          "forcing the data to mean 0 and variance 1 can push a sigmoid into saturation",
          "Forcing every layer's data to mean 0 and variance 1 may weaken the model, and can "
          "even push activations such as the sigmoid into their saturated regions; that is why "
          "gamma and beta are added.",
          WRONG,
          "The other way round. A standardised input puts a sigmoid in its middle, where it is "
          "nearly linear: below, pre-activations of mean 3 and standard deviation 8 have 64% of "
          "their values beyond |z| = 4 and a mean slope of 0.046; after BatchNorm 6 of the 160000 "
          "are (a standard normal exceeds 4 with probability 6e-5, about 10 in 160000) and the "
          "mean slope is 0.21, near the 0.25 at 0. The concern Ioffe & Szegedy (2015) raise is the "
          "opposite one: normalised inputs would confine a sigmoid to its near-linear middle, "
          "and gamma and beta let the network move it out where it needs the nonlinearity (the "
          "BatchNorm notebook, section 9, says the same). The first half of W4's sentence is "
          "right as far as it goes: without gamma and beta the network could not choose another "
          "scale or offset (row 'gamma and beta let the network undo the normalization').",
          zh=zh(
              {"W4": (None, "归一化的可学习参数")},
              "把数据强行变成均值 0、方差 1，可能把 sigmoid 推进饱和区",
              "强行把每一层的数据变成均值 0、方差 1，可能削弱模型，甚至可能把 sigmoid 这类激活函数推进"
              "饱和区；所以才加上 gamma 和 beta。",
              "恰恰相反。标准化后的输入让 sigmoid 处在中间、几乎线性的区域：下面，均值 3、标准差 8 的预"
              "激活值有 64% 落在 |z| > 4，sigmoid 的平均斜率是 0.046；经过 BatchNorm 后，160000 个值里"
              "只有 6 个落在那里（标准正态分布超过 4 的概率是 6e-5，即 160000 个里约 10 个），平均斜率是 "
              "0.21，接近 0 处的 0.25。Ioffe 和 Szegedy（2015）担心的是相反的情况：归一化后的输入会把 "
              "sigmoid 限制在近似线性的中段，而 gamma 和 beta 让网络能在需要非线性的地方把它移出来"
              "（BatchNorm notebook 第 9 节也这样说）。W4 这句话的前半句在它说到的范围内是对的：没有 "
              "gamma 和 beta，网络就无法选择别的尺度或偏移（见“gamma 和 beta 让网络能撤销归一化”一行）。")),
    claim("low-precision", "What normalization is for", ["W2"],
          "a narrower range makes 8- and 16-bit floats represent the data more precisely",
          "Because normalized data span a narrower range, 8- or 16-bit floating point represents "
          "them more precisely, which quantisation or float16 computation can use to save memory "
          "in training.",
          REPRODUCED,
          "Right where the format is used with a per-tensor scale, not for a plain cast. FP8 "
          "and int8 are used that way (loss scaling does much the same for float16 gradients, "
          "with one scale for the whole loss): the tensor is multiplied so that its largest "
          "magnitude sits at the top of the format, and what then "
          "sets the precision is the dynamic range, the ratio of the largest magnitudes to the "
          "smallest; the narrower it is, the fewer values fall below the format's resolution. "
          "Measured below on 256 rows whose scales span 1e-2 to 1e3, as unnormalised activations "
          "can, and on the same rows after LayerNorm, one scale per tensor: 16% of the entries "
          "come out more than 10% wrong in FP8 (E4M3) and 81% in int8, against 0.0% and 5.5% "
          "after LayerNorm. For a plain cast to float16, with no scale, the width of "
          "the range is not what sets the precision; the scale of the values is. Inside "
          "float16's normal range (6.1e-5 to 65504) the *relative* precision is the same at "
          "every scale: 1.x and 1000.x round with the same relative error, at most 2**-11 "
          "(measured below). Below 6.1e-5 the numbers are subnormal: their spacing stays at "
          "2**-24 = 6e-8 however small they get, so the relative error grows (3% around 1e-6, "
          "measured) and below 3e-8 they round to 0; that is why mixed-precision training "
          "scales the loss. What normalization buys a cast is the scale: values of order 1 sit "
          "in the middle of the normal range, far from overflow (float16's largest value is "
          "65504, so squaring an entry above 256 gives inf) and from the subnormals. A norm must "
          "still not compute its statistics in float16 (row 'compute the norm in float32 and "
          "cast back'): normcore computes a float16 input in float32 and casts back.",
          zh=zh(
              {"W2": "作用"},
              "数值范围变窄，8 位和 16 位浮点数就能把数据表示得更精确",
              "归一化后的数据范围更窄，8 位或 16 位浮点数表示它们更精确，量化或 float16 计算可以借此在训练"
              "时节省内存。",
              "按整个张量取一个缩放因子来使用这些格式时是对的，直接转换时则不然。FP8 和 int8 就是这样用的"
              "（损失缩放对 float16 的梯度做的也差不多，只是整个损失共用一个因子）：张量先乘上一个因子，让其中最大的绝对值落在格式"
              "的上限，这时决定精度的是动态范围，即最大绝对值与最小绝对值之比；动态范围越窄，落到格式分辨率"
              "以下的值就越少。下面实测 256 行数据，各行的量级从 1e-2 到 1e3 不等，未归一化的激活值就"
              "可能如此；再测同样的行经过 LayerNorm 之后，每个张量一个缩放因子：相对误差超过 10% 的元素，"
              "FP8（E4M3）下占 16%，int8 下占 81%；经过 LayerNorm 后分别是 0.0% 和 5.5%。如果不做缩放，"
              "直接转成 float16，决定精度的就不是范围的宽窄，而是数值的量级。在 float16 的正规数范围内"
              "（6.1e-5 到 65504），*相对*精度在每个量级上都一样：1.x 和 1000.x 舍入的相对误差相同，至多 "
              "2**-11（下面实测）。低于 6.1e-5 的是次正规数：无论数值多小，它们的间距都停在 2**-24 = "
              "6e-8，所以相对误差变大（实测在 1e-6 附近为 3%），低于 3e-8 就舍入为 0；这就是混合精度训练要"
              "缩放损失的原因。对直接转换来说，归一化带来的是量级：1 左右的数值处在正规数范围的中间，远离"
              "溢出（float16 的最大值是 65504，所以大于 256 的数一平方就得到 inf），也远离次正规数。归一化"
              "层仍然不能用 float16 计算统计量（见“用 float32 计算归一化再转回”一行）：对 float16 输入，"
              "normcore 用 float32 计算，再转回 float16。")),
    claim("large-inputs", "What normalization is for", ["W2"],
          "large unnormalised inputs give large losses and large gradients",
          "If the data are not normalised and their values are large, the MSE comes out large, "
          "so are the gradients, and training becomes unstable.",
          REPRODUCED,
          "For a linear model under the MSE, multiplying the inputs by 100 multiplies the "
          "initial loss here by about 1600 (the predictions grow with the inputs) and the weight "
          "gradient by about 3600 (it carries the input once more). The instability is the "
          "loss's curvature in the weights, which grows like the inputs squared: 10^4 times, so "
          "the largest step plain gradient descent can take without diverging shrinks 10^4 "
          "times (from 0.83 to 8.3e-5). Standardising the inputs removes the problem; it is what "
          "a BatchNorm on the input layer learns to do.",
          zh=zh(
              {"W2": "作用"},
              "未归一化的大数值输入带来大的损失和大的梯度",
              "如果数据没有归一化、数值又大，MSE 就会很大，梯度也很大，训练变得不稳定。",
              "对 MSE 下的线性模型，把输入乘以 100，这里的初始损失约变为 1600 倍（预测值随输入一起变大），"
              "权重梯度约变为 3600 倍（它还要再乘一次输入）。不稳定来自损失对权重的曲率，它随输入的平方"
              "增长：10^4 倍，所以普通梯度下降不发散的最大步长缩小 10^4 倍（从 0.83 降到 8.3e-5）。"
              "把输入标准化就解决了这个问题；输入层上的 BatchNorm 学到的正是这件事。")),
]
