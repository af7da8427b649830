"""The claims notebook's rows on RMSNorm: no centring, its printed example, its normaliser, its
cost, its parameters, the models that use it.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_rmsnorm.py's, under the row's id.
"""

from claims_rows import claim, zh, REPRODUCED, NOT_AT_SCALE, UNSUPPORTED, WRONG, W1_RMS, W3_RMS

ROWS = [
    claim("rms-printed", "RMSNorm", ["W3"],
          "W3's printed RMSNorm example (2 x 2 x 4, eps = 1e-5)",
          "W3 prints a (2, 2, 4) input and its RMSNorm output, x / sqrt(mean(x^2) + 1e-5).",
          REPRODUCED,
          "Run on the printed input, normcore's RMSNorm(4, eps=1e-5) gives 13 of the 16 printed "
          "entries to the digit and the other 3 one unit off in the 4th decimal; an input that "
          "prints as W3's gives all 16.",
          zh=zh(
              {"W3": W3_RMS},
              "W3 打印的 RMSNorm 例子（2 x 2 x 4，eps = 1e-5）",
              "W3 打印了一个 (2, 2, 4) 的输入和它的 RMSNorm 输出，x / sqrt(mean(x^2) + 1e-5)。",
              "在打印出的输入上运行，normcore 的 RMSNorm(4, eps=1e-5) 给出的 16 个值里有 13 个逐位相同，"
              "另外 3 个在第 4 位小数上差 1；一个打印出来与 W3 相同的输入能给出全部 16 个。")),
    claim("rms-no-centring", "RMSNorm", ["W1", "W3", "W4"],
          "RMSNorm only rescales: no mean, no beta, cannot correct a mean offset",
          "RMSNorm divides by the root mean square and multiplies by gamma: no centring and no "
          "beta. So it cannot remove a mean offset in the data.",
          REPRODUCED,
          "On rows offset by +5 RMSNorm's output keeps a mean near 1 where LayerNorm's is 0; on "
          "centred rows the two agree (the mean square of a centred row is its variance).",
          zh=zh(
              {"W1": W1_RMS + " › 优缺点与适用场景", "W3": "五、手撕归一化和正则化", "W4": "RMSNorm 方法"},
              "RMSNorm 只缩放：不减均值，没有 beta，无法修正均值偏移",
              "RMSNorm 除以均方根再乘以 gamma：不做中心化，也没有 beta。所以它无法消除数据中的均值偏移。",
              "在偏移了 +5 的行上，RMSNorm 的输出均值仍接近 1，而 LayerNorm 的是 0；在已中心化的行上两者"
              "一致（中心化的行的均方就是它的方差）。")),
    claim("mean-square-is-variance", "RMSNorm", ["W1"],
          "RMSNorm's mean square is the variance",
          "RMSNorm's rsqrt(mean(x^2) + eps) takes only the square root of the variance.",
          WRONG,
          "The mean square is the variance plus the squared mean: it equals the variance only "
          "for a row of mean 0. (W4 says it better: the RMS is a standard deviation computed "
          "without removing the mean.)",
          zh=zh(
              {"W1": W1_RMS + " › 案例"},
              "RMSNorm 的均方就是方差",
              "RMSNorm 的 rsqrt(mean(x^2) + eps) 只计算方差的平方根。",
              "均方等于方差加上均值的平方：只有对均值为 0 的行，它才等于方差。（W4 说得更好：RMS 是不减均值"
              "算出来的标准差。）")),
    claim("relu-mean-zero", "RMSNorm", ["W1"],
          "after a ReLU the mean is close to 0, so RMSNorm loses little",
          "RMSNorm suits places where the mean does not matter, such as after a ReLU, whose "
          "outputs have a mean close to 0.",
          WRONG,
          "A ReLU's outputs are never negative, so their mean is far from 0: for a standard "
          "normal input it is 1/sqrt(2 pi) = 0.399, more than half the RMS (0.707). After a "
          "ReLU RMSNorm's output keeps that offset, where LayerNorm's would remove it.",
          zh=zh(
              {"W1": W1_RMS + " › 优缺点与适用场景"},
              "ReLU 之后均值接近 0，所以 RMSNorm 损失很小",
              "RMSNorm 适合均值不重要的地方，例如 ReLU 之后，那里的输出均值接近 0。",
              "ReLU 的输出从不为负，所以均值离 0 很远：对标准正态输入，均值是 1/sqrt(2 pi) = 0.399，超过 "
              "RMS（0.707）的一半。ReLU 之后，RMSNorm 的输出保留了这个偏移，而 LayerNorm 会把它去掉。")),
    claim("rms-batch-size-normaliser", "RMSNorm", ["W2"],
          "RMS(x) = sqrt(sum of the d squares / b), b the batch size",
          "W2 writes the RMS of a token as the square root of the sum of its d squared entries "
          "divided by b, the batch size.",
          WRONG,
          "The mean square of a token divides by d, the number of features it is taken over. "
          "Dividing by b scales every output by sqrt(b / d), and the result then changes with "
          "the batch size: measured below for d = 4.",
          zh=zh(
              {"W2": "RMS 归一化"},
              "RMS(x) = sqrt(d 个平方之和 / b)，b 是批次大小",
              "W2 把一个 token 的 RMS 写成它 d 个分量的平方和除以批次大小 b 再开方。",
              "一个 token 的均方应除以 d，即求均方时所用特征的个数。除以 b 会让每个输出乘上 sqrt(b / d)，"
              "结果还会随批次大小变化：下面对 d = 4 做了测量。"),
          catalog="rms-batch-size-normaliser"),
    claim("rms-over-whole-tensor", "RMSNorm", ["W4"],
          "the RMS of the whole (batch, features) matrix",
          "W4 gives, next to the per-sample RMS, the RMS over the whole m x k batch matrix and "
          "divides each sample by it.",
          WRONG,
          "RMSNorm takes one RMS per sample (per token). Dividing every row by the same "
          "batch-wide number leaves the rows' relative sizes as they were, and makes a sample's "
          "output depend on the rest of the batch: below, the rows come out with RMS 0.1 and "
          "1.4 instead of 1 and 1.",
          zh=zh(
              {"W4": "RMSNorm 方法"},
              "整个（batch，特征）矩阵的 RMS",
              "除了每个样本的 RMS，W4 还给出了整个 m x k batch 矩阵的 RMS，并用它去除每个样本。",
              "RMSNorm 对每个样本（每个 token）取一个 RMS。把每一行都除以同一个按整个 batch 算出的数，各行的相对大小保持"
              "不变，而且一个样本的输出会依赖于 batch 里的其他样本：下面，两行的 RMS 成了 0.1 和 1.4，而不是 1 和 1。"),
          catalog="rms-over-whole-tensor"),
    claim("rms-cheaper", "RMSNorm", ["W1", "W2", "W3"],
          "RMSNorm is cheaper and faster than LayerNorm",
          "RMSNorm computes one statistic instead of two (W2: one pass over the data instead "
          "of two), so it is cheaper and trains faster.",
          REPRODUCED,
          "Counted independently of the machine: normcore's reference RMSNorm makes fewer "
          "passes over the data than its LayerNorm, forward and backward (no mean, no centring, "
          "no beta). The time it saves depends on the machine: `normcore bench` measures it "
          "(the README's Performance section gives the numbers of one run; the RMSNorm paper "
          "reports 7% to 64% savings). W2's 'one pass instead of two' is about how LayerNorm is "
          "written, not a law: a LayerNorm can gather the sum and the sum of squares in one pass.",
          zh=zh(
              {"W1": (W1_RMS + " › 优缺点与适用场景", W1_RMS + " › 案例"), "W2": "RMS 归一化", "W3": W3_RMS},
              "RMSNorm 比 LayerNorm 更省、更快",
              "RMSNorm 只计算一个统计量而不是两个（W2：只扫描一次数据而不是两次），所以更省，训练更快。",
              "与机器无关的计数：normcore 参考实现的 RMSNorm 遍历数据的次数比它的 LayerNorm 少，前向和"
              "反向都是（不求均值、不中心化、没有 beta）。省下多少时间取决于机器：`normcore bench` 可以测量"
              "（README 的 Performance 一节给出了一次运行的数字；RMSNorm 论文报告节省 7% 到 64%）。W2 说的"
              "“扫描一次而不是两次”取决于 LayerNorm 的写法，并非定律：LayerNorm 也可以一次扫描同时求出和与"
              "平方和。")),
    claim("rms-keeps-performance", "RMSNorm", ["W2", "W3"],
          "RMSNorm keeps LayerNorm's performance",
          "Practice shows that RMSNorm keeps the model's performance while cutting the cost "
          "(W2); LLaMA and PaLM use it in place of LayerNorm for that reason (W3).",
          NOT_AT_SCALE,
          "The RMSNorm paper (Zhang & Sennrich 2019) reports quality matching LayerNorm's on its "
          "tasks, models far larger than a notebook trains. What normcore runs is consistent "
          "with it but does not reproduce it. Its rmsnorm_vs_layernorm experiment (figure "
          "below, `normcore figures rmsnorm_vs_layernorm`) trains a 4-block Pre-LN Transformer "
          "to sort 8 symbols, to final losses whose ranges over 5 initialisations overlap "
          "(medians 0.047 with LayerNorm and 0.044 with RMSNorm, from ln(10) = 2.30). The cell "
          "runs a smaller check in a second: a one-hidden-layer MLP on a regression, from 3 "
          "initialisations, ends at training losses within 10% of each other with either norm. "
          "Neither measures a difference smaller than the spread between initialisations, and "
          "the models are far from the paper's. Why LLaMA chose it (W3's 'for that reason') is "
          "not tested either. (Whether PaLM uses RMSNorm: row 'PaLM uses RMSNorm'.)",
          zh=zh(
              {"W2": "RMS 归一化", "W3": W3_RMS},
              "RMSNorm 保持了 LayerNorm 的效果",
              "实践表明，RMSNorm 在降低开销的同时保持了模型的效果（W2）；LLaMA 和 PaLM 因此用它代替 "
              "LayerNorm（W3）。",
              "RMSNorm 论文（Zhang 和 Sennrich 2019）报告，在它的任务上效果与 LayerNorm 相当，那些模型远比 "
              "notebook 能训练的大。normcore 跑的结果与之相符，但谈不上复现。它的 rmsnorm_vs_layernorm "
              "实验（见下图，`normcore figures rmsnorm_vs_layernorm`）训练一个给 8 个符号排序的 4 块 "
              "Pre-LN Transformer，5 次初始化的最终损失范围相互重叠（中位数：LayerNorm 0.047，RMSNorm "
              "0.044，起点为 ln(10) = 2.30）。单元格里跑一个一秒钟的小检查：一个单隐藏层的 MLP 做回归，3 次"
              "初始化，两种归一化层的最终训练损失相差在 10% 以内。两者都测不出比初始化之间的差异更小的差别，"
              "模型也远小于论文中的。LLaMA 为什么选它（W3 所说的“因此”）这里也没有检验。（PaLM 是否用 "
              "RMSNorm：见“PaLM 使用 RMSNorm”一行。）"),
          figure="rmsnorm_vs_layernorm"),
    claim("rms-half-parameters", "RMSNorm", ["W1", "W4"],
          "RMSNorm has half the parameters (gamma only)",
          "RMSNorm learns only the scale gamma, no shift beta: half of LayerNorm's parameters.",
          REPRODUCED,
          "RMSNorm(d) has d parameters, LayerNorm(d) 2d. (For a whole model this is a rounding "
          "error: the norms hold a tiny share of the weights.)",
          zh=zh(
              {"W1": W1_RMS + " › 原理与公式", "W4": "RMSNorm 方法"},
              "RMSNorm 的参数只有一半（只有 gamma）",
              "RMSNorm 只学习缩放 gamma，没有平移 beta：参数是 LayerNorm 的一半。",
              "RMSNorm(d) 有 d 个参数，LayerNorm(d) 有 2d 个。（对整个模型而言这只是零头：归一化层只占"
              "权重里极小的一部分。）")),
    claim("rms-vanishing-gradients", "RMSNorm", ["W2", "W4"],
          "not centring (RMSNorm) eases vanishing gradients",
          "Leaving the mean in (RMSNorm) eases vanishing gradients, because centring to zero "
          "mean makes gradients decay layer after layer (W2); dropping the mean reduces gradient "
          "noise (W4).",
          UNSUPPORTED,
          "Neither write-up gives a source, and the RMSNorm paper (Zhang & Sennrich 2019) does "
          "not make this claim: its case is that the re-centring can be dropped at no loss, for "
          "speed. Nor does anything here support it. In a 16-layer tanh network, from 6 "
          "initialisations, the weight gradients do not vanish toward the input with either "
          "norm, they grow (layer 1's is 2.9 to 4.5 times layer 16's), and layer by layer "
          "RMSNorm's are 0.9 to 1.4 times LayerNorm's: the same size, give or take what one "
          "initialisation varies by. That covers networks at initialisation only, not training, "
          "so the verdict is that nothing supports the claim, not that it is refuted.",
          zh=zh(
              {"W2": "RMS 归一化", "W4": "RMSNorm 方法"},
              "不做中心化（RMSNorm）能缓解梯度消失",
              "保留均值（RMSNorm）能缓解梯度消失，因为向零均值对齐会让梯度逐层衰减（W2）；去掉均值能减小"
              "梯度噪声（W4）。",
              "两篇文章都没有给出处，RMSNorm 论文（Zhang 和 Sennrich 2019）也没有这个说法：它的论点是可以"
              "去掉重新中心化而不损失效果，以换取速度。这里也没有任何结果支持它。在一个 16 层的 tanh 网络里，"
              "从 6 次初始化看，无论用哪种归一化层，权重梯度朝输入方向都没有消失，反而变大（第 1 层的是第 "
              "16 层的 2.9 到 4.5 倍），而且逐层看，RMSNorm 的梯度是 LayerNorm 的 0.9 到 1.4 倍：大小相同，"
              "差别不超过一次初始化本身的波动。这只涉及初始化时的网络，不涉及训练，所以结论是没有任何证据"
              "支持这个论断，而不是它被驳倒了。")),
    claim("float32-compute", "RMSNorm", ["W1"],
          "compute the norm in float32 and cast back (LLaMA's RMSNorm)",
          "W1's RMSNorm code converts the input to float32, normalises, and casts back to the "
          "input's type, to keep float16 stable.",
          REPRODUCED,
          "Right, and normcore does the same for float16 inputs. Computed in float16 the mean "
          "square of entries above 256 overflows to inf and the output collapses to zeros; "
          "normcore's output stays finite and equals the float64 result to float16 precision.",
          zh=zh(
              {"W1": W1_RMS + " › 案例"},
              "用 float32 计算归一化再转回（LLaMA 的 RMSNorm）",
              "W1 的 RMSNorm 代码先把输入转成 float32，做归一化，再转回输入的类型，以保证 float16 下的稳定。",
              "对，normcore 对 float16 输入也是这样做的。如果用 float16 计算，大于 256 的值的均方会溢出为 "
              "inf，输出塌缩为全零；normcore 的输出保持有限，并在 float16 精度内等于 float64 的结果。")),
    claim("gpt4-rmsnorm", "RMSNorm", ["W1"],
          "GPT-4 uses RMSNorm",
          "W1's table names large language models 'such as Llama and GPT-4' as where RMSNorm "
          "is used.",
          UNSUPPORTED,
          "LLaMA, yes: its paper (Touvron et al. 2023) normalises each sub-layer's input with "
          "RMSNorm. GPT-4's architecture is not disclosed: its technical report says nothing of "
          "its norms, and W1 gives no source, so nothing can support or refute it. What would "
          "settle it is the released weights, and even they only narrow it down: the cell lists "
          "what a checkpoint would show, a gain with or without a bias, and a gain alone fits "
          "both RMSNorm and a LayerNorm without bias.",
          zh=zh(
              {"W1": W1_RMS + " › 优缺点与适用场景"},
              "GPT-4 使用 RMSNorm",
              "W1 的表格把“如 Llama、GPT-4”这样的大语言模型列为 RMSNorm 的应用场景。",
              "LLaMA，是的：它的论文（Touvron 等 2023）用 RMSNorm 对每个子层的输入做归一化。GPT-4 的架构"
              "没有公开：它的技术报告完全没有提到归一化层，W1 也没有给出处，所以既无法支持也无法反驳。能"
              "说清楚的只有公开的权重，即便如此也只能缩小范围：单元格列出了一个检查点能显示什么，即增益带不带"
              "偏置，而只有增益的话，既符合 RMSNorm，也符合不带偏置的 LayerNorm。")),
    claim("palm-rmsnorm", "RMSNorm", ["W3"],
          "PaLM uses RMSNorm",
          "LLaMA, PaLM and other large language models use RMSNorm in place of LayerNorm.",
          UNSUPPORTED,
          "For PaLM the source does not say. Its paper (Chowdhery et al. 2022, arXiv 2204.02311) "
          "writes its blocks with LayerNorm and says the layer norms have no biases; it does "
          "not say whether they subtract the mean, RMSNorm is not mentioned, and the code is "
          "not public. The name does not settle it: in Google's T5 line, \"layer normalization\" "
          "names a norm that only rescales (T5's paper, Raffel et al. 2020, describes a simplified "
          "layer normalization that only rescales, and T5LayerNorm in google/flaxformer divides "
          "by the root mean square without subtracting the mean), so PaLM's bias-free LayerNorm "
          "may be either. What can be measured is that "
          "the difference matters: a LayerNorm without bias has exactly RMSNorm's parameters, "
          "one gain per feature, but it subtracts each token's mean, and on data with a mean the "
          "two give different outputs (below, by up to 2 on rows of mean 2). For LLaMA the "
          "claim is right.",
          zh=zh(
              {"W3": W3_RMS},
              "PaLM 使用 RMSNorm",
              "LLaMA、PaLM 等大语言模型用 RMSNorm 代替 LayerNorm。",
              "对 PaLM，出处没有说明。它的论文（Chowdhery 等 2022，arXiv 2204.02311）用 LayerNorm 写它的"
              "块，并说明这些层归一化没有偏置；论文没有说它们是否减去均值，没有提到 RMSNorm，代码也没有公开。"
              "名字说明不了问题：在 Google 的 T5 这一系里，“layer normalization”指的是只做缩放的归一化"
              "（T5 的论文 Raffel 等 2020 描述的是只做缩放的简化层归一化，google/flaxformer 中的 T5LayerNorm "
              "也是除以均方根、不减均值），所以 PaLM 不带偏置的 LayerNorm 两种都有可能。能测量的是这个差别有影响：不带偏置的 "
              "LayerNorm 与 RMSNorm 的参数完全一样，每个特征一个增益，但它会减去每个 token 的均值，在有均值"
              "的数据上两者的输出不同（下面，在均值为 2 的行上最多差 2）。对 LLaMA，这个论断是对的。")),
    claim("llama-hundreds-of-billions", "RMSNorm", ["W1"],
          "RMSNorm, by saving computation, lets the Llama models train at hundreds of "
          "billions of parameters",
          "The Llama models replace LayerNorm with RMSNorm, which cuts computation and so "
          "supports training at the scale of hundreds of billions of parameters.",
          UNSUPPORTED,
          "The sizes depend on the generation: LLaMA (Touvron et al. 2023, arXiv 2302.13971) "
          "ranges from 7B to 65B and Llama 2 to 70B; only Llama 3.1 (2024, arXiv 2407.21783) "
          "reaches hundreds of billions, with 405B, and its published code still normalises "
          "with RMSNorm. That RMSNorm is what *supports* that scale has no source: GPT-3 (175B) "
          "and BLOOM (176B) were trained with LayerNorm, and the norm is a sliver of the model: "
          "counted from the published shapes below, the RMSNorm gains are 1.3 million of "
          "LLaMA 65B's 65.3 billion parameters and 4.1 million of Llama 3.1's 405.9 billion, "
          "2e-5 and 1e-5 (LayerNorm's beta would add as many again). The compute saved is the "
          "subject of the row 'RMSNorm is cheaper and faster than LayerNorm', a few per cent of "
          "a step at most.",
          zh=zh(
              {"W1": W1_RMS + " › 案例"},
              "RMSNorm 省下了计算，使 Llama 模型能训练到千亿参数",
              "Llama 系列模型用 RMSNorm 替代 LayerNorm，减少了计算量，从而支撑了千亿参数规模的训练。",
              "参数规模要看是哪一代：LLaMA（Touvron 等 2023，arXiv 2302.13971）从 7B 到 65B，Llama 2 最大 70B；"
              "只有 Llama 3.1（2024，arXiv 2407.21783）以 405B 达到千亿规模，它公开的代码仍然用 RMSNorm 归一化。"
              "说 RMSNorm *支撑*了这个规模，则没有出处：GPT-3（175B）和 BLOOM（176B）都是用 LayerNorm 训练的，"
              "而且归一化层只占模型极小的一部分：下面按公开的形状计算，RMSNorm 的增益在 LLaMA 65B 的 653 亿"
              "参数中占 130 万，在 Llama 3.1 的 4059 亿中占 410 万，分别是 2e-5 和 1e-5（LayerNorm 的 beta 会再"
              "加上同样多）。省下的计算见“RMSNorm 比 LayerNorm 更省、更快”一行，最多是一步训练的百分之几。")),
    claim("rms-suits-large-models", "RMSNorm", ["W4"],
          "RMSNorm suits large models better",
          "RMSNorm keeps only the root mean square and has half the parameters, which makes it "
          "better suited to large models; by simplifying the computation and cutting "
          "parameters it shows its advantage there.",
          UNSUPPORTED,
          "That large models use RMSNorm is a fact (LLaMA, Gemma, Qwen among others), but so "
          "do large models with LayerNorm (GPT-3, BLOOM, OPT), and no source is given that "
          "RMSNorm is *better suited* to size. The two reasons W4 gives shrink with size "
          "rather than grow: the parameters saved (a beta per norm, 2 per layer, plus the final "
          "one) are d per norm against about 12 d^2 per layer for the matrices, so their share "
          "falls as the model widens: 4.0e-5 of LLaMA 7B, 2.0e-5 of 65B, 1.0e-5 of Llama 3.1 "
          "405B (below). The work saved per token is likewise proportional to d against d^2 for "
          "the matrix products (the row 'RMSNorm is cheaper and faster than LayerNorm' measures "
          "it at small width). The case for RMSNorm at scale is its equal quality at a little "
          "less cost (Zhang & Sennrich 2019), not an advantage that grows with the model.",
          zh=zh(
              {"W4": ("RMSNorm 方法", "总结")},
              "RMSNorm 更适合大模型",
              "RMSNorm 只保留均方根，参数量减半，因而更适合大模型；它通过简化计算和减少参数量，在大模型中"
              "显示出优势。",
              "大模型在用 RMSNorm 是事实（LLaMA、Gemma、Qwen 等），但用 LayerNorm 的大模型也有（GPT-3、"
              "BLOOM、OPT），而且没有出处表明 RMSNorm *更适合*大规模。W4 给出的两个理由随规模增大反而缩小："
              "省下的参数（每个归一化层一个 beta，每层 2 个，再加最后一个）每个是 d 个，而每层的矩阵约有 "
              "12 d^2 个参数，所以模型越宽，它们的占比越小：LLaMA 7B 的 4.0e-5，65B 的 2.0e-5，Llama 3.1 "
              "405B 的 1.0e-5（下面）。每个 token 省下的计算同样与 d 成正比，而矩阵乘法的计算与 d^2 成正比"
              "（“RMSNorm 比 LayerNorm 更省、更快”一行在小宽度下测量了它）。大规模时选 RMSNorm 的理由，是它"
              "效果相当而代价略低（Zhang 和 Sennrich 2019），而不是一种随模型增大而增长的优势。")),
]
