"""The claims notebook's rows on Dropout: the printed example, the expectation, the mask's device,
regularisation.

One ``claim(...)`` per row, in the notebook's order (the record: claims_rows.py); the cell that
measures each row is claims_measure_dropout.py's, under the row's id.
"""

from claims_rows import claim, zh, REPRODUCED, NOT_AT_SCALE, WRONG, W3_DROPOUT

ROWS = [
    claim("dropout-printed", "Dropout", ["W3"],
          "W3's printed Dropout example (p = 0.4 on ones)",
          "W3 applies Dropout(p = 0.4) to a 2 x 6 tensor of ones: in training each entry is "
          "either 0 or 1/(1 - 0.4) = 1.6667, and in evaluation the ones come back unchanged.",
          REPRODUCED,
          "The mask is random, so the pattern of zeros depends on the generator; searching "
          "normcore's seeds finds generators that draw W3's two printed masks, and with them "
          "normcore prints W3's two training tensors digit for digit. Evaluation returns the "
          "input unchanged.",
          zh=zh(
              {"W3": W3_DROPOUT},
              "W3 打印的 Dropout 例子（在全 1 张量上 p = 0.4）",
              "W3 对一个 2 x 6 的全 1 张量做 Dropout(p = 0.4)：训练时每个元素要么是 0，要么是 "
              "1/(1 - 0.4) = 1.6667；推理时全 1 原样返回。",
              "掩码是随机的，所以零的位置取决于随机数生成器；在 normcore 的种子中搜索，能找到抽出 W3 两个"
              "打印掩码的生成器，用它们，normcore 逐位打印出 W3 的两个训练张量。推理时原样返回输入。")),
    claim("dropout-expectation", "Dropout", ["W3"],
          "inverted dropout keeps the expectation; nothing to do at test time",
          "Training-time dropout zeroes each unit with probability p and divides the kept ones "
          "by 1 - p, so the expected output equals the input, and at test time every unit is "
          "kept and nothing is rescaled.",
          REPRODUCED,
          "Averaged over 20000 masks normcore's Dropout returns the input to within 1%. (W3's "
          "derivation writes the expectation as equal to x_hat, the output, where it means x, "
          "the input: a slip of notation, not of substance.)",
          zh=zh(
              {"W3": W3_DROPOUT},
              "inverted dropout 保持期望不变；测试时什么都不用做",
              "训练时 dropout 以概率 p 把每个单元置零，并把保留下来的除以 1 - p，所以输出的期望等于输入；"
              "测试时保留所有单元，也不做任何缩放。",
              "在 20000 个掩码上取平均，normcore 的 Dropout 返回的结果与输入相差在 1% 以内。（W3 的推导把"
              "期望写成等于输出 x_hat，它的意思其实是输入 x：这是记号上的笔误，不是实质性的错误。）")),
    claim("dropout-mask-device", "Dropout", ["W3"],
          "W3's Dropout draws its mask with torch.rand(x.shape)",
          "W3's Dropout builds its mask as (torch.rand(x.shape) > p).float() and returns "
          "mask * x / (1 - p), which matches nn.Dropout.",
          WRONG,
          "torch.rand(x.shape) draws on the default device and in the default dtype, not x's, "
          "and .float() makes the mask float32. So on a GPU (any device but the CPU) the "
          "product fails: below, with x on PyTorch's 'meta' device, it raises 'Tensor on device "
          "meta is not on the expected device cpu'; and a float16 or bfloat16 x comes back as "
          "float32, doubling the memory of the activation, where nn.Dropout keeps float16. "
          "Draw the mask like x: torch.rand_like(x) > p, cast with .to(x.dtype) (or "
          "torch.empty_like(x).bernoulli_(1 - p)). normcore's Dropout draws its mask in x's "
          "shape and keeps x's dtype.",
          zh=zh(
              {"W3": W3_DROPOUT},
              "W3 的 Dropout 用 torch.rand(x.shape) 生成掩码",
              "W3 的 Dropout 用 (torch.rand(x.shape) > p).float() 生成掩码，返回 mask * x / (1 - p)，与 "
              "nn.Dropout 一致。",
              "torch.rand(x.shape) 在默认设备上、以默认的 dtype 生成随机数，而不是 x 的设备和 dtype；.float() "
              "又让掩码成为 float32。所以在 GPU 上（任何不是 CPU 的设备）这个乘法会失败：下面把 x 放在 PyTorch "
              "的“meta”设备上，它报错“Tensor on device meta is not on the expected device cpu”；而 float16 "
              "或 bfloat16 的 x 返回时变成了 float32，激活占用的内存翻倍，nn.Dropout 则保持 float16。掩码应当"
              "照着 x 生成：torch.rand_like(x) > p，再用 .to(x.dtype) 转换（或用 "
              "torch.empty_like(x).bernoulli_(1 - p)）。normcore 的 Dropout 按 x 的形状生成掩码，并保持 x 的 "
              "dtype。")),
    claim("dropout-regularises", "Dropout", ["W3"],
          "Dropout regularises: randomly dropped units keep the model from relying on a few",
          "Dropout, the commonest regulariser, drops a random share of the units in training, "
          "so the model cannot rely too much on particular units; it prevents overfitting and "
          "improves generalisation. At test time every unit is kept.",
          NOT_AT_SCALE,
          "Srivastava et al. (2014) show it on several benchmarks, with networks and training "
          "far beyond a notebook cell, so the effect on generalisation is not measured here. "
          "What can be measured is the noise it rests on: in training the same input gets a "
          "different output at every call, each unit multiplied by 0 or 1/(1 - p), so its "
          "spread relative to the input is sqrt(p / (1 - p)) = 0.82 for p = 0.4 (measured "
          "0.82 below): no unit is there reliably for the next layer to lean on. In "
          "evaluation the output is the input, every time.",
          zh=zh(
              {"W3": ("五、手撕归一化和正则化", W3_DROPOUT)},
              "Dropout 起正则化作用：随机丢弃神经元，使模型不依赖少数几个",
              "Dropout 是最常见的正则化组件，它在训练中随机丢弃一部分神经元，使模型不会过于依赖某些神经元，"
              "从而防止过拟合、增强泛化能力。测试时所有神经元都保留。",
              "Srivastava 等（2014）在多个基准上证明了这一点，所用的网络和训练远超一个 notebook 单元格，所以"
              "这里不测量它对泛化的效果。能测量的是它所依靠的噪声：训练时同一个输入每次调用得到的输出都不同，"
              "每个单元乘以 0 或 1/(1 - p)，所以相对于输入的波动是 sqrt(p / (1 - p))，p = 0.4 时为 0.82（下面"
              "实测 0.82）：没有哪个单元总在那里，让下一层可以依赖。推理时输出就是输入，每次都一样。")),
]
