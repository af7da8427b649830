"""Source of notebooks/claims.ipynb (build with: python notebooks/build.py claims).

The write-ups' claims, tested. normcore was conceived from four Chinese write-ups on
normalization (W1 to W4 below). ``CLAIMS`` has one row per claim they make about normalization,
restated in normcore's words, with its verdict and the evidence: a code cell that measures it
with normcore's layers. The notebook is built from this table, the README's table is
``readme_table()``, and ``tests/test_claims.py`` runs every row's evidence and asserts its
verdict on the numbers it measures.

The rows are data, by topic, in ``claims_data_*.py`` beside this file; the cells that measure
them are code, in ``claims_measure_*.py`` under the same topics (``PARTS`` lists them in the
notebook's order); claims_rows.py describes a row and says how to add one. This file lays the
notebook out: the legend of the verdicts, the summary table, a section per topic, the glossary.

The Chinese notebook, claims_zh.ipynb, is built from the same rows: each row's ``zh`` gives the
claim in Chinese with the heading of the passage it judges in each write-up, so that a reader
finds it (python notebooks/build.py claims_zh). The evidence cells are the same cells.

``writeup_claims.toml``, beside this file, lists the write-ups' claims section by section (the
heading as each write-up writes it, a paraphrase in normcore's words) with the ids of the rows
that judge them; ``tests/test_claims.py`` fails on a claim without a row, on a row whose sources
do not match the write-ups that list it, and on a Chinese heading that is not such a section.
"""

import textwrap

from build import code, md, question
from claims_measure_setup import SETUP
from claims_rows import (DISPUTED, MECHANISM, NOT_AT_SCALE, REPRODUCED, UNSUPPORTED, VERDICTS, WRONG,
                         gather)

# What each verdict means: the notebook's legend (the README's section says the same in short).
LEGEND = {
    REPRODUCED: "the cell below it measures the claim itself",
    MECHANISM: "the claim is about training runs a notebook cell cannot afford; the cell measures "
               "the mechanism it rests on, and names the normcore experiment (if any) that trains "
               "the models",
    NOT_AT_SCALE: "the literature supports it, but it is about trained models far larger than a "
                  "notebook runs; the cell measures what can be measured (usually the claim's "
                  "premise) and says what is left untested",
    DISPUTED: "the literature disagrees with itself, or the write-ups disagree with each other; "
              "the cell measures what can be measured and the text names both sides",
    UNSUPPORTED: "stated without a source, and neither the literature nor anything measurable "
                 "here supports it as stated; the cell measures what it can, often the nearest "
                 "thing that can be checked",
    WRONG: "the cell (or, for a fact about a published model, its paper) shows the claim failing, "
           "and what is right instead",
}

# The verdicts and their legend in the Chinese notebook.
VERDICTS_ZH = {
    REPRODUCED: "在此复现",
    MECHANISM: "在此复现其机制",
    NOT_AT_SCALE: "正确，但在此规模下无法复现",
    DISPUTED: "有争议",
    UNSUPPORTED: "缺乏依据",
    WRONG: "错误",
}
LEGEND_ZH = {
    REPRODUCED: "下面的单元格直接测量这个论断",
    MECHANISM: "论断讲的是训练，其规模超出了一个 notebook 单元格的承受范围；单元格测量它所依据的"
               "机制，并指出训练这些模型的 normcore 实验（如果有的话）",
    NOT_AT_SCALE: "文献支持它，但它说的是比 notebook 能跑的大得多的、训练好的模型；单元格测量能测的"
                  "部分（通常是论断的前提），并说明哪些没有检验",
    DISPUTED: "文献自身意见不一，或几篇文章之间互相矛盾；单元格测量能测的部分，正文列出双方的观点",
    UNSUPPORTED: "没有给出处，文献和这里能测量的任何结果都不支持它的原样表述；单元格测量它能测的，"
                 "往往是与它最接近的可检验的事情",
    WRONG: "单元格（对于已发表模型的事实，则是该模型的论文）表明论断不成立，并说明正确的是什么",
}
TOPICS_ZH = {
    "What normalization is for": "归一化的作用",
    "Pre-Norm and Post-Norm": "Pre-Norm 与 Post-Norm",
    "Choosing a norm and its position": "选择归一化层及其位置",
    "BatchNorm at small batches": "小 batch 下的 BatchNorm",
    "Depth in trained models": "训练后模型的深度",
}  # the other topics are layer names, the same in Chinese

