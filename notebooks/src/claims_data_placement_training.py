"""The claims notebook's rows on Pre-Norm and Post-Norm in training: tuning, warmup, the gradients
at initialisation, the models that use each, and the guide for choosing a norm and its position.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_placement_training.py's, under the row's id.
"""

from claims_rows import claim, zh, MECHANISM, NOT_AT_SCALE, DISPUTED, UNSUPPORTED, WRONG, W1_LN, W3_POSITION

ROWS = [
    claim("post-better-tuned", "Pre-Norm and Post-Norm", ["W1", "W3", "W4"],
          "tuned Post-Norm reaches a better final quality than Pre-Norm",
          "Post-Norm, trained with care (warmup, small learning rate), reaches a higher final "
          "quality than Pre-Norm of the same size (W1: BERT's 12 Post-Norm layers beat a "
          "Pre-Norm model of the same parameters). W3 reports that Xiong et al. (2020) found "
          "Pre-Norm better than Post-Norm, then sides with the argument that their comparison "
          "used one training setting for both and that tuned Post-Norm is better.",
          DISPUTED,
          "Reported in some settings (Liu et al. 2020, with their careful initialisation Admin; "
          "the effective-depth argument of the previous row) and not in others (Xiong et al. "
          "2020 find Pre-LN as good or better without warmup; DeepNet, Wang et al. 2022, keeps "
          "Post-LN for its quality but needs a rescaling to train it deep), and W1's BERT comparison comes without a source. "
          "W3's summary of Xiong et al. says more than they do: they show that Pre-LN without "
          "warmup reaches results comparable to Post-LN with warmup in less training time, not "
          "that Pre-LN is better in general. Final quality "
          "after long training is not something this notebook can measure. What is measurable "
          "is the mechanism the write-ups give: Post-Norm's output is made mostly of the last "
          "branches (the input's weight after 8 layers is 0.05), Pre-Norm's keeps the input at "
          "full weight.",
          zh=zh(
              {"W1": "Post-Norm 的优缺点", "W3": W3_POSITION, "W4": "PreNorm 推导"},
              "调好的 Post-Norm 最终效果比 Pre-Norm 好",
              "精心训练的 Post-Norm（warmup、小学习率）最终效果高于同样大小的 Pre-Norm（W1：BERT 的 12 层 "
              "Post-Norm 胜过同参数量的 Pre-Norm 模型）。W3 转述说 Xiong 等（2020）得出了 Pre-Norm 优于 "
              "Post-Norm 的结论，随后又赞同另一种看法：他们的比较对两者用了同一套训练设置，而调好的 "
              "Post-Norm 效果更好。",
              "在有些设置下有报告（Liu 等 2020，配合他们精心设计的初始化 Admin；上一行的有效深度论证），"
              "在另一些设置下则没有（Xiong 等 2020 发现 Pre-LN 不用 warmup 也一样好或更好；DeepNet，Wang 等 "
              "2022，为了效果保留 Post-LN，但要训练得深就需要重新缩放），而 W1 的 BERT 对比没有给出处。W3 对 "
              "Xiong 等的转述超出了他们的结论：他们表明，不用 warmup 的 Pre-LN 能以更少的训练时间达到与用了 "
              "warmup 的 Post-LN 相当的结果，而不是说 Pre-LN 总体上更好。长时间"
              "训练后的最终效果不是本 notebook 能测量的。能测量的是文章给出的机制：Post-Norm 的输出主要由最后"
              "几个分支构成（8 层之后输入的权重是 0.05），Pre-Norm 则保留了完整权重的输入。")),
    claim("post-long-range-finetune", "Pre-Norm and Post-Norm", ["W1"],
          "Post-Norm captures long-range dependencies better, and fine-tunes better",
          "Post-Norm keeps the differences between layers and so captures long-range "
          "dependencies better; and because it updates the shallow layers less, fine-tuning a "
          "Post-Norm model disturbs its pretrained knowledge less (BERT).",
          UNSUPPORTED,
          "W1 gives no source for either, and neither follows from anything measured here. "
          "'Long-range dependencies' are a property of attention over the sequence, not of "
          "where the norm sits along the depth; no comparison of the two positions on such a "
          "task is cited. For fine-tuning, the premise can be measured at initialisation: "
          "Post-LN's first blocks do get smaller gradients than its last ones (here the first "
          "two get 0.4 to 0.6 times what the last two get, in each of 4 initialisations), while "
          "Pre-LN's first blocks get more than its last. But a gradient's size is not an "
          "update's size under Adam, which divides each gradient by its own running scale, and "
          "the premise after pretraining is not measured. And the choice is seldom open: a "
          "fine-tuned model keeps the position its pretrained weights were trained with (see the "
          "decision guide below).",
          zh=zh(
              {"W1": ("2. 核心区别：训练稳定性 vs 模型表达力", "Post-Norm 的优缺点")},
              "Post-Norm 更能捕捉长距离依赖，微调效果也更好",
              "Post-Norm 保留了层间的差异，所以更能捕捉长距离依赖；又因为它对浅层的更新更弱，微调 Post-Norm "
              "模型时对预训练知识的破坏更小（BERT）。",
              "W1 对这两点都没有给出处，也都不能从这里测得的任何结果推出。“长距离依赖”是注意力在序列上的"
              "性质，与归一化层在深度方向上的位置无关；也没有引用在这类任务上比较两种位置的工作。至于微调，"
              "可以在初始化时测量它的前提：Post-LN 的前几个块得到的梯度确实比最后几个块小（这里，在 4 次"
              "初始化的每一次中，前两个块得到的是后两个块的 0.4 到 0.6 倍），而 Pre-LN 的前几个块得到的比"
              "最后几个块多。但在 Adam 下，梯度的大小并不是更新的大小，因为 Adam 会用每个梯度自己的移动尺度"
              "去除它；预训练之后的前提也没有测量。而且这个选择很少真的存在：微调的模型沿用它的预训练权重"
              "训练时的位置（见下面的选择指南）。")),
    claim("post-needs-warmup", "Pre-Norm and Post-Norm", ["W1", "W3"],
          "Post-Norm needs warmup; Pre-Norm trains without it",
          "Post-Norm must be trained with a learning-rate warmup (and a small learning rate), "
          "while Pre-Norm can start at a large learning rate without warmup.",
          MECHANISM,
          "The claim is about training, and this cell does not train. normcore's warmup "
          "experiment does (`normcore figures warmup`, about a minute): 12-block Transformers on "
          "one toy task at one learning rate, where Post-LN without warmup stays at the chance "
          "loss from each of three initialisations and Pre-LN learns either way. The cell here "
          "measures the cause Liu et al. (2020) give, cheaply: a small random change of every weight moves a Post-LN stack's output "
          "more than a Pre-LN stack's (in each of 4 seeds), and the more so the deeper it is "
          "(on average). 'Can train without "
          "warmup' is not 'should': GPT-3 and LLaMA are Pre-LN and their papers still use warmup "
          "(GPT-2's paper does not describe its learning-rate schedule).",
          zh=zh(
              {"W1": ("Post-Norm 的优缺点", "4. 实践调参建议"), "W3": W3_POSITION},
              "Post-Norm 需要 warmup；Pre-Norm 不需要",
              "Post-Norm 必须用学习率 warmup（和小学习率）训练，而 Pre-Norm 可以不用 warmup、一开始就用大的"
              "学习率。",
              "这个论断讲的是训练，而这个单元格不训练。normcore 的 warmup 实验训练了（`normcore figures "
              "warmup`，约一分钟）：12 个块的 Transformer，一个玩具任务，一个学习率，不用 warmup 时 Post-LN "
              "从三次初始化出发都停在随机猜测的损失上，而 Pre-LN 用不用都能学。这里的单元格以很小的代价测量 "
              "Liu 等（2020）给出的原因：对每个权重做一个小的随机改动，Post-LN 堆叠的输出比 Pre-LN 堆叠移动"
              "得更多（4 个种子中的每一个都是），而且越深越明显（平均而言）。“可以不用 warmup”不等于“应该"
              "不用”：GPT-3 和 LLaMA 都是 Pre-LN，它们的论文仍然用了 warmup（GPT-2 的论文没有描述它的学习率"
              "调度）。")),
    claim("warmup-recipe", "Pre-Norm and Post-Norm", ["W1"],
          "warm up from 1e-6 to 1e-4 over 1000 steps; 100 Pre-Norm layers for 60 Post-Norm",
          "W1's tuning advice: train Post-Norm with a warmup that raises the learning rate from "
          "1e-6 to 1e-4 over the first 1000 steps, then decays it; and if a task needs long-range "
          "dependencies, stack more Pre-Norm layers, such as 100 Pre-Norm layers in place of 60 "
          "Post-Norm ones.",
          UNSUPPORTED,
          "The recipe is an ordinary linear warmup, and it is what normcore's linear_warmup "
          "computes (within 1% of the peak at every step, below), so as an example it is fine. "
          "As a prescription its numbers have no source: the warmup a model needs depends on its "
          "depth, optimiser, batch and peak rate (BERT warmed up over 10,000 steps to 1e-4, the "
          "original Transformer over 4000 steps to a peak of about 7e-4 for its base model). The "
          "'100 for 60' exchange rate between Pre-Norm and Post-Norm layers is stated without a "
          "source or a derivation, and nothing in the effective-depth argument (row 'Pre-Norm's "
          "layers merge into a wider one') gives a number.",
          zh=zh(
              {"W1": "4. 实践调参建议"},
              "在 1000 步内从 1e-6 预热到 1e-4；用 100 层 Pre-Norm 代替 60 层 Post-Norm",
              "W1 的调参建议：训练 Post-Norm 时用 warmup，在前 1000 步把学习率从 1e-6 升到 1e-4，然后衰减；"
              "如果任务需要长距离依赖，就堆叠更多的 Pre-Norm 层，例如用 100 层 Pre-Norm 代替 60 层 Post-Norm。",
              "这个方案是普通的线性 warmup，也正是 normcore 的 linear_warmup 所计算的（下面每一步都在峰值的 "
              "1% 以内），作为例子没有问题。作为处方，它的数字没有出处：一个模型需要多长的 warmup 取决于它的"
              "深度、优化器、批次大小和峰值学习率（BERT 用 10000 步预热到 1e-4，原始 Transformer 的 base 模型"
              "用 4000 步预热到约 7e-4 的峰值）。Pre-Norm 与 Post-Norm 层数之间“100 换 60”的比例既没有出处"
              "也没有推导，有效深度的论证（“Pre-Norm 的层会合并成更宽的一层”一行）也给不出任何数字。")),
    claim("post-gradients-explode", "Pre-Norm and Post-Norm", ["W1"],
          "without warmup, Post-Norm's gradients explode in the first layers (near the input)",
          "Trained without warmup, a Post-Norm model's first layers, those near the input, get "
          "exploding gradients.",
          UNSUPPORTED,
          "W1 gives no source, and W4 says the opposite (next row). The literature places "
          "Post-LN's large gradients at the other end: Xiong et al. (2020) show that at "
          "initialisation they sit in the layers near the output, which is why a full-size "
          "first step hurts; Liu et al. (2020) observe vanishing, not exploding, gradients (in "
          "Post-LN's decoder) and argue that gradients are not the root of the trouble at all. normcore's pre_post_gradients experiment measures the "
          "gradient of every block of a freshly initialised Post-LN model, averaged over 32 "
          "initialisations: on average it rises toward the output, and single initialisations "
          "can differ (the figure below, `normcore figures pre_post_gradients`). The cell repeats that "
          "measure on 8 blocks and 4 initialisations: in each, the first two blocks get less "
          "than the last two (0.4 to 0.6 times). What happens during early training at a large "
          "learning rate is not measured here, so the verdict is that nothing supports the "
          "claim, not that it is refuted.",
          zh=zh(
              {"W1": "Post-Norm 的优缺点"},
              "不用 warmup 时，Post-Norm 的前几层（靠近输入）梯度爆炸",
              "不用 warmup 训练时，Post-Norm 模型的前几层，即靠近输入的那些层，会出现梯度爆炸。",
              "W1 没有给出处，W4 的说法正好相反（下一行）。文献把 Post-LN 的大梯度放在另一端：Xiong 等"
              "（2020）表明初始化时大梯度位于靠近输出的层，这就是完整步长的第一步会出问题的原因；Liu 等"
              "（2020）观察到的是（Post-LN 解码器中的）梯度消失而不是爆炸，并认为梯度根本不是问题的根源。"
              "normcore 的 pre_post_gradients 实验测量刚初始化的 Post-LN 模型每个块的梯度，在 32 次初始化上"
              "取平均：平均而言，它朝输出方向增大，单次初始化可能不同（见下图，`normcore figures "
              "pre_post_gradients`）。单元格在 8 个块、4 次初始化上重复这个测量：每一次，前两个块得到的都比"
              "后两个块少（0.4 到 0.6 倍）。在大学习率下训练初期会发生什么，这里没有测量，所以结论是没有证据"
              "支持这个论断，而不是它被驳倒了。"),
          figure="pre_post_gradients"),
    claim("post-gradients-weaken", "Pre-Norm and Post-Norm", ["W4"],
          "Post-Norm weakens the identity branch layer by layer, so the layers near the input "
          "get weak, unstable gradients",
          "Every Post-Norm layer scales the identity branch down by 1/sqrt(2), more and more "
          "toward the input, and the gradient on the way back is scaled the same way: the lower "
          "layers' gradients are unstable, Post-Norm's main drawback against Pre-Norm.",
          DISPUTED,
          "The direction matches what is measured: at initialisation Post-LN's first blocks get "
          "smaller gradients than its last (the previous row's cell: 0.4 to 0.6 times in each of "
          "4 initialisations; Xiong et al. 2020 put the large gradients near the output), and "
          "Liu et al. (2020) observe gradients vanishing toward the input in Post-LN's decoder. The "
          "cause is disputed: Liu et al. argue the gradients are not why Post-LN is hard to "
          "train (an update changes its output too much, the row 'Post-Norm needs warmup' "
          "measures that), and the gradient reaching the input itself is not weakened here: in "
          "stacks of 2, 8 and 32 Post-LN blocks it is 1.3, 1.2 and 2.2 times the output's. Only "
          "the blocks' parameter gradients are smaller toward the input.",
          zh=zh(
              {"W4": "恒等分支被削弱"},
              "Post-Norm 逐层削弱恒等分支，所以靠近输入的层梯度又弱又不稳定",
              "每个 Post-Norm 层都把恒等分支缩小 1/sqrt(2)，越靠近输入削弱越严重，反向传回的梯度也被同样"
              "缩小：低层的梯度不稳定，这是 Post-Norm 相对 Pre-Norm 的主要缺点。",
              "方向与测量一致：初始化时 Post-LN 前几个块得到的梯度比最后几个块小（上一行的单元格：4 次初始化"
              "中每一次都是 0.4 到 0.6 倍；Xiong 等 2020 把大梯度放在靠近输出处），Liu 等（2020）也观察到 "
              "Post-LN 解码器中梯度朝输入方向消失。原因有争议：Liu 等认为梯度并不是 Post-LN 难训练的原因"
              "（一次更新对输出的改变太大，“Post-Norm 需要 warmup”一行测量了这一点），而且这里到达输入的"
              "梯度本身并没有被削弱：在 2、8、32 个 Post-LN 块的堆叠中，它是输出处的 1.3、1.2、2.2 倍。只有"
              "各块参数的梯度朝输入方向变小。")),
    claim("deep-needs-pre", "Pre-Norm and Post-Norm", ["W1"],
          "very deep models (over ~30 layers) must use Pre-Norm",
          "Very deep Transformers (GPT-3's 96 layers) must use Pre-Norm to train stably; Post-Norm "
          "is for shallow models.",
          WRONG,
          "DeepNorm (Wang et al. 2022) keeps the norm after the residual sum, scales the "
          "identity branch by alpha = (2N)^(1/4) and the branches' initial weights down, and "
          "trains Post-LN Transformers of 1000 layers: depth does not force Pre-Norm. The "
          "1000 layers are not rerun here; what is measured is the mechanism: with normcore's "
          "DeepNorm blocks a small weight change moves a 32-block stack's output far less than "
          "plain Post-LN's.",
          zh=zh(
              {"W1": ("Pre-Norm 的优缺点", "模型应用案例")},
              "很深的模型（超过约 30 层）必须用 Pre-Norm",
              "很深的 Transformer（GPT-3 的 96 层）必须用 Pre-Norm 才能稳定训练；Post-Norm 适合浅层模型。",
              "DeepNorm（Wang 等 2022）把归一化层保留在残差相加之后，把恒等分支乘以 alpha = (2N)^(1/4)，并"
              "缩小各分支的初始权重，训练了 1000 层的 Post-LN Transformer：深度并不强制要求 Pre-Norm。这里"
              "没有重跑 1000 层；测量的是机制：用 normcore 的 DeepNorm 块，同样小的权重改动让一个 32 块堆叠的"
              "输出移动得远比普通 Post-LN 少。")),
    claim("llama-layers", "Pre-Norm and Post-Norm", ["W1"],
          "GPT-3 has 96 layers, LLaMA 32 or 65",
          "W1 gives the depths of the deep Pre-Norm models: GPT-3's 96 layers and LLaMA's "
          "32/65 layers.",
          WRONG,
          "GPT-3's 96 is right (Brown et al. 2020, the 175B model). LLaMA's 65 is the parameter "
          "count of its largest model, not its depth: the LLaMA paper gives 32 layers for the "
          "7B model and 80 for the 65B model (with 40 and 60 for 13B and 33B). The cell checks "
          "this against the architecture: counting the parameters of LLaMA's layers (four d x d "
          "attention matrices, three SwiGLU matrices, two RMSNorm gains, per layer; the "
          "embedding and output matrices) gives 6.7 billion for 7B's 32 layers and 65.3 billion "
          "for 65B's 80; with 65 layers of the same width it would be 53 billion.",
          zh=zh(
              {"W1": "模型应用案例"},
              "GPT-3 有 96 层，LLaMA 有 32 或 65 层",
              "W1 给出了深层 Pre-Norm 模型的深度：GPT-3 的 96 层和 LLaMA 的 32/65 层。",
              "GPT-3 的 96 层是对的（Brown 等 2020，175B 模型）。LLaMA 的 65 来自它最大模型的参数量 65B，"
              "不是深度：LLaMA 论文给出 7B 模型 32 层、65B 模型 80 层（13B 和 33B 分别为 40 和 60 层）。单元格"
              "用架构来核对：数一数 LLaMA 各层的参数（每层四个 d x d 的注意力矩阵、三个 SwiGLU 矩阵、两个 "
              "RMSNorm 增益；再加上嵌入和输出矩阵），7B 的 32 层得到 67 亿，65B 的 80 层得到 653 亿；如果是同样"
              "宽度的 65 层，则是 530 亿。")),
    claim("pre-converges-faster", "Pre-Norm and Post-Norm", ["W1"],
          "Pre-Norm converges faster: a large learning rate from the start, no warmup",
          "Pre-Norm converges fast: it can be trained directly with a fairly large learning "
          "rate (such as 1e-4) and without warmup.",
          NOT_AT_SCALE,
          "Xiong et al. (2020) report it for the comparison W1 implies: Pre-LN Transformers "
          "trained without warmup reach results comparable to Post-LN trained with it, in "
          "significantly less training time (BERT pretraining, translation). Liu et al. (2020) "
          "add that Pre-LN's head start need not last to the end (the row 'tuned Post-Norm "
          "reaches a better final quality'). Training those models is beyond this notebook. "
          "The cell measures the cause Xiong et al. prove at initialisation: Post-LN's "
          "gradients are largest near the output, Pre-LN's are not; below, the last block of 8 "
          "gets 4.0 to 4.5 times the gradient in Post-LN that it gets in Pre-LN, in each of 4 "
          "initialisations, which is why a rate that Pre-LN takes from the first step "
          "destabilises Post-LN. normcore's warmup experiment trains the pair on a toy task "
          "(`normcore figures warmup`); it shows Pre-LN learning without warmup, not that it "
          "converges faster.",
          zh=zh(
              {"W1": ("Pre-Norm 的优缺点", "4. 实践调参建议")},
              "Pre-Norm 收敛更快：一开始就用大学习率，无需 warmup",
              "Pre-Norm 收敛快：可以直接用较大的学习率（如 1e-4）训练，无需 warmup。",
              "Xiong 等（2020）在 W1 隐含的那种比较下报告了这一点：不用 warmup 训练的 Pre-LN Transformer，"
              "达到与用了 warmup 的 Post-LN 相当的结果，所需训练时间明显更少（BERT 预训练、机器翻译）。"
              "Liu 等（2020）补充说，Pre-LN 起步时的领先未必保持到最后（见“调好的 Post-Norm 最终效果比 "
              "Pre-Norm 好”一行）。训练那些模型超出了本 notebook 的范围。单元格测量的是 Xiong 等在初始化时"
              "证明的原因：Post-LN 的梯度在靠近输出处最大，Pre-LN 则不然；下面，在 4 次初始化的每一次中，"
              "8 个块里最后一个块在 Post-LN 中得到的梯度是在 Pre-LN 中的 4.0 到 4.5 倍，这就是为什么 Pre-LN "
              "从第一步起就能承受的学习率会让 Post-LN 失稳。normcore 的 warmup 实验在一个玩具任务上训练了这"
              "两种结构（`normcore figures warmup`）；它表明 Pre-LN 不用 warmup 也能学，并没有表明它收敛更快。")),
    claim("post-small-initial-lr", "Pre-Norm and Post-Norm", ["W1"],
          "train Post-Norm with a small initial learning rate (1e-5) to avoid exploding "
          "gradients",
          "For Post-Norm, the initial learning rate must be small (such as 1e-5) to avoid "
          "exploding gradients.",
          UNSUPPORTED,
          "No source, and it does not fit W1's own recipe two lines earlier, a warmup from "
          "1e-6 to 1e-4 over 1000 steps (row 'warm up from 1e-6 to 1e-4'): that warmup starts "
          "ten times lower than 1e-5, passes it at step 91 (below) and ends ten times higher. If "
          "'initial' means the start of training, the warmup is the small start; if it means "
          "the rate to train at, the published Post-LN models train higher: BERT peaks at 1e-4 "
          "after 10,000 warmup steps (Devlin et al. 2019) and the original Transformer's "
          "schedule peaks at 7.0e-4 after its 4000 (Vaswani et al. 2017; computed below from "
          "its formula). What protects Post-LN early on is the warmup, not a permanently small "
          "rate.",
          zh=zh(
              {"W1": "4. 实践调参建议"},
              "Post-Norm 的初始学习率要小（1e-5），以免梯度爆炸",
              "训练 Post-Norm 时，初始学习率要小（如 1e-5），以免梯度爆炸。",
              "没有出处，而且与 W1 自己在上面两行给出的方案对不上：在 1000 步内从 1e-6 升到 1e-4 的 warmup"
              "（“在 1000 步内从 1e-6 预热到 1e-4”一行）。这个 warmup 的起点比 1e-5 低十倍，在第 91 步越过 1e-5"
              "（下面），终点又比它高十倍。如果“初始”指训练开始时，那么小的起点就是 warmup 本身；如果指训练"
              "所用的学习率，那么已发表的 Post-LN 模型用的都更高：BERT 经过 10,000 步 warmup 后峰值为 1e-4"
              "（Devlin 等 2019），原始 Transformer 的学习率在 4000 步 warmup 后峰值为 7.0e-4（Vaswani 等 "
              "2017；下面按它的公式计算）。在训练初期保护 Post-LN 的是 warmup，而不是一直用小学习率。")),
    claim("bert-transformer-post-ln", "Pre-Norm and Post-Norm", ["W1"],
          "BERT and the original Transformer use LayerNorm after the residual sum (Post-Norm), "
          "with warmup",
          "The original Transformer normalises with LayerNorm, and Post-Norm with a warmup "
          "schedule is its default; BERT (12 layers) uses Post-Norm with warmup as well, for the "
          "best performance within 12 layers.",
          NOT_AT_SCALE,
          "The facts are in the papers. Vaswani et al. (2017, arXiv 1706.03762) write each "
          "sub-layer's output as LayerNorm(x + Sublayer(x)) and train with a learning rate "
          "that rises linearly over 4000 warmup steps and then decays as 1/sqrt(step); BERT "
          "(Devlin et al. 2019, arXiv 1810.04805) takes the original Transformer's encoder "
          "almost unchanged (its released code adds the residual, then normalises) and "
          "pretrains at 1e-4 with 10,000 warmup steps and a linear decay. Two details are W1's "
          "own: 12 layers is BERT-base (BERT-large has 24), and neither paper gives a reason "
          "for the norm's position, so 'for the best performance within 12 layers' (and, for "
          "LayerNorm, 'to fit variable-length text') are W1's reading. The models are far "
          "beyond this notebook; the cell computes the two schedules from the papers' numbers "
          "(the row 'the Post-LN and Pre-LN encoder-decoder, in pseudo-code' builds the "
          "blocks).",
          zh=zh(
              {"W1": (W1_LN + " › 案例", "模型应用案例")},
              "BERT 和原始 Transformer 在残差相加之后用 LayerNorm（Post-Norm），并配合 warmup",
              "原始 Transformer 用 LayerNorm 归一化，Post-Norm 配合 warmup 调度是它的默认选择；BERT（12 层）"
              "同样用 Post-Norm 加 warmup，以求在 12 层内达到最好的性能。",
              "这些事实在论文里都有。Vaswani 等（2017，arXiv 1706.03762）把每个子层的输出写成 "
              "LayerNorm(x + Sublayer(x))，训练时学习率在 4000 步 warmup 中线性上升，然后按 1/sqrt(step) "
              "衰减；BERT（Devlin 等 2019，arXiv 1810.04805）几乎原样采用原始 Transformer 的编码器（它公开的"
              "代码先加残差，再归一化），预训练学习率为 1e-4，warmup 10,000 步，之后线性衰减。有两处细节是 "
              "W1 自己的：12 层是 BERT-base（BERT-large 有 24 层）；两篇论文都没有说明归一化层为什么放在这个"
              "位置，所以“以求在 12 层内达到最好的性能”（以及对 LayerNorm 说的“适配可变长文本”）是 W1 的解读。"
              "这些模型远超本 notebook 的规模；单元格按论文给出的数字算出两种学习率调度（“Post-LN 与 Pre-LN "
              "的编码器-解码器伪代码”一行搭建了这些块）。")),
    claim("pre-in-large-models", "Pre-Norm and Post-Norm", ["W3"],
          "DiT, ViT and LLaMA use Pre-Norm because stability matters more when training large "
          "models",
          "Although Post-Norm should be better in theory, DiT, ViT and LLaMA use Pre-Norm, "
          "presumably because training stability matters more for large models: normalising "
          "each block's input keeps the gradients steady and better solves vanishing "
          "gradients.",
          NOT_AT_SCALE,
          "The facts are right. ViT applies LayerNorm before every block (Dosovitskiy et al. "
          "2021, arXiv 2010.11929); DiT's adaLN-Zero blocks normalise (and modulate) the input "
          "of each attention and MLP branch and add the gated result to the stream, a Pre-Norm "
          "arrangement (Peebles & Xie 2023, arXiv 2212.09748, and its published code); LLaMA "
          "normalises the input of each sub-layer (Touvron et al. 2023). The reason is "
          "LLaMA's own: its paper says it does so to improve training stability. ViT and DiT "
          "give none, so 'because' holds for one of the three by its authors' word. The "
          "mechanism W3 adds is not the literature's: Xiong et al. (2020) locate Post-LN's "
          "trouble in *large* gradients near the output at initialisation, not in vanishing "
          "ones. Below, at initialisation in 8 blocks, Post-LN's first block gets 0.3 to 0.6 of "
          "its last block's gradient and Pre-LN's 1.4 to 2.2, in each of 4 initialisations: "
          "some decay toward the input in Post-LN, none in Pre-LN, and neither vanishes at this "
          "depth. Whether stability decides it at scale is beyond this notebook.",
          zh=zh(
              {"W3": W3_POSITION},
              "DiT、ViT 和 LLaMA 用 Pre-Norm，是因为训练大模型时稳定性更重要",
              "尽管理论上 Post-Norm 应该更好，DiT、ViT 和 LLaMA 都用了 Pre-Norm，这应该是因为训练大模型时"
              "训练稳定性更重要：对每个残差块的输入做归一化，能保证梯度平稳，更好地解决梯度消失问题。",
              "事实是对的。ViT 在每个块之前做 LayerNorm（Dosovitskiy 等 2021，arXiv 2010.11929）；DiT 的 "
              "adaLN-Zero 块对每个注意力分支和 MLP 分支的输入做归一化（并加以调制），再把门控后的结果加回残差"
              "流，这是 Pre-Norm 的结构（Peebles 和 Xie 2023，arXiv 2212.09748，及其公开的代码）；LLaMA 对每个"
              "子层的输入做归一化（Touvron 等 2023）。这个理由是 LLaMA 自己给的：它的论文说这样做是为了提高"
              "训练稳定性。ViT 和 DiT 没有给出理由，所以“因为”按作者本人的说法只对三者之一成立。W3 补充的机制"
              "并不是文献的说法：Xiong 等（2020）把 Post-LN 的问题归于初始化时靠近输出处的梯度*过大*，而不是"
              "梯度消失。下面，在 8 个块、初始化状态下，4 次初始化的每一次中，Post-LN 第一个块得到的梯度是"
              "最后一个块的 0.3 到 0.6，Pre-LN 则是 1.4 到 2.2：Post-LN 的梯度向输入方向有所衰减，Pre-LN 没有，"
              "而在这个深度下两者都没有消失。在大规模下是否由稳定性决定，超出了本 notebook 的范围。")),
    claim("decision-guide", "Choosing a norm and its position", ["W1"],
          "which norm, which position: W1's decision guide",
          "W1 ends with a guide: BatchNorm for vision with large batches, LayerNorm for NLP "
          "models that need the mean removed, RMSNorm for large language models that want "
          "efficiency; Post-Norm with warmup for shallow models (under 30 layers) where "
          "performance comes first, Pre-Norm for deep ones (over 30) where stability does; and "
          "Post-Norm for fine-tuning, to protect the pretrained knowledge.",
          UNSUPPORTED,
          "A fair summary of common practice for the norms (rows above: BatchNorm's batch-size "
          "dependence, RMSNorm's cheaper step), but as rules it has no source and parts of it "
          "fail. The 30-layer line is not a law: DeepNorm trains Post-LN Transformers of 1000 "
          "layers (row 'very deep models (over ~30 layers) must use Pre-Norm'). Post-Norm's better performance is "
          "disputed (row 'tuned Post-Norm reaches a better final quality'). And the fine-tuning "
          "line offers a choice that does not exist: fine-tuning starts from the pretrained "
          "weights, which were trained with the norm in one place. Below, a Pre-LN block's "
          "weights loaded into a Post-LN block fit parameter for parameter (the same names and "
          "shapes) and still compute something else: the output moves by a third of its size.",
          zh=zh(
              {"W1": "总结：怎么选哪个Norm归一化方法呢？"},
              "选哪种归一化层、放在哪里：W1 的选择指南",
              "W1 最后给出一份指南：大批量的视觉任务用 BatchNorm，需要去均值的 NLP 模型用 LayerNorm，追求"
              "效率的大语言模型用 RMSNorm；追求效果的浅层模型（30 层以下）用带 warmup 的 Post-Norm，追求稳定"
              "的深层模型（30 层以上）用 Pre-Norm；微调时用 Post-Norm，以保护预训练知识。",
              "对归一化层的选择，这是对常见做法的合理总结（见上面各行：BatchNorm 对批次大小的依赖、RMSNorm 更"
              "省的计算），但作为规则它没有出处，而且有几部分站不住。30 层的界线不是定律：DeepNorm 训练了 "
              "1000 层的 Post-LN Transformer（“很深的模型（超过约 30 层）必须用 Pre-Norm”一行）。Post-Norm "
              "效果更好有争议（“调好的 Post-Norm 最终效果比 Pre-Norm 好”一行）。微调那一条给出的是一个并不"
              "存在的选择：微调从预训练权重开始，而这些权重是在归一化层处于某个固定位置时训练出来的。下面，"
              "把一个 Pre-LN 块的权重加载进一个 Post-LN 块，参数一一对应（名字和形状都相同），算出来的却是"
              "另一回事：输出移动了它自身大小的三分之一。")),
]
