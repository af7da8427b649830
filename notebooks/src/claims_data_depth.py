"""The claims notebook's rows on depth in trained Transformers: how much each block of a
Pre-Norm or Post-Norm stack still does, measured by normcore's curse_of_depth experiment.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_depth.py's, under the row's id.
"""

from claims_rows import claim, zh, MECHANISM, W3_POSITION

ROWS = [
    claim("pre-deep-blocks-near-identity", "Depth in trained models", ["W1", "W3"],
          "deep in Pre-Norm each block changes the stream less, as if the stack widened",
          "Deep in a Pre-Norm stack the layers' inputs are nearly the same and their updates "
          "alike, so each added layer does little of its own: the stack is more like a wider "
          "model than a deeper one (W1, W3), while Post-Norm keeps each layer's contribution.",
          MECHANISM,
          "Measured at toy scale, in models trained on the copy task (normcore's curse_of_depth "
          "experiment, shown below): in an 8-block Pre-LN Transformer the stream grows about 4-fold "
          "over its depth, the deep blocks' Jacobians come near the identity (||J - I|| / sqrt(n) "
          "0.17 to 0.28 in block 8, against 0.75 to 1.7 in block 1) and removing any of blocks 4 to "
          "8 raises the loss by at most 0.007, while Post-LN's blocks stay as far from the identity "
          "deep as shallow (0.74 to 0.97). The cell measures the start of it, at initialisation: "
          "Pre-LN's distance falls with depth, Post-LN's does not. This is the premise the write-ups "
          "argue from, and what the Curse of Depth paper (Sun et al. 2025) reports in large "
          "Pre-LN models. Not tested: that this makes the stack 'wider' or Pre-Norm worse. Here "
          "every placement but Post-LN learns the task, and Post-LN at 8 blocks does not learn it "
          "in the same budget; and this easy task needs only a few blocks, so idle deep blocks may "
          "be the task's doing as much as the norm's.",
          zh=zh(
              {"W1": ("Pre-Norm（Norm 在残差前）", "2. 核心区别：训练稳定性 vs 模型表达力"),
               "W3": W3_POSITION},
              "在 Pre-Norm 的深处，每个块对残差流的改变更小，像是在加宽",
              "在 Pre-Norm 堆叠的深处，各层的输入几乎相同，更新量也相近，所以每多加一层，它自己做的事很少："
              "整个堆叠更像一个更宽的模型，而不是更深的模型（W1、W3）；Post-Norm 则保留了每一层的贡献。",
              "在玩具规模上、在复制任务上训练好的模型里做了测量（normcore 的 curse_of_depth 实验，见下图）："
              "8 个块的 Pre-LN Transformer 的残差流随深度增长约 4 倍，深层块的雅可比矩阵接近单位矩阵（第 8 块的 "
              "||J - I|| / sqrt(n) 为 0.17 到 0.28，第 1 块为 0.75 到 1.7），去掉第 4 到第 8 块中的任何一块，损失最多"
              "只上升 0.007；而 Post-LN 的块无论深浅都离单位矩阵一样远（0.74 到 0.97）。单元格测量的是它在初始化时的"
              "开端：Pre-LN 的距离随深度下降，Post-LN 的不下降。这正是文章论证的前提，也是 Curse of Depth 论文"
              "（Sun 等 2025）在大型 Pre-LN 模型中报告的现象。没有检验的是：这会让堆叠“变宽”或让 Pre-Norm 更差。这里"
              "除 Post-LN 以外的所有位置都学会了任务，而 8 个块的 Post-LN 在同样的训练量下没有学会；这个简单任务只需要"
              "几个块，所以深层块闲着，可能是任务造成的，也可能是归一化位置造成的。"),
          figure="curse_of_depth"),
]
