"""The claims notebook's rows on BatchNorm at small batches, measured by training: what fails, what
the training and evaluation modes do, and what SyncBatchNorm, Batch Renorm and GroupNorm change.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_small_batches.py's, under the row's id.
"""

from claims_rows import claim, zh, REPRODUCED, WRONG, W1_BN

TOPIC = "BatchNorm at small batches"

ROWS = [
    claim("bn-small-batch-trained", TOPIC, ["W1", "W2", "W4"],
          "BatchNorm fails with small batches (trained)",
          "BatchNorm depends strongly on the batch size and fails when the batches are small; "
          "norms that work within one sample do not depend on the batch, and a large batch, the "
          "way out, takes memory.",
          REPRODUCED,
          "Trained, it holds: an MLP whose BatchNorm statistics come from 2 samples ends far "
          "below the same MLP with 32 per batch, at the same budget of samples, while GroupNorm "
          "does at least as well with 2 as with 32 (below, 960 samples; the small_batches figure trains "
          "longer, from 2 seeds). What fails is the number of samples behind each statistic, "
          "not the number a device holds: SyncBatchNorm with 2 samples on each of 16 workers "
          "takes its statistics over all 32 and trains exactly as BatchNorm with 32 on one "
          "(same accuracy), so the memory of each worker stays that of 2 samples. Batch Renorm, "
          "which Ioffe (2017) reports substantially better than BatchNorm with small "
          "minibatches on ImageNet, recovers part of the loss in the figure, not all of it.",
          zh=zh(
              {"W1": (W1_BN + " › 优缺点与适用场景", "4. 三者对比表格（核心维度）"), "W2": "批量归一化",
               "W4": "总结"},
              "BatchNorm 在小 batch 下失效（实际训练）",
              "BatchNorm 强烈依赖 batch 大小，batch 小时就会失效；在单个样本内部归一化的方法不依赖 batch；"
              "而出路是大 batch，又占内存。",
              "实际训练一下，这个说法成立：同一个 MLP，若 BatchNorm 的统计量只来自 2 个样本，在相同的样本预算下，"
              "最终结果远不如每个 batch 32 个样本的情形；GroupNorm 用 2 个至少和用 32 个一样好（下面用 960 个样本；"
              "small_batches 图训练得更久，用了 2 个种子）。失效的原因是每个统计量背后的样本数，而不是一台设备上"
              "放了多少样本：SyncBatchNorm 在 16 个 worker 上各放 2 个样本，统计量取自全部 32 个，训练结果与单机"
              " BatchNorm 用 32 个样本完全相同（准确率一样），而每个 worker 的内存只需容纳 2 个样本。Ioffe（2017）"
              "报告，在 ImageNet 上用小 batch 训练时 Batch Renorm 明显优于 BatchNorm；在图中它挽回了一部分损失，"
              "但不是全部。"),
          figure="small_batches"),
    claim("bn-train-good-eval-bad", TOPIC, ["W2"],
          "b differs between training and inference, so BatchNorm does well in training and badly "
          "at inference",
          "BatchNorm's result depends on b, and b is usually different in training and at "
          "inference, so the layer normalises differently in the two and the model performs well "
          "in training and badly at inference.",
          WRONG,
          "The first half holds: a trained BatchNorm network answers differently in training mode "
          "(this batch's statistics) and in evaluation mode (the running statistics), and more so "
          "the smaller the batch (below, the gap grows several-fold from 32 samples per batch to "
          "2). The conclusion does not follow: on the same held-out samples the evaluation mode "
          "scores higher than the training mode, at 32 and at 2 samples per batch, here and at "
          "every batch size and seed of the small_batches figure. What small batches hurt is "
          "training itself: at 2 the network is poor in both modes. Batch Renorm, which Ioffe "
          "(2017) designed to make the two modes agree, narrows the gap in the figure and "
          "recovers part of the accuracy.",
          zh=zh(
              {"W2": "批量归一化"},
              "训练和推理时的 b 不同，所以 BatchNorm 训练时表现好、推理时表现差",
              "BatchNorm 的结果取决于 b，而训练和推理时的 b 通常不同，所以这一层在两种情况下的归一化结果不一样，"
              "模型训练时表现好，推理时表现差。",
              "前半句成立：训练好的 BatchNorm 网络在训练模式（用这个 batch 的统计量）和推理模式（用移动统计量）下"
              "给出的结果不同，batch 越小差别越大（下面，从每个 batch 32 个样本到 2 个，差距扩大了好几倍）。结论却"
              "不成立：在同一组留出样本上，推理模式的准确率高于训练模式，32 个和 2 个样本时都是如此，small_batches "
              "图中的每个 batch 大小、每个种子也都如此。小 batch 损害的是训练本身：batch 只有 2 个样本时，网络在两种模式下"
              "都很差。Ioffe（2017）设计 Batch Renorm 正是为了让两种模式一致；在图中它缩小了差距，并挽回了一部分"
              "准确率。")),
]