WRITEUPS = {
    "W1": "Norm归一化方法: BatchNorm, LayerNorm and RMSNorm compared; Pre-Norm vs Post-Norm",
    "W2": "归一化(Normalization): the three norms written on a (b, s, d) tensor",
    "W3": "手撕归一化和正则化: LayerNorm, RMSNorm, BatchNorm and Dropout by hand, with printed "
          "example tensors; Pre-Norm vs Post-Norm",
    "W4": "the follow-up: the class-scores table, running statistics, the Post-Norm 1/sqrt(2) "
          "argument",
}

WRITEUPS_ZH = {
    "W1": "《Norm归一化方法》：BatchNorm、LayerNorm 与 RMSNorm 的对比；Pre-Norm 与 Post-Norm",
    "W2": "《归一化(Normalization)》：在 (b, s, d) 张量上写出三种归一化",
    "W3": "《手撕归一化和正则化》：手写 LayerNorm、RMSNorm、BatchNorm 和 Dropout，附打印的示例张量；"
          "Pre-Norm 与 Post-Norm",
    "W4": "无标题的续篇：成绩表、移动统计量、Post-Norm 的 1/sqrt(2) 论证",
}

# The topics, in the notebook's order: the rows of claims_data_NAME.py, measured by the cells of
# claims_measure_NAME.py.
PARTS = ["purpose", "batchnorm", "batchnorm_use", "small_batches", "layernorm", "rmsnorm", "dropout", "placement",
         "placement_training", "depth"]
CLAIMS = gather(PARTS)
CLAIM_IDS = [c["id"] for c in CLAIMS]


def _cell(text):
    return " ".join(text.split()).replace("|", "\\|")


def readme_table():
    """The README's table: one row per claim, numbered as in the notebook."""
    rows = ["| # | the write-ups' claim | in | verdict | catalog |", "|---|---|---|---|---|"]
    for n, c in enumerate(CLAIMS, 1):
        catalog = ", ".join(f"`{m.strip()}`" for m in c["catalog"].split(",")) if c["catalog"] else ""
        rows.append(f"| {n} | {_cell(c['title'])} | {', '.join(c['sources'])} | {c['verdict']} "
                    f"| {catalog} |")
    return "\n".join(rows)


def verdict_counts():
    """How many claims get each verdict, in the order of VERDICTS."""
    return {v: sum(c["verdict"] == v for c in CLAIMS) for v in VERDICTS}


def verdict_summary(lang="en"):
    """The sentence that counts the verdicts (the notebook's legend and the README give it)."""
    if lang == "zh":
        counts = "，".join(f"“{VERDICTS_ZH[v]}” {n} 条" for v, n in verdict_counts().items())
        return f"{len(CLAIMS)} 条论断中：{counts}。"
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts().items())
    return f"Of the {len(CLAIMS)} claims: {counts}."


def _summary(lang="en"):
    head = ("| 编号 | 论断 | 出处 | 结论 |" if lang == "zh" else "| # | claim | in | verdict |")
    rows = [head, "|---|---|---|---|"]
    for n, c in enumerate(CLAIMS, 1):
        title, verdict = ((c["zh"]["title"], VERDICTS_ZH[c["verdict"]]) if lang == "zh"
                          else (c["title"], c["verdict"]))
        rows.append(f"| {n} | {_cell(title)} | {', '.join(c['sources'])} | **{verdict}** |")
    return "\n".join(rows)


def locators(headings):
    """{write-up: heading(s)} -> 'W1 “heading”; W4 “a” and “b”' (the Chinese notebook's pointer)."""
    parts = []
    for source, where in headings.items():
        where = where if isinstance(where, tuple) else (where,)
        parts.append(f"{source} " + "、".join("第一个小标题之前的开篇" if h is None else f"“{h}”"
                                             for h in where))
    return "；".join(parts)


def _claim_zh(n, c):
    z = c["zh"]
    catalog = ""
    if c["catalog"]:
        ids = "、".join(f"`{m.strip()}`" for m in c["catalog"].split(","))
        catalog = f"\n\n练习评分器能认出这个错误：{ids}（`normcore practice list --mistakes`）。"
    figure = ""
    if c["figure"]:
        figure = f"\n\n![normcore 的 {c['figure']} 实验](../figures/{c['figure']}.png)"
    return (f"### {n}. {z['title']}\n\n"
            f"**论断**（{'、'.join(c['sources'])}）：{' '.join(z['text'].split())}\n\n"
            f"**原文位置**：{locators(z['headings'])}\n\n"
            f"**结论：{VERDICTS_ZH[c['verdict']]}。** {' '.join(z['why'].split())}{catalog}{figure}")


