"""Source of notebooks/batchnorm_in_practice.ipynb (build with: python notebooks/build.py batchnorm_in_practice).

It is one piece, though long: it holds nothing but the notebook's cells in order, each helper
defined in the code cell that shows it, so the file reads as the notebook does (one source per
notebook: helpers moved out would no longer be shown).
"""

from build import CLASS_SCORES, code, md, question
from normcore.bibliography import notebook_references

CELLS = [
    md(r"""
    # BatchNorm in practice: folded, recalibrated, frozen, synchronised, decayed

    The [BatchNorm notebook](batchnorm.ipynb) derives the layer's formulas and its backward. This
    one is about what practitioners do with it once it trains, each with numbers:

    1. folding BatchNorm into the Linear before it for inference; what of LayerNorm and RMSNorm
       folds (their gamma and beta, into the next Linear) and what does not (their per-sample
       division)
    2. the running statistics after training: recalibrating them, and freezing them for
       fine-tuning
    3. SyncBatchNorm: statistics over a batch split across workers, two protocols written out
       (normcore's three all-reduces, PyTorch's all_gather and all-reduce), after the
       workers agree on what they are about to exchange
    4. scale invariance: a weight before BatchNorm, its gradient, and weight decay
    5. BatchNorm before or after the activation, and the useless bias before a BatchNorm
    6. a summary

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import copy

    import numpy as np
    import normcore as nc
    import normcore.distributed as ncd

    np.set_printoptions(precision=4, suppress=True)
    """, "# the class's test scores, used throughout" + CLASS_SCORES),

    # --- 1. folding --------------------------------------------------------------------------
    md(r"""
    ## 1. Folding BatchNorm into the Linear for inference

    ### A concrete example

    The class's test scores (`scores`, defined with the imports): four students (the batch),
    three subjects (the features).
    A Linear turns each student's three scores into three grades (a science grade from maths
    and physics, a humanities grade mostly from literature, an overall one), and a BatchNorm
    standardises each grade over the class. Running the BatchNorm once in training mode with
    `momentum=1.0` makes its running statistics exactly this class's (the unbiased variance).
    """),
    code(r"""
    linear = nc.Linear(3, 3)
    linear.weight.data[...] = [[0.5, 0.5, 0.0],       # science: maths and physics
                               [0.0, 0.2, 0.8],       # humanities: mostly literature
                               [0.4, 0.3, 0.3]]       # overall
    linear.bias.data[...] = [0.0, 5.0, -2.0]
    bn = nc.BatchNorm1d(3, momentum=1.0)
    bn.gamma.data[...] = [2.0, 0.5, 1.5]
    bn.beta.data[...] = [1.0, -1.0, 0.0]
    grades = linear(scores)
    bn(grades)                                        # training mode: running = this class's statistics
    bn.eval()
    print("grades (Linear output):\n", grades)
    print("running_mean:", bn.running_mean, " running_var:", bn.running_var)
    print("linear -> bn in evaluation:\n", bn(linear(scores)))
    """),
    md(r"""
    ### The derivation

    In evaluation BatchNorm uses its running statistics $\mu$ and $\sigma^2$, constants, so for
    each output feature $j$ it is a fixed affine map. Write $z = Wx + b$ for the Linear and
    $s_j = \gamma_j / \sqrt{\sigma_j^2 + \epsilon}$ ($\epsilon$ inside the square root, as in the
    layer):

    $$y_j = \gamma_j\,\frac{z_j - \mu_j}{\sqrt{\sigma_j^2 + \epsilon}} + \beta_j
          = s_j\,(W_j x + b_j - \mu_j) + \beta_j
          = \underbrace{(s_j W_j)}_{W'_j}\,x + \underbrace{s_j\,(b_j - \mu_j) + \beta_j}_{b'_j}$$

    So the pair is one Linear with $W' = \operatorname{diag}(s)\,W$ (row $j$ of $W$ scaled by
    $s_j$) and $b' = s \odot (b - \mu) + \beta$. By hand, then against `nc.fold_batchnorm` and
    against the pair itself, on the class and on two new students:
    """),
    code(r"""
    s = bn.gamma.data / np.sqrt(bn.running_var + bn.eps)          # (3,)
    W_folded = s[:, None] * linear.weight.data                    # (out, in): row j times s_j
    b_folded = s * (linear.bias.data - bn.running_mean) + bn.beta.data
    folded = nc.fold_batchnorm(linear, bn)
    print("W' by hand:\n", W_folded, "\nb' by hand:", b_folded)
    fold_vs_hand = max(np.abs(folded.weight.data - W_folded).max(), np.abs(folded.bias.data - b_folded).max())
    print("fold_batchnorm - by hand:", fold_vs_hand)

    new_students = np.array([[100.0, 100.0, 100.0], [30.0, 75.0, 55.0]])
    both = np.vstack([scores, new_students])
    fold_vs_pair = np.abs(folded(both) - bn(linear(both))).max()
    print("folded Linear - (linear -> bn.eval()) on six students:", fold_vs_pair)
    assert fold_vs_hand < 1e-12 and fold_vs_pair < 1e-12
    """),
    md(r"""
    Two slips give a fold that looks right and is not: $\epsilon$ outside the square root
    ($\gamma / (\sigma + \epsilon)$), off by a little, more where a variance is small; and the
    statistics of the *batch* at hand in place of the running ones, which makes the folded
    layer depend on whatever batch it was folded with. `fold_batchnorm` refuses a BatchNorm in
    training mode for that reason:
    """),
    code(r"""
    s_outside = bn.gamma.data / (np.sqrt(bn.running_var) + bn.eps)
    print("eps outside the square root, largest output error:",
          np.abs((s_outside[:, None] * linear.weight.data) @ both.T - W_folded @ both.T).max())
    try:
        nc.fold_batchnorm(linear, copy.deepcopy(bn).train())
    except ValueError as err:
        print("training mode:", err)
    """),
    md(r"""
    ### LayerNorm and RMSNorm: what does not fold

    A folded layer is affine: $f(x) = W'x + b'$. An affine map sends the midpoint of two inputs
    to the midpoint of their outputs. LayerNorm's statistics are those of each *sample*, so its
    scale $1/\sqrt{\operatorname{var}(z) + \epsilon}$ changes from student to student: for Ana and
    Dina it differs, and the midpoint test fails. No $W'$ and $b'$ can reproduce the division by
    each sample's own standard deviation; it must be computed at inference too. RMSNorm's mean
    square is per sample as well; its failure is smaller here, because these grades sit far
    from zero, where every student's RMS is nearly the same, but it is over ten trillion times
    float64's rounding.
    """),
    code(r"""
    ana, dina = linear(scores[[0]]), linear(scores[[3]])         # their grades, (1, 3) each
    ln_scale = {name: 1 / np.sqrt(g.var() + 1e-5) for name, g in (("Ana", ana), ("Dina", dina))}
    print("LayerNorm's scale 1/sqrt(var + eps): Ana %.4f, Dina %.4f" % (ln_scale["Ana"], ln_scale["Dina"]))

    middle = (scores[[0]] + scores[[3]]) / 2                      # a student halfway between them
    midpoint_gap = {}
    for name, norm in (("BatchNorm (eval)", bn), ("LayerNorm", nc.LayerNorm(3, elementwise_affine=False)),
                       ("RMSNorm", nc.RMSNorm(3, elementwise_affine=False))):
        f = lambda x: norm(linear(x))
        midpoint_gap[name] = np.abs(f(middle) - (f(scores[[0]]) + f(scores[[3]])) / 2).max()
        print(f"{name:<17} |f(midpoint) - midpoint of f|: {midpoint_gap[name]:.2e}")
    assert ln_scale["Ana"] > 1.5 * ln_scale["Dina"]
    assert midpoint_gap["BatchNorm (eval)"] < 1e-12 and midpoint_gap["LayerNorm"] > 0.5 and midpoint_gap["RMSNorm"] > 1e-3
    """),
    md(r"""
    ### What folds: gamma and beta, into the next Linear

    The division stays, but what comes after it is affine: each of these norms ends with
    $\gamma \odot \hat{x} + \beta$, and the Linear that reads it computes

    $$W(\gamma \odot \hat{x} + \beta) + b
      = \underbrace{(W \operatorname{diag}(\gamma))}_{W'}\,\hat{x} + \underbrace{W\beta + b}_{b'}$$

    so column $i$ of $W$ is scaled by $\gamma_i$ (BatchNorm's fold into the Linear *before* it
    scaled rows), and $W\beta$, with the original $W$, joins the bias. What is left in front of
    the folded Linear is the same norm without its affine (`elementwise_affine=False`).
    `nc.fold_norm_affine(norm, linear)` returns that Linear. Below: a LayerNorm over the three
    grades with a learned $\gamma$ and $\beta$, then a Linear to two outputs, by hand and
    folded, on the six students.
    """),
    code(r"""
    ln = nc.LayerNorm(3)
    ln.gamma.data[...] = [1.5, 0.5, 2.0]
    ln.beta.data[...] = [0.2, -0.3, 1.0]
    head = nc.Linear(3, 2, rng=1, init="torch")
    W, b = head.weight.data, head.bias.data
    W_by_hand, b_by_hand = W * ln.gamma.data, W @ ln.beta.data + b    # columns times gamma; W beta + b
    folded_head = nc.fold_norm_affine(ln, head)
    bare_ln = nc.LayerNorm(3, elementwise_affine=False)               # the same statistics, no affine
    z = linear(both)                                                  # the six students' grades
    affine_vs_hand = max(np.abs(folded_head.weight.data - W_by_hand).max(),
                         np.abs(folded_head.bias.data - b_by_hand).max())
    affine_vs_pair = np.abs(folded_head(bare_ln(z)) - head(ln(z))).max()
    print("fold_norm_affine - by hand:", affine_vs_hand)
    print("head(ln(z)) - folded_head(bare_ln(z)), six students:", affine_vs_pair)

    rms = nc.RMSNorm(3)
    rms.gamma.data[...] = [0.7, 1.2, -0.4]
    rms_vs_pair = np.abs(nc.fold_norm_affine(rms, head)(nc.RMSNorm(3, elementwise_affine=False)(z))
                         - head(rms(z))).max()
    print("the same with an RMSNorm (gamma only):", rms_vs_pair)
    assert affine_vs_hand < 1e-12 and affine_vs_pair < 1e-12 and rms_vs_pair < 1e-12
    """),
    md(r"""
    The fold saves the $2d$ parameters $\gamma, \beta$ and one multiply and one add per feature
    of every sample; the mean, the variance and the division (RMSNorm: the mean square and the
    division) remain, per sample, at inference.

    ### LayerNorm's centring, absorbed into the weights that write its input

    LayerNorm subtracts each sample's mean before dividing. If its input already has mean 0
    over the features, that subtraction does nothing and LayerNorm is RMSNorm with the same
    $\epsilon$ (the variance of a mean-free vector is its mean square). In a Pre-LN Transformer
    the input of every LayerNorm is the residual stream, a sum of what the embedding and each
    sublayer's output Linear write into it; if every writer writes mean-free vectors, the
    stream is mean-free. A Linear $z = Wx + b$ writes mean-free vectors for every $x$ when the
    mean of its rows is subtracted: $W' = W - \mathbf{1}\bar{w}^\top$ with
    $\bar{w} = \frac{1}{d}\sum_j W_j$, and $b' = b - \bar{b}$; an embedding table loses each
    row's own mean. Below, a stream of width 8 written by an embedding and two Linears:
    LayerNorm of the original stream against RMSNorm of the stream written by the centred
    weights.
    """),
    code(r"""
    rng = np.random.default_rng(3)
    d = 8
    table = rng.normal(size=(5, d))                               # an embedding: 5 tokens, width d
    writers = [nc.Linear(4, d, rng=rng, init="torch") for _ in range(2)]
    tokens, inputs = rng.integers(0, 5, size=6), [rng.normal(size=(6, 4)) for _ in writers]

    def stream(table, writers):
        return table[tokens] + sum(w(x) for w, x in zip(writers, inputs))

    centred = copy.deepcopy(writers)
    for w in centred:
        w.weight.data -= w.weight.data.mean(axis=0)               # subtract the mean row
        w.bias.data -= w.bias.data.mean()
    centred_table = table - table.mean(axis=1, keepdims=True)     # each token's vector mean-free

    x, x_centred = stream(table, writers), stream(centred_table, centred)
    print("largest |mean over features| of the stream: original %.3f, centred writers %.1e"
          % (np.abs(x.mean(axis=1)).max(), np.abs(x_centred.mean(axis=1)).max()))
    ln_vs_rms = np.abs(nc.LayerNorm(d, eps=1e-5)(x) - nc.RMSNorm(d, eps=1e-5)(x_centred)).max()
    rms_uncentred = np.abs(nc.LayerNorm(d, eps=1e-5)(x) - nc.RMSNorm(d, eps=1e-5)(x)).max()
    print("LayerNorm(stream) - RMSNorm(centred stream):", ln_vs_rms)
    print("LayerNorm(stream) - RMSNorm(stream), without the centring:", rms_uncentred)
    assert ln_vs_rms < 1e-12 and rms_uncentred > 0.1
    """),
    md(r"""
    So a LayerNorm folds down to its division: $\gamma$ and $\beta$ into the Linear after it,
    the centring into the weights before it. What no weight absorbs is the per-sample
    $1/\sqrt{\operatorname{var} + \epsilon}$ (RMSNorm's $1/\sqrt{\operatorname{mean}(x^2) +
    \epsilon}$), which depends on the input; that part is the norm's cost at inference.
    """),
    question(r"""
    A network has Linear $\to$ ReLU $\to$ BatchNorm $\to$ Linear. The ReLU stands between the
    BatchNorm and the Linear before it. Can the BatchNorm still be folded away at inference?
    """, r"""
    Yes, into the Linear *after* it. In evaluation BatchNorm is $h \mapsto s \odot h + t$ with
    $s = \gamma/\sqrt{\sigma^2 + \epsilon}$ and $t = \beta - s \odot \mu$; the next Linear then
    computes $W_2 (s \odot h + t) + b_2 = (W_2 \operatorname{diag}(s))\,h + (W_2 t + b_2)$:
    column $j$ of $W_2$ scaled by $s_j$. Checked below. It cannot move across the ReLU, which
    is not affine.
    """),
    code(r"""
    after = nc.Linear(3, 2, rng=0)
    t = bn.beta.data - s * bn.running_mean
    merged = nc.Linear(3, 2)
    merged.weight.data[...] = after.weight.data * s               # (2, 3): column j times s_j
    merged.bias.data[...] = after.weight.data @ t + after.bias.data
    h = np.maximum(linear(both), 0)                               # after the ReLU
    fold_after_error = np.abs(merged(h) - after(bn(h))).max()
    print("BatchNorm folded into the next Linear, largest difference:", fold_after_error)
    assert fold_after_error < 1e-12
    """),
    md(r"""
    ### The time saved

    Folding removes one pass over the Linear's output. Timed with `normcore.perf.timing` (the
    pair and the folded Linear interleaved round by round; the median over rounds of the ratio
    of their times), at width 256 and a batch of 256, on one thread:
    """),
    code(r"""
    from normcore.perf.threads import single_thread
    from normcore.perf.timing import LayerRunner, paired_ratio, time_interleaved

    rng = np.random.default_rng(0)
    wide, wide_bn = nc.Linear(256, 256, rng=rng), nc.BatchNorm1d(256)
    wide_bn.running_mean[...], wide_bn.running_var[...] = rng.normal(size=256), rng.uniform(0.5, 2, 256)
    nets = {"pair": nc.Sequential(wide, wide_bn).eval(), "folded": nc.fold_batchnorm(wide, wide_bn.eval())}
    batch = rng.normal(size=(256, 256))
    with single_thread():
        times = time_interleaved({k: LayerRunner(net, batch, None) for k, net in nets.items()}, ["forward"], 30)
    ratio = paired_ratio(times["folded", "forward"], times["pair", "forward"])
    print(f"folded time / pair time: {ratio:.2f} (this machine, this run)")
    print("outputs differ by", np.abs(nets["pair"](batch) - nets["folded"](batch)).max())
    """),
    md(r"""
    The experiment `recalibration` measures this at three widths: folding removes about 40% of
    the pair's time at width 64 and 5% at 1024, where the matrix product dwarfs one pass over
    its output. The saving is the BatchNorm's whole cost; a LayerNorm or RMSNorm keeps its
    per-sample statistics and division at inference, with or without its affine folded.

    ![Forward time of Linear -> BatchNorm1d against the folded Linear at three widths](../figures/recalibration_fold.png)
    """),

    # --- 2. running statistics ---------------------------------------------------------------
    md(r"""
    ## 2. Running statistics after training

    ### Recalibration

    During training the running statistics are an exponential average (momentum 0.1) over
    batches seen by weights that have moved since; early in training they still remember their
    start (mean 0, variance 1). `nc.recalibrate_batchnorm(model, batches)` recomputes them after
    training: each BatchNorm's running mean and variance become exactly the mean and the
    unbiased variance ($\times N/(N-1)$, $N$ the total count) of everything it receives over
    all the batches *together*, every sample weighing the same.

    Three more classes, of 2, 5 and 13 students, go through a small model after only three
    training batches:
    """),
    code(r"""
    rng = np.random.default_rng(1)
    classes = [rng.normal(70, 12, size=(n, 3)) for n in (2, 5, 13)]       # uneven batches
    model = nc.Sequential(nc.Linear(3, 4, rng=0), nc.BatchNorm1d(4), nc.ReLU(), nc.Linear(4, 2, rng=1),
                          nc.BatchNorm1d(2))
    for cls in classes:
        model(cls)                                    # three training batches, momentum 0.1
    everyone = np.vstack(classes)                     # the 20 students together

    def gap(model, x):                                # |training-mode output - evaluation output|
        in_training = copy.deepcopy(model).train()(x)
        return np.abs(in_training - model.eval()(x)).mean()

    print("first BatchNorm's running_mean after 3 batches:", model[1].running_mean)
    print("mean of its input over everyone:              ", model[0](everyone).mean(axis=0))
    gap_before = gap(model, everyone)
    nc.recalibrate_batchnorm(model, classes)
    gap_after = gap(model, everyone)
    print(f"mean |train-mode - eval| on the 20 students: before {gap_before:.3f}, after recalibration {gap_after:.3f}")

    as_one = nc.recalibrate_batchnorm(copy.deepcopy(model), [everyone])   # the 20 as one batch
    gap_one_batch = gap(as_one, everyone)
    for b in (as_one[1], as_one[4]):
        b.running_var *= 19 / 20                      # undo the unbiased factor N / (N - 1)
    gap_biased = gap(as_one, everyone)
    print(f"recalibrated on the 20 as one batch: {gap_one_batch:.3f}; with the biased variance: {gap_biased:.1e}")
    """),
    md(r"""
    The gap shrinks ninety-fold. What is left has two sources, both measured above: the running
    variance is the unbiased one ($\times 20/19$), while training mode divides by the biased
    one (recalibrated on the 20 as one batch and with that factor undone, the gap is rounding);
    and the second BatchNorm's statistics were gathered while the first normalised each class
    with its own statistics, as in training, not the 20 together. The running statistics are
    exactly those of the concatenated batches; checked for each BatchNorm against its input:
    """),
    code(r"""
    replay = copy.deepcopy(model).train()             # replays the calibration pass
    inputs_bn1 = [replay[0](c) for c in classes]
    inputs_bn2 = [replay[3](replay[2](replay[1](h))) for h in inputs_bn1]
    recal_error = 0.0
    for bn_, inputs in ((model[1], inputs_bn1), (model[4], inputs_bn2)):
        pooled = np.vstack(inputs)
        recal_error = max(recal_error, np.abs(bn_.running_mean - pooled.mean(axis=0)).max(),
                          np.abs(bn_.running_var - pooled.var(axis=0, ddof=1)).max())
    print("running statistics - those of the concatenated batches (unbiased):", recal_error)
    assert recal_error < 1e-12 and gap_after < gap_before / 50 and gap_biased < 1e-12 < gap_one_batch < gap_after
    """),
    md(r"""
    **PyTorch's `momentum=None`** (the cumulative average, also what `torch.optim.swa_utils.update_bn`
    uses) averages per *batch*, not per sample: its running mean is the mean of the batch means,
    its running variance the mean of the batches' unbiased variances. With uneven batches the
    class of 2 then weighs as much as the class of 13, and the variance leaves out how far the
    batch means spread around the overall mean:
    """),
    code(r"""
    cumulative = nc.BatchNorm1d(4, momentum=None)
    for h in inputs_bn1:
        cumulative(h)                                  # training mode: running = plain average of batches
    per_batch_mean = np.mean([h.mean(axis=0) for h in inputs_bn1], axis=0)
    per_batch_var = np.mean([h.var(axis=0, ddof=1) for h in inputs_bn1], axis=0)
    print("momentum=None   running_mean:", cumulative.running_mean, " running_var:", cumulative.running_var)
    print("recalibrated    running_mean:", model[1].running_mean, " running_var:", model[1].running_var)
    cumulative_is_per_batch = max(np.abs(cumulative.running_mean - per_batch_mean).max(),
                                  np.abs(cumulative.running_var - per_batch_var).max())
    per_batch_vs_pooled = np.abs(cumulative.running_var / model[1].running_var - 1).max()
    print("momentum=None - (mean of batch means, mean of batch variances):", cumulative_is_per_batch)
    print(f"its running_var is off from the pooled one by up to {per_batch_vs_pooled:.0%}")
    assert cumulative_is_per_batch < 1e-12 and per_batch_vs_pooled > 0.05
    """),
    md(r"""
    ### Freezing for fine-tuning

    Fine-tuning often sees batches too small or too different for good batch statistics (one
    image at a time in detection, a new domain). `nc.freeze_batchnorm(model)` puts every
    BatchNorm in evaluation mode, where it stays when `model.train()` is called: it normalises
    with the running statistics, which no longer move, while the rest of the model trains.
    Fine-tuning on one student scoring 20 points above everyone, a batch of one that an unfrozen
    BatchNorm refuses:
    """),
    code(r"""
    frozen_model = copy.deepcopy(model)
    frozen = nc.freeze_batchnorm(frozen_model)
    frozen_model.train()
    frozen_flags = [b.training for b in frozen]
    print("after model.train(): Linear training?", frozen_model[0].training, " BatchNorms training?", frozen_flags)
    stats_before = [(b.running_mean.copy(), b.running_var.copy()) for b in frozen]
    bright = everyone[:1] + 20.0                       # one student, 20 points higher everywhere
    out = frozen_model(bright)
    frozen_model.zero_grad()
    frozen_model.backward(np.ones_like(out))
    stats_unchanged = all(np.array_equal(b.running_mean, m) and np.array_equal(b.running_var, v)
                          for b, (m, v) in zip(frozen, stats_before))
    print("running statistics unchanged:", stats_unchanged)
    print("output = evaluation output:", np.array_equal(out, model.eval()(bright)))
    print("gamma of the first BatchNorm still gets a gradient:", frozen[0].gamma.grad)
    try:
        model.train()(bright)
    except ValueError as err:
        print("unfrozen, a batch of one:", err)
    nc.freeze_batchnorm(frozen_model, False)
    print("unfrozen again, BatchNorms training?", [b.training for b in frozen])
    assert stats_unchanged and frozen_model[0].training and not any(frozen_flags)
    """),
    md(r"""
    (gamma and beta still learn; to keep them fixed too, as torchvision's `FrozenBatchNorm2d`
    does, leave them out of the optimizer.)

    **Measured in training** (experiment `recalibration`, an MLP with four BatchNorms trained
    with SGD at a high learning rate): with momentum 0.1, recalibrated statistics lower the
    test loss by about 0.1 nats over the first ~70 steps and by 0 to 0.03 afterwards, when the
    running mean sits within sampling noise of the recalibrated one. With momentum 0.01 (the
    "0.99" of frameworks that count the other way) the running statistics lag for hundreds of
    steps, up to 1.4 nats worse than recalibrated. Each test batch's own statistics (batches of
    32) are worse than recalibrated ones at every checkpoint.

    ![Test loss with running, recalibrated and per-batch statistics, and the running statistics' error](../figures/recalibration.png)
    """),

    # --- 3. SyncBatchNorm --------------------------------------------------------------------
    md(r"""
    ## 3. SyncBatchNorm: one batch, several workers

    ### The problem

    In data-parallel training each of $K$ workers (GPUs, processes) holds a copy of the network
    and a shard of the batch. A plain BatchNorm on each worker standardises with its own shard.
    Detection and segmentation fit one or two images per device, so those statistics come from
    one or two values. Put Ana and Ben on worker 0 and Chen and Dina on worker 1: with two values
    each standardised score is $\pm 1$, so Ben's 60 and Chen's 70 in maths come out the same.
    """),
    code(r"""
    plain = nc.BatchNorm1d(3, affine=False)
    per_worker = np.vstack([plain(scores[:2]), plain(scores[2:])])
    whole = plain(scores)
    print("         per worker (2 each)          whole class")
    for name, a, b in zip(students, per_worker, whole):
        print(f"{name:<5}  {a}   {b}")
    """),
    md(r"""
    ### normcore's protocol: three all-reduces

    SyncBatchNorm takes the statistics of the whole batch. normcore's default protocol
    (`protocol="allreduce"`) uses one kind of collective operation, the **all-reduce**: every
    worker sends a vector, and every worker receives their sum. Worker $k$ holds $x_k$, $n_k$
    values per channel; $N = \sum_k n_k$.

    | | what each worker sends | what every worker then computes |
    |---|---|---|
    | forward, round 1 | $[n_k,\ \sum x_k]$ ($1 + C$ numbers) | $N$, $\ \mu = \sum_k \sum x_k / N$ |
    | forward, round 2 | $\sum (x_k - \mu)^2$ ($C$ numbers) | $\sigma^2 = \text{sum} / N$, $\ \hat{x}_k$, $\ y_k = \gamma\hat{x}_k + \beta$ |
    | backward | $[\sum dy_k,\ \sum dy_k\,\hat{x}_k]$ ($2C$ numbers) | $\bar{\beta}$, $\bar{\gamma}$ of the whole batch, then $\bar{x}_k$ |

    with $\bar{x}_k = \gamma\,r\,\big(dy_k - \bar{\beta}/N - \hat{x}_k\,\bar{\gamma}/N\big)$, $r =
    1/\sqrt{\sigma^2 + \epsilon}$: BatchNorm's compact backward, whose two means over the batch
    are the all-reduced sums divided by $N$. Written out, and run on an `InProcessGroup` (four
    workers as four threads of this process) with shards of 2, 1, 5 and 0 samples; the group's
    log holds every message:
    """),
    code(r"""
    C, eps = 3, 1e-5
    rng = np.random.default_rng(2)
    gamma, beta = rng.uniform(0.5, 1.5, C), rng.normal(0, 0.5, C)
    shards = [rng.normal(rng.normal(0, 3), 2, size=(n, C)) for n in (2, 1, 5, 0)]   # each its own mean
    dys = [rng.standard_normal(x.shape) for x in shards]

    def sync_batchnorm(worker, x, dy):
        got = worker.all_reduce(np.concatenate([[len(x)], x.sum(axis=0)]), "forward 1: [n_k, sum x_k]")
        N, mean = got[0], got[1:] / got[0]                                     # (C,)
        var = worker.all_reduce(((x - mean) ** 2).sum(axis=0), "forward 2: sum (x_k - mean)^2") / N
        r = 1 / np.sqrt(var + eps)
        x_hat = (x - mean) * r                                                 # (n_k, C)
        y = gamma * x_hat + beta
        got = worker.all_reduce(np.concatenate([dy.sum(axis=0), (dy * x_hat).sum(axis=0)]),
                                "backward: [sum dy_k, sum dy_k x_hat_k]")
        dbeta, dgamma = got[:C], got[C:]                                       # over the whole batch
        dx = gamma * r * (dy - dbeta / N - x_hat * dgamma / N)
        return y, dx, dgamma, dbeta

    log = []
    results = ncd.InProcessGroup(4, log=log).run(sync_batchnorm, shards, dys)
    for message in log:
        print(message)
    """),
    md(r"""
    Three messages of 32, 24 and 48 bytes per worker, whatever the shard sizes; the worker with
    no samples sends zeros and receives the same statistics. Against `BatchNorm1d` on the
    concatenated batch:
    """),
    code(r"""
    reference = nc.BatchNorm1d(C, eps=eps)
    reference.gamma.data[...], reference.beta.data[...] = gamma, beta
    y_all = reference(np.vstack(shards))
    dx_all = reference.backward(np.vstack(dys))
    hand_error = max(np.abs(np.vstack([r[0] for r in results]) - y_all).max(),
                     np.abs(np.vstack([r[1] for r in results]) - dx_all).max(),
                     np.abs(results[0][2] - reference.gamma.grad).max(), np.abs(results[0][3] - reference.beta.grad).max())
    print("written out - BatchNorm1d on the concatenation (y, dx, dgamma, dbeta):", hand_error)
    assert hand_error < 1e-12
    """),
    md(r"""
    The library's `normcore.distributed.SyncBatchNorm` does the same, one layer per worker, and
    keeps the running statistics with the unbiased factor from the *global* count $N/(N-1)$
    (the per-worker $n_k/(n_k-1)$ would be the factor 2 for shards of 2). `verbose=True`
    prints each message as it passes:
    """),
    code(r"""
    group = ncd.InProcessGroup(4, verbose=True)
    layers = [ncd.SyncBatchNorm(C, eps=eps, process_group=w) for w in group.workers]
    for layer in layers:
        layer.gamma.data[...], layer.beta.data[...] = gamma, beta

    def step(worker, x, dy):
        layer = layers[worker.rank]
        return layer(x), layer.backward(dy)

    out = group.run(step, shards, dys)
    sync_error = max(np.abs(np.vstack([o[0] for o in out]) - y_all).max(),
                     np.abs(np.vstack([o[1] for o in out]) - dx_all).max(),
                     np.abs(sum(l.gamma.grad for l in layers) - reference.gamma.grad).max(),
                     np.abs(layers[0].running_var - reference.running_var).max(),
                     np.abs(layers[0].running_mean - reference.running_mean).max())
    print("\nSyncBatchNorm - BatchNorm1d on the concatenation (y, dx, summed dgamma, running stats):", sync_error)
    assert sync_error < 1e-12
    """),
    md(r"""
    Each layer's `gamma.grad` holds its worker's share; data-parallel training all-reduces the
    parameters' gradients anyway, which sums the shares. On real processes the same layer
    takes `ncd.TorchGroup()`, an all-reduce through `torch.distributed` with the gloo backend
    on CPU (start the processes with `torch.multiprocessing.spawn` or `torchrun`, and call
    `torch.distributed.init_process_group("gloo", ...)` in each). PyTorch's own
    `nn.SyncBatchNorm` takes another route, below.

    ### Averaging the workers' variances is wrong

    A shortcut: each worker computes its own mean $\mu_k$ and variance $\sigma_k^2$, and the
    workers average them. The means average correctly (weighted by $n_k$,
    $\mu = \frac{1}{N}\sum_k n_k\,\mu_k$), the variances do not. Split each value's deviation
    from the overall mean at its worker's mean, $x - \mu = (x - \mu_k) + (\mu_k - \mu)$, and
    square. Summed over worker $k$'s values the cross term $2(\mu_k - \mu)\sum (x - \mu_k)$ is
    zero (deviations from a mean sum to zero), which leaves
    $\sum (x - \mu)^2 = n_k\,\sigma_k^2 + n_k\,(\mu_k - \mu)^2$. Summed over the workers and
    divided by $N$, the variance of the whole batch is the variance *within* the shards plus the
    spread of the shard means *between* them, around the overall mean:

    $$\sigma^2 = \underbrace{\frac{1}{N}\sum_k n_k\,\sigma_k^2}_{\text{within}}
      + \underbrace{\frac{1}{N}\sum_k n_k\,(\mu_k - \mu)^2}_{\text{between}} .$$

    The shortcut keeps the first term and loses the second. For the two workers of the class:
    """),
    code(r"""
    halves = [scores[:2], scores[2:]]
    within = np.mean([h.var(axis=0) for h in halves], axis=0)             # equal shards: a plain average
    between = np.mean([(h.mean(axis=0) - scores.mean(axis=0)) ** 2 for h in halves], axis=0)
    print("subject:                  ", subjects)
    print("variance of the class:    ", scores.var(axis=0))
    print("average of the 2 workers':", within)
    print("spread of the shard means:", between)
    split_error = np.abs(within + between - scores.var(axis=0)).max()
    print("within + between - variance of the class:", split_error)
    assert split_error < 1e-12 and between[1] > 50
    """),
    md(r"""
    Physics loses 56 of its 281 and literature 100 of its 325: the two workers' physics means
    are 65 and 80, their literature means 55 and 75, and the shortcut never sees it. The
    two-round forward above cannot make this mistake: round 2 sums the squared deviations from
    the *global* mean. The formula is the other way to get it right: from each worker it needs
    only $(n_k, \mu_k, \sigma_k^2)$.

    ### Why two rounds, not one

    Because the default protocol only sums. A sum in one round would be
    $[n_k, \sum x_k, \sum x_k^2]$, giving $\sigma^2 = \overline{x^2} - \mu^2$, which subtracts
    two large, nearly equal numbers. With a mean of $10^4$ and a spread of 1,
    $\overline{x^2} \approx 10^8$ and float64's 16 digits leave about 8 for the variance; at a
    mean of $10^8$ none are left (the variance can even come out negative). Summing
    $[n_k, n_k\mu_k, n_k\sigma_k^2, n_k\mu_k^2]$ does no better: the between term becomes
    $\frac{1}{N}\sum_k n_k\mu_k^2 - \mu^2$, the same cancelling difference. The formula keeps
    its digits only when each worker can square $\mu_k - \mu$ itself, so each worker needs every
    worker's $(n_k, \mu_k, \sigma_k^2)$, not their sum: an **all_gather**, the collective in
    which every worker sends a vector and every worker receives all of them, in rank order. (A
    sum can carry one too: each worker writes its vector into its own slot of $K$ slots of zeros,
    and the all-reduce's sum holds every vector, at $K$ times the message size.) One round then
    suffices, and nothing large cancels: each worker centres its own shard before squaring.
    Four workers, 250 values each, the three ways:
    """),
    code(r"""
    rng = np.random.default_rng(3)
    digits = {}
    for centre in (1e4, 1e8):
        workers = [centre + rng.standard_normal(250) for _ in range(4)]
        N = sum(len(w) for w in workers)
        mean = sum(w.sum() for w in workers) / N                                   # round 1
        one_round = sum((w ** 2).sum() for w in workers) / N - mean ** 2
        two_rounds = sum(((w - mean) ** 2).sum() for w in workers) / N             # round 2
        gathered = [(len(w), w.mean(), w.var()) for w in workers]                 # one all_gather
        within_between = sum(n * (v + (m - mean) ** 2) for n, m, v in gathered) / N
        exact = np.concatenate(workers).astype(np.longdouble)
        exact = float(((exact - exact.mean()) ** 2).mean())
        ways = {"one round of sums": one_round, "two rounds of sums": two_rounds,
                "gathered, within + between": within_between}
        digits[centre] = {name: -np.log10(abs(v / exact - 1) + 1e-17) for name, v in ways.items()}
        print(f"mean {centre:.0e}: variance {exact:.12f}")
        for name, v in ways.items():
            print(f"   {name:<27} {v:18.12f}   {digits[centre][name]:4.1f} correct digits")
    assert digits[1e4]["one round of sums"] < 10 < digits[1e4]["two rounds of sums"]
    assert digits[1e8]["one round of sums"] < 2
    assert digits[1e4]["gathered, within + between"] > 13 and 9 < digits[1e8]["gathered, within + between"] < 12
    """),
    md(r"""
    The gathered statistics keep 13 or more digits at a mean of $10^4$ and 9 at $10^8$, where two
    rounds of sums keep 15: at $10^8$ float64's spacing is $2^{-26} \approx 1.5\times10^{-8}$,
    each worker's mean is rounded to it, and that error enters the between term once,
    multiplied by $\mu_k - \mu$. (The global mean's own rounding cancels: the squared
    deviations are smallest at the exact mean.) Far better than the one round of sums, not
    quite the two rounds.
    """),
    md(r"""
    ### PyTorch's protocol: one all_gather forward, one all-reduce backward

    PyTorch's `nn.SyncBatchNorm` does this (its forward and backward are in
    `torch/nn/modules/_functions.py`). Each worker sends
    $[\mu_k,\ 1/\sqrt{\sigma_k^2 + \epsilon},\ n_k]$, $2C + 1$ numbers (the inverse standard
    deviation is what its kernels compute), in one all_gather; every worker takes
    $\sigma_k^2 = 1/\text{invstd}_k^2 - \epsilon$ back, leaves out the workers with $n_k = 0$,
    and merges with the formula above. The source gives its reason for the gather: the counts
    can differ between ranks, so a plain all-reduce cannot give the right result. The backward
    is one all-reduce, as in normcore's, of $[\sum dy_k,\ \sum dy_k\,(x_k - \mu)]$: the same
    sums as $[\sum dy_k,\ \sum dy_k\,\hat{x}_k]$ up to the factor $r$ per channel.

    | | what each worker sends | what every worker then has |
    |---|---|---|
    | forward | $[\mu_k,\ 1/\sqrt{\sigma_k^2+\epsilon},\ n_k]$ ($2C + 1$ numbers), all_gather | all $K$ vectors, $N$, $\mu$, $\sigma^2$ (within + between), $\hat{x}_k$, $y_k$ |
    | backward | $[\sum dy_k,\ \sum dy_k\,\hat{x}_k]$ ($2C$ numbers), all-reduce | $\bar{\beta}$, $\bar{\gamma}$ of the whole batch, then $\bar{x}_k$ |

    Written out on the same four workers and shards:
    """),
    code(r"""
    def torch_protocol(worker, x, dy):
        mean_k, var_k = (x.mean(axis=0), x.var(axis=0)) if len(x) else (np.zeros(C), np.zeros(C))
        rows = worker.all_gather(np.concatenate([mean_k, 1 / np.sqrt(var_k + eps), [len(x)]]),
                                 "forward: [mean_k, invstd_k, n_k]")                # (K, 2C + 1)
        rows = rows[rows[:, -1] > 0]                                           # the workers with rows
        means, var_ks, n = rows[:, :C], 1 / rows[:, C:2 * C] ** 2 - eps, rows[:, 2 * C:]
        N = n.sum()
        mean = (n * means).sum(axis=0) / N                                     # (C,)
        var = (n * (var_ks + (means - mean) ** 2)).sum(axis=0) / N             # within + between
        r = 1 / np.sqrt(var + eps)
        x_hat = (x - mean) * r                                                 # (n_k, C)
        y = gamma * x_hat + beta
        got = worker.all_reduce(np.concatenate([dy.sum(axis=0), (dy * x_hat).sum(axis=0)]),
                                "backward: [sum dy_k, sum dy_k x_hat_k]")
        dbeta, dgamma = got[:C], got[C:]                                       # over the whole batch
        dx = gamma * r * (dy - dbeta / N - x_hat * dgamma / N)
        return y, dx, dgamma, dbeta

    log = []
    results = ncd.InProcessGroup(4, log=log).run(torch_protocol, shards, dys)
    for message in log:
        print(message)
    gather_error = max(np.abs(np.vstack([r[0] for r in results]) - y_all).max(),
                       np.abs(np.vstack([r[1] for r in results]) - dx_all).max(),
                       np.abs(results[0][2] - reference.gamma.grad).max(), np.abs(results[0][3] - reference.beta.grad).max())
    print("\ngather written out - BatchNorm1d on the concatenation (y, dx, dgamma, dbeta):", gather_error)
    assert gather_error < 1e-12
    """),
    md(r"""
    The library's layer takes it as an option, `protocol="gather"`. Both protocols, on the same
    shards, against each other and against `BatchNorm1d` on the whole batch, with every message
    counted:
    """),
    code(r"""
    outputs, counted = {}, {}
    for protocol in ("allreduce", "gather"):
        log = []
        group = ncd.InProcessGroup(4, log=log)
        layers = [ncd.SyncBatchNorm(C, eps=eps, process_group=w, protocol=protocol) for w in group.workers]
        for layer in layers:
            layer.gamma.data[...], layer.beta.data[...] = gamma, beta
        out = group.run(lambda w, x, dy: (layers[w.rank](x), layers[w.rank].backward(dy)), shards, dys)
        outputs[protocol] = [np.vstack([o[0] for o in out]), np.vstack([o[1] for o in out]),
                             sum(l.gamma.grad for l in layers), layers[0].running_var]
        counted[protocol] = [(m.op, m.sent[0].size, m.received.size) for m in log]
        print(f"{protocol:>9}: (collective, values each worker sends, values it receives)")
        print("           ", counted[protocol])
    expected = [y_all, dx_all, reference.gamma.grad, reference.running_var]
    protocol_gap = max(np.abs(a - b).max() for a, b in zip(outputs["gather"], outputs["allreduce"]))
    batchnorm_gap = max(np.abs(a - b).max() for a, b in zip(outputs["gather"], expected))
    print(f"gather - allreduce: {protocol_gap:.1e};  gather - BatchNorm1d: {batchnorm_gap:.1e}")
    assert protocol_gap < 1e-12 and batchnorm_gap < 1e-12
    assert [c[0] for c in counted["allreduce"]] == ["all_reduce"] * 4     # the agreement first
    assert [c[0] for c in counted["gather"]] == ["all_reduce", "all_gather", "all_reduce"]
    """),
    md(r"""
    The first message of each training step, in both protocols, carries no data: it is the
    **agreement**. Every collective needs every worker to send as many values, and a worker
    whose layer has another number of channels, or whose shard has the wrong width or dtype,
    would send a message of another length, or refuse its shard and leave the others waiting.
    So before any data moves each worker writes what it is about to exchange,
    $[C, \text{protocol}, \text{dtype}, \text{ndim}, \text{shape}]$ (9 numbers), into its own
    slot of $K$ slots of zeros, and one all-reduce hands every worker all $K$ rows (the
    slot trick above). Every worker checks the same rows, so when they do not fit together
    every worker raises the same ValueError, naming each worker's layer and input, and no data
    has been sent. The written-out versions above leave it out.

    ### What each costs

    | protocol | collectives per training step | values each worker sends | values each worker receives |
    |---|---|---|---|
    | normcore's default, `"allreduce"` | 4 all-reduces: the agreement, 2 forward, 1 backward | $9K + (1 + C) + C + 2C = 9K + 4C + 1$ | $9K + 4C + 1$ |
    | PyTorch's, `"gather"` | 3: the agreement (an all-reduce), 1 all_gather forward, 1 all-reduce backward | $9K + (2C + 1) + 2C = 9K + 4C + 1$ | $9K + K(2C + 1) + 2C$ |

    Counted above, $C = 3$ and $K = 4$: each worker sends 49 values either way (36 of them the
    agreement) and receives 49 with the default, 70 with the gather. Evaluation sends nothing
    with either. These are the messages' sizes, not the bytes on the wire, which depend on how
    the backend implements each collective. On a network every collective waits for the slowest
    worker and pays at least one latency, so the gather saves one of the four; its data message
    grows with the number of workers, and so does the agreement in both.
    Which is faster depends on $K$, $C$ and the network, and this notebook does not measure it:
    its workers are threads, with no network between them.

    On real processes the same layer takes `ncd.TorchGroup()` with either protocol; the tests
    run both over two gloo processes and compare them with `torch.nn.BatchNorm1d` on the whole
    batch (equal to 1e-12). `torch.nn.SyncBatchNorm` itself does not run there: in torch 2.13 it
    synchronises CUDA, XPU, HPU and PrivateUse1 tensors only, and in training across processes a
    CPU tensor raises a ValueError (its kernels, such as `torch.batch_norm_stats`, have no CPU
    implementation either).
    """),
    question(r"""
    A SyncBatchNorm's backward skips its all-reduce: each worker uses its own shard's
    $\sum dy_k$ and $\sum dy_k\,\hat{x}_k$ (divided by its $n_k$). What is wrong with $\bar{x}_k$,
    and why?
    """, r"""
    Every worker's $x_k$ moved the shared mean and variance, so every $\hat{x}$ of the batch
    depends on it, and the gradient through $\mu$ and $\sigma^2$ must collect $dy$ from the
    whole batch: the two means in $\bar{x}_k$ are means over all $N$ values. With local sums
    each worker keeps only its own shard's share of those routes, and $\bar{x}$ is wrong (a
    relative error of 0.3 here; only the direct route, $\gamma\,r\,dy_k$, is right). Measured below on the
    shards above.
    """),
    code(r"""
    mean_all, r_all = np.vstack(shards).mean(axis=0), 1 / np.sqrt(np.vstack(shards).var(axis=0) + eps)

    def local_backward(x, dy):                        # the forward's global statistics, local sums
        x_hat = (x - mean_all) * r_all
        return gamma * r_all * (dy - dy.mean(axis=0) - x_hat * (dy * x_hat).mean(axis=0))

    no_allreduce = np.vstack([local_backward(x, dy) for x, dy in zip(shards[:3], dys[:3])])   # worker 3 has none
    skipped_error = nc.rel_error(no_allreduce, dx_all)
    print(f"backward without its all-reduce: relative error of dx {skipped_error:.2f}")
    assert skipped_error > 0.1
    """),
    md(r"""
    **Measured in training** (experiment `sync_batchnorm`): 8 simulated workers with 2 samples
    each. Per-worker BatchNorm stays near 34% held-out accuracy, with a large gap between its
    training-mode and evaluation-mode outputs; SyncBatchNorm trains exactly like one worker with a
    batch of 16 (their logits agree to rounding), reaching 75%. A toy MLP in the small-shard
    regime: with larger shards the local statistics may be good enough, which this figure does
    not measure.

    ![Held-out accuracy of per-worker BatchNorm, SyncBatchNorm and one worker with a batch of 16](../figures/sync_batchnorm.png)
    """),

    # --- 4. scale invariance -----------------------------------------------------------------
    md(r"""
    ## 4. Scale invariance and weight decay

    ### A weight before BatchNorm

    BatchNorm divides each channel by its standard deviation over the batch, so multiplying the
    weight $W$ of the Linear before it by $c > 0$ changes nothing after the BatchNorm (up to
    $\epsilon$): $L(cW) = L(W)$. Differentiating both sides gives two facts about the gradient
    $g = \partial L / \partial W$:

    * in $c$ at $c = 1$: $\langle W, g \rangle = 0$, the gradient is **orthogonal to $W$**;
    * in $W$: $c\, g(cW) = g(W)$, the gradient **scales as $1/c$**.

    Checked on a Linear $\to$ BatchNorm $\to$ ReLU $\to$ Linear classifier:
    """),
    code(r"""
    rng = np.random.default_rng(4)
    teacher = rng.standard_normal((20, 10))
    x_train = rng.standard_normal((2048, 20))
    y_train = np.argmax(x_train @ teacher, axis=1)                         # a linear teacher's labels

    def classifier():
        return nc.Sequential(nc.Linear(20, 16, bias=False, rng=0), nc.BatchNorm1d(16), nc.ReLU(),
                             nc.Linear(16, 10, rng=1))

    ce = nc.CrossEntropyLoss()

    def loss_and_grad(net, x, y):
        net.zero_grad()
        loss = ce(net(x), y)
        net.backward(ce.backward())
        return loss, net[0].weight.grad.copy()

    net = classifier()
    W = net[0].weight.data.copy()
    loss_1, grad_1 = loss_and_grad(net, x_train[:64], y_train[:64])
    print(f"cos(W, dL/dW) = {np.sum(W * grad_1) / np.linalg.norm(W) / np.linalg.norm(grad_1):.1e}")
    invariance = {}
    for c in (0.5, 2.0, 10.0):
        net[0].weight.data[...] = c * W
        loss_c, grad_c = loss_and_grad(net, x_train[:64], y_train[:64])
        invariance[c] = (abs(loss_c / loss_1 - 1), c * np.linalg.norm(grad_c) / np.linalg.norm(grad_1))
        print(f"W scaled by {c:>4}: relative change of the loss {invariance[c][0]:.1e}, "
              f"c * ||grad(cW)|| / ||grad(W)|| = {invariance[c][1]:.6f}")
    net[0].weight.data[...] = W
    assert all(change < 1e-4 and abs(ratio - 1) < 1e-4 for change, ratio in invariance.values())
    """),
    md(r"""
    ### So SGD grows $\|W\|$, and the effective learning rate falls

    A plain SGD step $W - \eta\,g$ with $g \perp W$ gives, by Pythagoras,
    $\|W'\|^2 = \|W\|^2 + \eta^2 \|g\|^2$: the norm can only grow. The function depends only on
    the direction $W / \|W\|$, and a step of $\eta\,g$ turns that direction by about
    $\eta \|g\| / \|W\|$, with $\|g\| \propto 1/\|W\|$: the **effective learning rate** is
    $\eta / \|W\|^2$, and it falls as the norm grows. Weight decay, $(1 - \eta\lambda)\,W$ per step,
    pulls the norm back; the two balance where $\eta^2\|g\|^2 \approx 2\eta\lambda\,\|W\|^2$,
    that is at a relative step $\eta\|g\|/\|W\| \approx \sqrt{2\eta\lambda}$.

    Six hundred SGD steps at $\eta = 0.1$ with batches of 64, without decay and with decay 0.05 on
    the weight matrices only. `nc.optim.param_groups_no_decay` makes the two parameter groups,
    as `torch.optim` takes them:
    """),
    code(r"""
    net = classifier()
    for group in nc.optim.param_groups_no_decay(net, 0.05):
        in_group = [name for name, p in net.named_parameters() if any(p is q for q in group["params"])]
        print(f"weight_decay {group['weight_decay']}:", in_group)

    def train(weight_decay, steps=600, lr=0.1):
        net = classifier()
        opt = nc.SGD(nc.optim.param_groups_no_decay(net, weight_decay), lr=lr)
        batches = np.random.default_rng(5)
        norms, growth, steps_rel = [np.linalg.norm(net[0].weight.data)], [], []
        for _ in range(steps):
            i = batches.integers(0, len(x_train), 64)
            _, g = loss_and_grad(net, x_train[i], y_train[i])
            before = net[0].weight.data.copy()
            opt.step()
            growth.append((np.linalg.norm(net[0].weight.data) ** 2 - np.linalg.norm(before) ** 2,
                           lr ** 2 * np.sum(g ** 2)))
            steps_rel.append(np.linalg.norm(net[0].weight.data - before) / np.linalg.norm(before))
            norms.append(np.linalg.norm(net[0].weight.data))
        return np.array(norms), np.array(growth), np.array(steps_rel)

    runs = {wd: train(wd) for wd in (0.0, 0.05)}
    norms_plain, growth_plain, _ = runs[0.0]
    growth_error = np.median(np.abs(growth_plain[:, 0] / growth_plain[:, 1] - 1))
    print(f"\nno decay: ||W|| grows at every step: {bool(np.all(np.diff(norms_plain) > 0))}; "
          f"growth = lr^2 ||g||^2 to a median relative error {growth_error:.1e}")
    for wd, (norms, _, rel) in runs.items():
        print(f"decay {wd:<4}: ||W|| at steps 0, 200, 400, 600: {np.round(norms[[0, 200, 400, 600]], 2)}; "
              f"lr/||W||^2 {0.1 / norms[0] ** 2:.4f} -> {0.1 / norms[-1] ** 2:.4f}; "
              f"relative step over the last 100: {rel[-100:].mean():.3f}")
    print("sqrt(2 lr wd) =", np.sqrt(2 * 0.1 * 0.05))
    """),
    md(r"""
    Without decay the norm creeps up at every step, by $\eta^2\|g\|^2$ up to a relative
    $10^{-4}$ ($\epsilon$ leaves $W$ and $g$ not quite orthogonal: their cosine above is
    $2 \times 10^{-6}$), and the effective learning rate falls. With decay it falls towards an equilibrium and the effective
    learning rate rises several-fold; the relative step approaches $\sqrt{2\eta\lambda} = 0.1$.
    Decay on a weight before BatchNorm does not limit what the network can express (the
    function ignores the scale); it keeps the effective learning rate up.

    gamma and beta are left out of the decay, and so are biases: decaying gamma pulls the
    BatchNorm's output scale towards 0, which *is* a change of the function, and decaying a
    bias pulls a shift towards 0. The experiment `weight_decay_bn` measures all of it over 3000
    steps: with decay the norm settles within about 500 steps, lr / ||W||^2 13 times higher,
    relative step 0.0995 against 0.1; decaying gamma too drives mean |gamma| from 1 to 0.09.
    At a constant learning rate decay did not improve the held-out accuracy there (0.724
    against 0.744 without).

    ![Weight norm, effective learning rate, relative step and gamma under SGD and Adam, with and without decay](../figures/weight_decay_bn.png)
    """),
    question(r"""
    Adam divides each coordinate's step by the root of its running mean square gradient. Does
    the effective-learning-rate argument above carry over to Adam without decay?
    """, r"""
    No. Adam's step has roughly the size of the learning rate per coordinate whatever the
    gradient's scale, so it does not shrink as $1/\|W\|$; the steps still mostly turn $W$ and
    grow its norm, and the relative step $\approx \eta\sqrt{d}/\|W\|$ falls as $\|W\|$ grows
    (only as $1/\|W\|$, not $1/\|W\|^2$). The step is also not exactly orthogonal to $W$, so
    Pythagoras no longer holds. In `weight_decay_bn` Adam's $\|W_1\|$ grows from 7.95 to 20.8
    and its relative step falls 6.6-fold; AdamW's decay holds both, but the SGD formula
    $\sqrt{2\eta\lambda}$ does not apply.
    """),

    # --- 5. placement and bias ---------------------------------------------------------------
    md(r"""
    ## 5. Before or after the activation, and the bias before a BatchNorm

    ### The bias right before a BatchNorm

    BatchNorm subtracts the batch mean, so a bias $b$ added just before it cancels: $z + b$ and
    $z$ give the same output, and its gradient $\partial L / \partial b = \sum_i
    \partial L / \partial z_i$ is exactly zero, because BatchNorm's $\bar{x}$ sums to zero over
    the batch in each channel. In float64 "exactly zero" is rounding error, about $10^{-16}$.
    The class's scores through Linear $\to$ BatchNorm $\to$ ReLU $\to$ Linear, with a random
    upstream gradient, and the same with BatchNorm after the ReLU:
    """),
    code(r"""
    rng = np.random.default_rng(6)
    dy = rng.standard_normal((4, 2))
    bias_grad, shifted = {}, {}
    for where, layers in (("before the ReLU", lambda l: [l, nc.BatchNorm1d(3), nc.ReLU()]),
                          ("after the ReLU", lambda l: [l, nc.ReLU(), nc.BatchNorm1d(3)])):
        first = nc.Linear(3, 3, init="torch", rng=7)                  # a random nonzero bias
        net = nc.Sequential(*layers(first), nc.Linear(3, 2, rng=8))
        out = net(scores)
        net.backward(dy)
        bias_grad[where] = (np.linalg.norm(first.bias.grad), np.linalg.norm(first.weight.grad))
        first.bias.data += 5.0                                        # move the bias
        shifted[where] = np.abs(net(scores) - out).max()
        print(f"BatchNorm {where}: ||dL/db|| = {bias_grad[where][0]:.1e}, ||dL/dW|| = {bias_grad[where][1]:.1e}; "
              f"output change when b += 5: {shifted[where]:.1e}")
    assert bias_grad["before the ReLU"][0] < 1e-12 < 1e-3 < bias_grad["after the ReLU"][0]
    assert shifted["before the ReLU"] < 1e-12 < shifted["after the ReLU"]
    """),
    md(r"""
    Before the ReLU the bias does nothing and learns nothing; BatchNorm's $\beta$ is the shift
    that counts. That is why a Linear or convolution followed by a BatchNorm is built with
    `bias=False`. After the ReLU the bias decides which units the ReLU passes, so it matters and
    gets a gradient. The experiment `bn_placement` follows such biases over 2000 SGD steps: the
    one before BatchNorm moves by at most $10^{-16}$.

    ![Gradient norm of biases before and after BatchNorm, and how far they move](../figures/bn_placement_bias.png)

    ### Before or after the activation?

    Ioffe and Szegedy put BatchNorm between the Linear and its nonlinearity; many put it after.
    The same experiment trains both placements of an MLP with 2 and 8 hidden layers, at three
    learning rates, five seeds each. At this scale the placement barely matters: BatchNorm after
    the ReLU reaches a slightly lower training loss (most at lr 0.01, none for 8 layers at the
    larger rates), and the held-out accuracies are within 1.5 points of each other. One small MLP
    on one synthetic task with plain SGD: not a verdict for convolutional networks.

    ![Training loss and accuracy of BatchNorm before and after the ReLU](../figures/bn_placement.png)
    """),

    # --- 6. summary --------------------------------------------------------------------------
    md(r"""
    ## 6. Summary

    * **Folding**: in evaluation BatchNorm is a fixed affine map, so Linear $\to$ BatchNorm is
      one Linear with $W' = \operatorname{diag}(s)\,W$, $b' = s \odot (b - \mu) + \beta$,
      $s = \gamma / \sqrt{\sigma^2 + \epsilon}$, the running statistics. LayerNorm and RMSNorm
      take statistics per sample and are not affine: their division stays at inference. Their
      $\gamma, \beta$ fold into the next Linear ($W\operatorname{diag}(\gamma)$, $W\beta + b$:
      `nc.fold_norm_affine`), and LayerNorm's centring into the weights that write its input.
    * **Recalibration** replaces the running statistics by those of the concatenated batches
      (unbiased, every sample weighing the same), closing the train/eval gap that momentum
      leaves; PyTorch's `momentum=None` averages per batch instead. **Freezing** keeps
      BatchNorm in evaluation mode through `model.train()`, for fine-tuning.
    * **SyncBatchNorm**: before any data moves the workers agree on what they are about to
      exchange (one all-reduce of every worker's channels, protocol, dtype and shape; workers
      that disagree all raise the same error). normcore's default protocol then sends two
      all-reduces in the forward
      ($[n_k, \sum x_k]$, then $\sum (x_k - \mu)^2$) and one in the backward
      ($[\sum dy_k, \sum dy_k \hat{x}_k]$); PyTorch's (`protocol="gather"`) one all_gather of
      each worker's $[\mu_k, 1/\sqrt{\sigma_k^2 + \epsilon}, n_k]$, merged as within + between,
      and the same all-reduce backward. Both give every worker exactly BatchNorm on the whole
      batch. Averaging the workers' variances loses the between term; the one-round sums'
      $\overline{x^2} - \mu^2$ loses digits.
    * **Scale invariance**: a weight before BatchNorm has a gradient orthogonal to it and
      scaling as $1/\|W\|$; SGD grows its norm and lowers the effective learning rate
      $\eta/\|W\|^2$; weight decay on it balances that, and gamma, beta and biases are left out
      of the decay (`param_groups_no_decay`).
    * **Placement**: before or after the activation made little difference here; a bias right
      before a BatchNorm is useless (zero gradient), hence `bias=False`.
    """),

    # --- references: the entries of normcore/bibliography.toml this notebook's source cites ----
    md(notebook_references(__file__)),
]
