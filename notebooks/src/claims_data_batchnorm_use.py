"""The claims notebook's rows on BatchNorm in use: small batches, its noise, padding, the learning
rate, its cost and memory, the models that use it.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_batchnorm_use.py's, under the row's id.
"""

from claims_rows import (claim, zh, REPRODUCED, MECHANISM, NOT_AT_SCALE, DISPUTED, UNSUPPORTED, WRONG, W1_BN,
                         W3_BN, W4_STATS)

ROWS = [
    claim("bn-small-batch", "BatchNorm", ["W1", "W2", "W4"],
          "BatchNorm depends on the batch size: small batches give unreliable statistics",
          "BatchNorm's statistics estimate the whole data's from one batch, so its result "
          "depends on the batch size: small batches give noisy statistics, and a gap between "
          "training and inference behaviour.",
          REPRODUCED,
          "The batch mean's error shrinks like 1/sqrt(b) (measured for b = 2 to 128), and the "
          "gap between a sample's training-mode output and its evaluation-mode output, with the "
          "true statistics as running values, shrinks with it. normcore's batch_size figure "
          "shows the consequence on a trained classifier.",
          zh=zh(
              {"W1": W1_BN + " › 优缺点与适用场景", "W2": "批量归一化", "W4": "总结"},
              "BatchNorm 依赖批次大小：小 batch 的统计量不可靠",
              "BatchNorm 用一个 batch 的统计量估计全部数据的统计量，所以它的结果取决于批次大小：小 batch 的统计量噪声"
              "大，训练和推理的表现也会有差距。",
              "batch 均值的误差按 1/sqrt(b) 缩小（对 b = 2 到 128 实测），以真实统计量作为移动值时，一个样本在训练"
              "模式下的输出与推理模式下的输出之间的差距也随之缩小。normcore 的 batch_size 图展示了它对"
              "一个训练好的分类器的影响。")),
    claim("bn-noise-regularises", "BatchNorm", ["W1", "W4"],
          "batch statistics add noise that regularises",
          "Because every batch's statistics differ a little, BatchNorm adds noise in training, "
          "and that noise regularises the network and helps it generalise.",
          NOT_AT_SCALE,
          "The noise is reproduced: the same sample gets a different output depending on which "
          "samples share its batch, more so in small batches. That it improves generalisation "
          "is reported in the literature (Ioffe & Szegedy 2015 could drop Dropout in their "
          "network) but is not measured by this notebook.",
          zh=zh(
              {"W1": W1_BN + " › 优缺点与适用场景", "W4": ("BatchNorm 方法", W4_STATS)},
              "batch 统计量引入的噪声起到正则化作用",
              "由于每个 batch 的统计量都略有不同，BatchNorm 在训练中引入了噪声，这种噪声对网络有正则化作用，"
              "有助于泛化。",
              "噪声复现了：同一个样本的输出取决于和它在同一个 batch 里的是哪些样本，batch 越小越明显。至于它能改善泛化，"
              "文献中有报告（Ioffe 和 Szegedy 2015 在他们的网络里因此去掉了 Dropout），但本 notebook 没有"
              "测量。")),
    claim("bn-padding", "BatchNorm", ["W1", "W4"],
          "BatchNorm does not suit variable-length sequences; LayerNorm does",
          "In NLP the sequences of a batch have different lengths, so BatchNorm cannot form "
          "sound statistics across samples; LayerNorm, which normalises each token on its own, "
          "has no such problem.",
          REPRODUCED,
          "Pad two sequences of lengths 5 and 2 to length 5: the padding zeros enter "
          "BatchNorm's per-channel statistics and change every real token's output; a mask "
          "that leaves them out restores the statistics. LayerNorm gives each real token the "
          "same output padded or not.",
          zh=zh(
              {"W1": (W1_BN + " › 优缺点与适用场景", W1_BN + " › 案例"), "W4": ("BatchNorm 方法", "LayerNorm 方法")},
              "BatchNorm 不适合变长序列；LayerNorm 适合",
              "在 NLP 中，一个 batch 里的序列长度各不相同，所以 BatchNorm 无法跨样本得到可靠的统计量；LayerNorm "
              "对每个 token 单独归一化，没有这个问题。",
              "把长度为 5 和 2 的两个序列填充到长度 5：填充的零进入 BatchNorm 按通道计算的统计量，改变了"
              "每个真实 token 的输出；用掩码把它们排除在外，统计量就恢复了。LayerNorm 对每个真实 token 的"
              "输出，填充与否都一样。")),
    claim("bn-larger-lr", "BatchNorm", ["W1", "W4"],
          "BatchNorm allows larger learning rates",
          "With BatchNorm a network tolerates larger learning rates and converges faster.",
          MECHANISM,
          "The claim is about training, and this cell does not train. normcore's covariate_shift "
          "experiment does, at toy scale: a sigmoid MLP with and without BatchNorm at several "
          "learning rates (`normcore figures covariate_shift`, about a minute; "
          "figures/covariate_shift_accuracy.png), where with BatchNorm it still learns at a "
          "learning rate at which the plain network stays at chance; one small network, not a "
          "general law, and it is not rerun here. The cell measures the mechanism usually given "
          "for it: a BatchNorm'd layer's output does not "
          "change (up to eps) when its incoming weights are scaled, and the gradient of those weights "
          "shrinks in proportion, so a step that blows the weights up slows its own "
          "successors down instead of blowing the activations up.",
          zh=zh(
              {"W1": W1_BN + " › 优缺点与适用场景", "W4": "BatchNorm 方法"},
              "BatchNorm 允许更大的学习率",
              "有了 BatchNorm，网络能承受更大的学习率，收敛更快。",
              "这个论断讲的是训练，而这个单元格不训练。normcore 的 covariate_shift 实验在玩具规模上训练了："
              "在几个学习率下比较带与不带 BatchNorm 的 sigmoid MLP（`normcore figures covariate_shift`，约"
              "一分钟；figures/covariate_shift_accuracy.png），在某个学习率下，普通网络停在随机猜测的水平，"
              "带 BatchNorm 的仍然在学；这只是一个小网络，不是普遍规律，这里也没有重跑。单元格测量的是通常"
              "给出的机制：对一个经过 BatchNorm 的层，把它的输入权重放大，输出不变（只差 eps），而这些权重"
              "的梯度按同样比例缩小；所以一步把权重变大的更新，会让后续的更新变慢，而不是让激活值变大。")),
    claim("bn-costlier", "BatchNorm", ["W1"],
          "BatchNorm costs more to compute than LayerNorm",
          "W1's comparison table rates BatchNorm's cost high (batch statistics), LayerNorm's "
          "medium and RMSNorm's low.",
          WRONG,
          "As a general rating, wrong; the answer depends on where the layer runs. At inference "
          "BatchNorm uses fixed running statistics, so it is an affine map that folds into the "
          "Linear before it: `nc.fold_batchnorm` returns one Linear equal to the pair (to 2e-16 "
          "below), and the BatchNorm then costs nothing. LayerNorm does not fold whole (its "
          "statistics are each sample's own; `nc.fold_batchnorm` refuses it with a TypeError): "
          "its gamma and beta fold into the next Linear (`nc.fold_norm_affine`), but its "
          "per-sample division is still computed at inference. In training on one device the two "
          "do the same arithmetic over "
          "different axes (counted: the same number of passes over a (64, 256) input, forward "
          "and backward; RMSNorm makes fewer), plus BatchNorm's running averages, one value per "
          "channel. BatchNorm's real extra cost is the cross-sample reduction when the batch is "
          "split across devices and the statistics are synchronised, messages LayerNorm never "
          "sends. normcore.distributed's SyncBatchNorm gives exactly BatchNorm on the whole "
          "batch; after one small all-reduce in which the workers agree on what they are about to "
          "exchange (9 values per worker), its default protocol takes three all-reduces per "
          "training step: two in the forward (1 + C values, "
          "then C) and one in the backward (2C), counted below. torch.nn.SyncBatchNorm uses two "
          "collectives (torch/nn/modules/_functions.py): in the forward one all_gather of each "
          "rank's mean, invstd and count (2C + 1 values), merged by the within + between "
          "formula, and in the backward one all_reduce of sum dy and sum dy * (x - mean) (2C "
          "values). The cell checks that merge: the whole batch's mean and variance from each "
          "worker's (mean, variance, count), gathered in one round, and counts normcore's "
          "protocol=\"gather\", which is torch's. W1's reason, the batch statistics, is the "
          "right one only there.",
          zh=zh(
              {"W1": "4. 三者对比表格（核心维度）"},
              "BatchNorm 的计算开销比 LayerNorm 大",
              "W1 的对比表把 BatchNorm 的计算开销评为高（batch 统计量），LayerNorm 为中，RMSNorm 为低。",
              "作为一般性的评价，这是错的；答案取决于层在哪里运行。推理时 BatchNorm 用固定的移动统计量，"
              "所以它是一个仿射变换，可以折叠进前面的 Linear：`nc.fold_batchnorm` 返回一个与这两层相等的 "
              "Linear（下面误差在 2e-16 以内），BatchNorm 于是不再有任何开销。LayerNorm 不能整个折叠（它的统计"
              "量是每个样本自己的；`nc.fold_batchnorm` 会用 TypeError 拒绝）：它的 gamma 和 beta 可以折叠"
              "进后面的 Linear（`nc.fold_norm_affine`），但按样本做的除法推理时仍要计算。在单个设备上训练时，"
              "两者在不同的轴上做同样的运算（计数：在 (64, 256) 的输入上，前向和反向遍历数据的次数相同；"
              "RMSNorm 更少），BatchNorm 另外还有移动平均，每个通道一个值。BatchNorm 真正多出的开销是 batch 被"
              "拆到多个设备上、统计量需要同步时的跨样本归约，而 LayerNorm 从不需要发送这些消息。"
              "normcore.distributed 的 SyncBatchNorm 给出的结果与在整个 batch 上做 BatchNorm 完全相同。各 worker 先用"
              "一次很小的 all-reduce 核对将要交换的内容（每个 worker 9 个值），之后默认协议下每个训练"
              "步做三次 all-reduce：前向两次（先 1 + C 个值，再 C 个），反向一次（2C 个），下面有计数。"
              "torch.nn.SyncBatchNorm 只用两次集合通信（torch/nn/modules/_functions.py）：前向一次 "
              "all_gather，收集每个 rank 的均值、invstd 和计数（2C + 1 个值），再用组内 + 组间公式合并；"
              "反向一次 all_reduce，归约 sum dy 和 sum dy * (x - mean)（2C 个值）。单元格检验了这个合并："
              "由每个 worker 的（均值、方差、计数）一轮收集，就得到整个 batch 的均值和方差；它还统计了 normcore "
              "的 protocol=\"gather\"，也就是 torch 所用协议的通信次数。W1 给出的理由，batch 统计量，只在这种情况下"
              "才成立。")),
    claim("resnet-bn", "BatchNorm", ["W1"],
          "ResNet's hundred-layer networks are trainable thanks to BatchNorm",
          "ResNet uses BatchNorm to stabilise the training of CNNs, and that is what makes "
          "networks of a hundred layers and more trainable.",
          DISPUTED,
          "ResNet (He et al. 2016) does use BatchNorm after every convolution, but whether it is "
          "what makes the depth trainable is disputed: Fixup (Zhang, Dauphin & Ma 2019) trains "
          "residual networks of 10,000 layers without any norm by scaling each residual branch "
          "down at initialisation, and SkipInit (De & Smith 2020) and the NFNets (Brock et al. "
          "2021) make the same point; the residual connections and their scale at "
          "initialisation do most of the work. What normcore can measure is that point at "
          "initialisation: in a stack of 100 residual blocks (two Kaiming-initialised Linear "
          "layers and a ReLU each, width 64), the stream's RMS reaches 2.1e23 with no norm, 14 "
          "with a BatchNorm in every branch, and 3.25 with no norm and every branch scaled by "
          "1/sqrt(100), as Fixup-style initialisations do. With no norm the variance about "
          "triples per block (measured: 2.93 per block on average): the Kaiming Linear doubles "
          "the variance, the ReLU halves the mean square, the second Kaiming Linear doubles it "
          "again, so each branch adds about twice the stream's variance to it. Training such "
          "stacks is not done here.",
          zh=zh(
              {"W1": W1_BN + " › 案例"},
              "ResNet 的上百层网络能训练，靠的是 BatchNorm",
              "ResNet 用 BatchNorm 稳定 CNN 的训练，正是这一点让一百层以上的网络能够训练。",
              "ResNet（He 等 2016）确实在每个卷积后都用了 BatchNorm，但是否正是它让这样的深度可以训练，"
              "还有争议：Fixup（Zhang、Dauphin 和 Ma 2019）在初始化时把每个残差分支缩小，不用任何归一化层"
              "就训练了 10000 层的残差网络，SkipInit（De 和 Smith 2020）和 NFNet（Brock 等 2021）也说明了"
              "同一点；大部分功劳在残差连接及其初始化时的尺度。normcore 能测量的是初始化时的这一点：在 100 "
              "个残差块（每块两个 Kaiming 初始化的 Linear 和一个 ReLU，宽 64）的堆叠中，不用归一化层时残差"
              "流的 RMS 达到 2.1e23，每个分支里加一个 BatchNorm 时是 14，像 Fixup 式初始化那样不用"
              "归一化层、把每个分支乘以 1/sqrt(100) 时是 3.25。不用归一化层时，方差每块约变为原来的三倍"
              "（实测平均每块 2.93 倍）：Kaiming 初始化的 Linear 让方差翻倍，ReLU 让均方减半，第二个 Kaiming "
              "Linear 再翻倍，所以每个分支带来的方差约为残差流的两倍。这里没有训练这些堆叠。")),
    claim("bn-positions-not-identical", "BatchNorm", ["W2"],
          "tokens at one position are independent but not identically distributed, so "
          "per-position batch statistics are unsound",
          "Across the sequences of a batch, the tokens at one position differ a lot: they are "
          "independent but not identically distributed, so statistics taken over the batch at "
          "each position are statistically unsound; one reason language models avoid BatchNorm.",
          WRONG,
          "The other way round. When a batch's sequences are drawn at random from the corpus "
          "(the usual sampling), the tokens at one position are independent *and* identically "
          "distributed across the batch: each is a draw from that position's distribution, "
          "which is the condition under which a batch mean estimates the population's. Below, "
          "every position has its own mean; the per-position batch mean's error shrinks like "
          "1/sqrt(b) (4.0 times smaller from b = 8 to b = 128), and each position's output is "
          "centred. What is not identically distributed is the positions *of one sequence*, and "
          "they are what a BatchNorm over (batch, length) pools: there a position's output "
          "keeps an offset of up to 1.8 (its own mean minus the pooled one). The real limits of "
          "per-position statistics are how few values each has (b, row 'the batch in language "
          "modelling is small') and that every sequence must reach every position (padding, row "
          "'BatchNorm does not suit variable-length sequences').",
          zh=zh(
              {"W2": "批量归一化"},
              "同一位置上的 token 独立但不同分布，所以按位置计算的 batch 统计量不合理",
              "一个 batch 里不同序列在同一位置上的 token 差异很大：它们独立，但分布不同，所以在每个位置上跨 batch"
              "计算统计量，从统计学上讲并不合理；这是语言模型不用 BatchNorm 的原因之一。",
              "恰恰相反。当一个 batch 里的序列是从语料中随机抽取的（通常的采样方式），同一位置上的 token 在 batch 内"
              "是独立*且*同分布的：每一个都是从该位置的分布中抽出的一个样本，而这正是 batch 均值能够估计总体均值"
              "的条件。下面，每个位置都有自己的均值；按位置计算的 batch 均值的误差按 1/sqrt(b) 缩小（从 b = 8 到 "
              "b = 128 缩小为 1/4.0），每个位置的输出都是居中的。真正不同分布的，是*同一序列*的各个位置，而在 "
              "(batch, length) 上做的 BatchNorm 恰恰把它们合在一起：那样一来，一个位置的输出会留下最多 1.8 的"
              "偏移（它自己的均值减去合并后的均值）。按位置计算统计量真正的局限，是每个统计量只有很少的值"
              "（b 个，见“语言建模中的 batch 很小”一行），以及每个序列都必须覆盖每个位置（填充，见“BatchNorm 不"
              "适合变长序列”一行）。")),
    claim("lm-small-batch", "BatchNorm", ["W2"],
          "the batch in language modelling is small",
          "The batch size b in language modelling is usually small, so BatchNorm's batch "
          "statistics there stray far from the population's.",
          UNSUPPORTED,
          "W2 gives no number, and the published ones say the opposite for the batch a model "
          "trains on: BERT pretrains on batches of 256 sequences (Devlin et al. 2019, appendix "
          "A.2), GPT-3 175B on 3.2M tokens per batch, about 1560 sequences of 2048 (Brown et al. "
          "2020, Table 2.1), LLaMA on 4M tokens, about 2000 sequences of 2048 (Touvron et al. "
          "2023, Table 2). At those sizes a per-position mean is off by 0.05 to 0.02 standard "
          "deviations (measured below). What can be small is the micro-batch on one device (the "
          "papers do not give it), and that is what an unsynchronised BatchNorm would see: with "
          "4 sequences per device the error is 0.4. So the premise holds only for per-device "
          "statistics, which SyncBatchNorm removes at the price of communication.",
          zh=zh(
              {"W2": "批量归一化"},
              "语言建模中的 batch 很小",
              "语言建模中的批次大小 b 往往较小，所以那里 BatchNorm 的 batch 统计量会偏离总体统计量很远。",
              "W2 没有给出数字，而已发表的数字对模型训练时用的 batch 说的正相反：BERT 预训练的 batch 是 256 个序列"
              "（Devlin 等 2019，附录 A.2），GPT-3 175B 每个 batch 3.2M 个 token，约合 1560 个长 2048 的序列"
              "（Brown 等 2020，表 2.1），LLaMA 每个 batch 4M 个 token，约合 2000 个长 2048 的序列（Touvron 等 "
              "2023，表 2）。在这样的批次大小下，按位置计算的均值只偏离 0.05 到 0.02 个标准差（下面实测）。"
              "可能很小的是单个设备上的微 batch（这些论文没有给出），而不做同步的 BatchNorm 看到的正是它：每个"
              "设备 4 个序列时，误差是 0.4。所以这个前提只对单设备的统计量成立，而 SyncBatchNorm 以通信为"
              "代价消除了它。")),
    claim("bn-buffers-keep-graph", "BatchNorm", ["W3"],
          "W3's BatchNorm updates its running statistics from the batch's, autograd history "
          "included",
          "W3's BatchNorm assigns running_mean = momentum * running_mean + (1 - momentum) * "
          "batch mean (and the same for the variance) with the batch statistics of the forward "
          "pass, so the buffers are just updated numbers.",
          WRONG,
          "In PyTorch the batch mean and variance carry their autograd history, and W3's "
          "assignment keeps it: after training steps the buffers are non-leaf tensors that "
          "require grad, and every step adds 5 autograd nodes behind each of them (500 behind "
          "the pair after 50 steps, below). The data those nodes saved is small here (each "
          "backward frees the batch, since the variance node is also on the loss's path), so "
          "the memory grows by the nodes alone; the failure that matters comes in evaluation "
          "mode: any backward through the output (fine-tuning with frozen statistics, an input "
          "gradient) reaches those freed nodes and raises 'Trying to backward through the graph "
          "a second time'. torch's BatchNorm1d updates its buffers without history; normcore's "
          "buffers are plain NumPy arrays, with no autograd to keep. The fix is to update under "
          "torch.no_grad() (or from mean.detach()).",
          zh=zh(
              {"W3": W3_BN},
              "W3 的 BatchNorm 用带着 autograd 历史的 batch 统计量更新移动统计量",
              "W3 的 BatchNorm 用前向传播中的 batch 统计量赋值 running_mean = momentum * running_mean + "
              "(1 - momentum) * batch 均值（方差同理），所以这两个缓冲区只是被更新的数值。",
              "在 PyTorch 中，batch 均值和 batch 方差带着它们的 autograd 历史，而 W3 的赋值把历史保留了下来：训练几步"
              "之后，缓冲区变成了需要梯度的非叶子张量，而且每训练一步，两者身后各多出 5 个 autograd 节点"
              "（下面：50 步之后共 500 个）。这些节点保存的数据在这里很小（每次反向传播都会释放这个 batch 的数据，"
              "因为方差节点也在损失的路径上），所以内存只随节点本身增长；真正要紧的故障出现在推理模式：任何"
              "穿过输出的反向传播（冻结统计量的微调、对输入求梯度）都会走到这些已释放的节点，报错“Trying to "
              "backward through the graph a second time”。torch 的 BatchNorm1d 更新缓冲区时不带历史；"
              "normcore 的缓冲区是普通的 NumPy 数组，没有 autograd 可保留。修正方法是在 torch.no_grad() 下"
              "更新（或用 mean.detach()）。")),
    claim("bn-batch-memory", "BatchNorm", ["W1"],
          "a drawback of BatchNorm: large batches take memory",
          "BatchNorm depends strongly on the batch size: small batches give unstable "
          "statistics, and large batches take memory.",
          REPRODUCED,
          "Read as W1 means it, as the two horns of BatchNorm's dependence on the batch, it "
          "holds: the statistics need a large batch (row 'BatchNorm depends on the batch size'), "
          "and the memory of a training step grows with the batch. It is the motivation Wu & He "
          "(2018) give for GroupNorm: detection, segmentation and video must train with small "
          "batches because of memory, where BatchNorm's error grows. The memory is not "
          "BatchNorm's own, though: below, the activations a forward pass keeps grow 16-fold "
          "from batch 32 to 512 with BatchNorm, LayerNorm or no norm alike, and BatchNorm's "
          "only extra state is its 2 x 256 running statistics, whatever the batch.",
          zh=zh(
              {"W1": W1_BN + " › 优缺点与适用场景"},
              "BatchNorm 的缺点：大批量占内存",
              "BatchNorm 强烈依赖批次大小：小批量时统计量不稳定，大批量又占内存。",
              "按 W1 的本意，把它读作 BatchNorm 依赖批次大小的两难，它是成立的：统计量需要大的 batch（见“BatchNorm "
              "依赖批次大小”一行），而训练一步的内存随 batch 增长。这正是 Wu 和 He（2018）提出 GroupNorm 的动机："
              "检测、分割和视频任务受内存所限只能用小批量训练，而 BatchNorm 在小批量下误差变大。不过这份内存"
              "并不属于 BatchNorm 自己：下面，从批次大小 32 到 512，一次前向传播保留的激活增长为 16 倍，用 "
              "BatchNorm、LayerNorm 还是不用归一化都一样，而 BatchNorm 唯一多出的状态是它 2 x 256 个移动统计量，"
              "与批次大小无关。")),
    claim("bn-cv-uniform-shapes", "BatchNorm", ["W1", "W4"],
          "BatchNorm works in vision because image inputs have one fixed shape",
          "Because the inputs of computer-vision models have uniform shapes (fixed image "
          "sizes, with large batches), BatchNorm is very effective there: it speeds training "
          "and regularises a little.",
          UNSUPPORTED,
          "Neither write-up gives a source, and the shape is not what BatchNorm2d relies on: "
          "its statistics are per channel, over the batch *and* every pixel, so they are the "
          "same estimate at any resolution. Below, running statistics learnt on 32 x 32 images "
          "normalise 8 x 8 and 96 x 96 images just as well (every channel's output has mean "
          "within 0.03 of 0 and standard deviation within 0.02 of 1). Within one batch the "
          "images must share a shape, but that is a tensor's requirement, the same for every "
          "layer. What does favour BatchNorm in a CNN is the number of values per statistic "
          "(batch x height x width) and that a convolution treats every pixel of a channel the "
          "same way, so pooling the pixels mixes values of one distribution; that it speeds "
          "training and regularises is in the rows 'BatchNorm allows larger learning rates' and "
          "'batch statistics add noise that regularises'.",
          zh=zh(
              {"W1": W1_BN + " › 优缺点与适用场景", "W4": "BatchNorm 方法"},
              "BatchNorm 在视觉任务中有效，是因为图像输入的形状固定",
              "由于计算机视觉模型的输入形状规范一致（图像尺寸固定，batch 又大），BatchNorm 在那里非常有效："
              "它能加速训练，并提供一定的正则化效果。",
              "两篇文章都没有给出处，而且 BatchNorm2d 依赖的并不是形状：它的统计量按通道计算，跨越整个 batch *和*"
              "所有像素，所以在任何分辨率下都是同一个估计。下面，在 32 x 32 图像上得到的移动统计量，对 8 x 8 "
              "和 96 x 96 的图像归一化得一样好（每个通道输出的均值与 0 相差不超过 0.03，标准差与 1 相差不超过 "
              "0.02）。同一个 batch 里的图像必须形状相同，但这是张量的要求，对每一层都一样。在 CNN 中真正对 "
              "BatchNorm 有利的，是每个统计量所用的值的数量（batch x 高 x 宽），以及卷积对一个通道的每个像素一视"
              "同仁，所以把像素合在一起混合的是同一分布的值；至于它加速训练和起正则化作用，见“BatchNorm 允许"
              "更大的学习率”和“batch 统计量引入的噪声起到正则化作用”两行。")),
]