def _claim_cells(n, c):
    catalog = ""
    if c["catalog"]:
        ids = ", ".join(f"`{m.strip()}`" for m in c["catalog"].split(","))
        catalog = (f"\n\nThe practice grader names this mistake: {ids} "
                   f"(`normcore practice list --mistakes`).")
    figure = ""
    if c["figure"]:
        figure = f"\n\n![normcore's {c['figure']} experiment](../figures/{c['figure']}.png)"
    return [
        md(f"### {n}. {c['title']}\n\n"
           f"**Claim** ({', '.join(c['sources'])}): {' '.join(c['text'].split())}\n\n"
           f"**Verdict: {c['verdict']}.** {' '.join(c['why'].split())}{catalog}{figure}",
           zh=_claim_zh(n, c)),
        code(c["evidence"]),
    ]


GLOSSARY = r"""
## Glossary: English and Chinese

The write-ups are in Chinese; these are the terms they use, with the word normcore uses.

| normcore | the write-ups | note |
|---|---|---|
| normalization | 归一化 | here: standardising (mean 0, variance 1), not squeezing into [0, 1] |
| BatchNorm / LayerNorm / RMSNorm | 批(量)归一化 / 层归一化 / RMS 归一化 | |
| root mean square (RMS) | 均方根 | sqrt(mean(x^2)) over the features of one sample |
| mean, variance, standard deviation | 均值, 方差, 标准差 | |
| down a column (one feature, every sample) | 竖着看 (按列) | BatchNorm's statistics |
| along a row (one sample, every feature) | 横着看 (按行) | LayerNorm's and RMSNorm's |
| biased variance (divide by n) | 有偏方差; 总体方差 | what every norm normalises with |
| unbiased variance (divide by n - 1) | 无偏方差; 样本方差 | what BatchNorm feeds into running_var |
| eps | ε, 极小的正数 | PyTorch adds it inside the square root: sqrt(var + eps) |
| gamma, beta (learned scale and shift) | γ, β; 缩放和平移; 仿射变换 | |
| running mean / running variance | 移动平均 / 移动方差; 全局统计量 | BatchNorm's evaluation statistics |
| exponential moving average | 指数移动平均 (EMA) | |
| momentum (PyTorch: weight of the new batch) | 动量 (write-ups: weight of the old value) | the two conventions: momentum = 1 - decay |
| training / evaluation (inference) | 训练 / 推理 (测试) | `layer.train()` / `layer.eval()` |
| internal covariate shift | 内部协变量偏移 | |
| saturation, flat tails | 饱和区 | |
| vanishing / exploding gradients | 梯度消失 / 梯度爆炸 | |
| identity branch (the skip path x) | 恒等分支; 跳跃连接 | normcore also says identity path |
| residual branch (the sublayer F(x)) | 残差分支 | F is attention or the feed-forward |
| residual connection (x + F(x)) | 残差连接 | |
| Pre-Norm / Post-Norm | 前归一化 (Pre Norm) / 后归一化 (Post Norm) | where the norm sits in a block |
| sublayer | 子层 | |
| warmup (learning-rate warmup) | 预热; Warmup | the learning rate ramps up over the first steps |
| effective depth | 等效层数; 有效深度 | |
| dropout rate p (probability of dropping) | 丢弃率 | |
| mask | 掩码 | |
| regularization | 正则化 | |
| fine-tuning | 微调 | |
| low precision (float16) | 低精度 (FP16) | |
"""

CELLS = [
    md(textwrap.dedent(r"""
    # Four write-ups' claims on normalization, tested

    normcore was conceived from four write-ups on normalization, in Chinese. This notebook
    takes every claim they make about normalization, restates it in normcore's words, and
    tests it with normcore's layers. Each claim gets one of six verdicts:

    """).strip("\n") + "\n\n" + "\n".join(f"* **{v}**: {LEGEND[v]};" for v in VERDICTS)[:-1] + "."
    + "\n\n" + verdict_summary() + "\n\n" + textwrap.dedent(r"""
    The write-ups also print example tensors (LayerNorm, RMSNorm, BatchNorm, Dropout);
    normcore reproduces each of them. Where a claim repeats a mistake that normcore's practice
    grader recognises, its catalog id is given. `tests/test_claims.py` runs every cell below
    and asserts its verdict on the numbers it prints; `notebooks/src/writeup_claims.toml` lists
    the write-ups' claims section by section with the rows that judge them, and the same tests
    fail on a claim without a row.

    The write-ups:
    """).strip("\n") + "\n\n" + "\n".join(f"* **{k}**: {v}" for k, v in WRITEUPS.items()),
       zh=textwrap.dedent(r"""
    # 四篇文章关于归一化的论断，逐条检验

    normcore 是从四篇讲归一化的中文文章出发构思的。这本 notebook 收集了它们关于归一化的每一条
    论断，用 normcore 的话重述，再用 normcore 的层来检验。每条论断得到六种结论之一：

    """).strip("\n") + "\n\n"
       + "\n".join(f"* **{VERDICTS_ZH[v]}**：{LEGEND_ZH[v]}；" for v in VERDICTS)[:-1] + "。"
       + "\n\n" + verdict_summary("zh") + "\n\n" + textwrap.dedent(r"""
    几篇文章还打印了示例张量（LayerNorm、RMSNorm、BatchNorm、Dropout）；normcore 把每一个都
    复现了出来。如果某条论断重复了 normcore 练习评分器能认出的错误，会给出它在错误目录中的 id。
    每条论断都用**原文位置**注明它在原文中所在小节的标题，方便对照原文阅读。
    `tests/test_claims.py` 会运行下面的每个单元格，并根据它打印的数字断言它的结论；
    `notebooks/src/writeup_claims.toml` 按小节列出了几篇文章的论断以及评判它们的行，没有对应行的
    论断会让同一组测试失败。代码单元格与英文版相同，打印的说明文字是中文的；从 `figures/` 嵌入的实验图是事先画好的，文字是英文。

    四篇文章：
    """).strip("\n") + "\n\n" + "\n".join(f"* **{k}**：{v}" for k, v in WRITEUPS_ZH.items())),
    md("## Summary\n\n" + _summary(), zh="## 总览\n\n" + _summary("zh")),
    md("## Setup\n\nThe imports, and the helpers the cells below share.",
       zh="## 准备\n\n导入，以及下面各单元格共用的辅助函数。"),
    code(SETUP),
]
_topic = None
for _n, _c in enumerate(CLAIMS, 1):
    if _c["topic"] != _topic:
        _topic = _c["topic"]
        CELLS.append(md(f"## {_topic}", zh=f"## {TOPICS_ZH.get(_topic, _topic)}"))
    CELLS.extend(_claim_cells(_n, _c))
CELLS += [
    question(r"""
    The row "W3's BatchNorm matches nn.BatchNorm1d" passes a printed comparison with PyTorch
    and is still marked wrong. What would a test have to compare to catch it?
    """, r"""
    What one training forward does not use: the running statistics. In training BatchNorm
    normalises with the batch's own mean and variance, so a wrong running update (the flipped
    momentum, the biased variance) leaves that output exactly right. Compare `running_mean` and
    `running_var` after a few steps, and the outputs in evaluation mode, where they are used.
    """, zh=(r"""
    “W3 的 BatchNorm 与 nn.BatchNorm1d 一致”这一行通过了与 PyTorch 的打印对比，却仍被判为错误。
    一个测试要比较什么才能发现它？
    """, r"""
    比较一次训练前向用不到的东西：移动统计量。训练时 BatchNorm 用这个 batch 自己的均值和方差做
    归一化，所以错误的移动更新（动量方向反了、有偏方差）不会影响那个输出。要在几步之后比较
    `running_mean` 和 `running_var`，并比较推理模式下的输出，那里才会用到它们。
    """)),
    question(r"""
    Some write-ups write `running = 0.9 * running + 0.1 * batch` and call 0.9 the momentum.
    Is that update wrong?
    """, r"""
    No: it is PyTorch's update with `momentum=0.1`, written in the "decay" convention, where
    the number names the weight of the old value. The mistake (`bn-momentum-flipped`) is
    mixing the two: passing PyTorch's `momentum=0.1` into the decay formula gives
    `running = 0.1 * running + 0.9 * batch`, which follows the last batch almost entirely.
    """, zh=(r"""
    有的文章写 `running = 0.9 * running + 0.1 * batch`，并把 0.9 叫作动量。这个更新错了吗？
    """, r"""
    没错：这就是 PyTorch 在 `momentum=0.1` 时的更新，只是用“衰减”约定写出来，数字指的是旧值的
    权重。错误（`bn-momentum-flipped`）在于把两种约定混用：把 PyTorch 的 `momentum=0.1` 代入
    衰减公式，得到 `running = 0.1 * running + 0.9 * batch`，它几乎完全跟着最后一个 batch 走。
    """)),
]


def _glossary_zh():
    """The Chinese notebook's glossary: normcore's one glossary (normcore/i18n/glossary.toml)."""
    from normcore.i18n.glossary import terms

    rows = ["| English | 中文 | d2l |", "|---|---|---|"]
    rows += [f"| {t.en} | {t.zh} | {t.d2l} |" for t in terms()]
    return ("## 术语对照\n\nnormcore 的中文用词来自它的术语表（`normcore/i18n/glossary.toml`，文档站的"
            "“术语表”页有每个词的说明）；《动手学深度学习》中文版用词不同时列在 d2l 一栏。\n\n"
            + "\n".join(rows))


CELLS.append(md(GLOSSARY, zh=_glossary_zh()))
