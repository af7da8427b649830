"""Source of notebooks/llm_norms.ipynb (build with: python notebooks/build.py llm_norms).

It is one piece: it holds nothing but the notebook's cells in order, each helper defined in the
code cell that shows it, so the file reads as the notebook does.
"""

from build import code, md, question
from normcore.bibliography import notebook_references

CELLS = [
    md(r"""
    # Norms in today's LLMs: the reordered norm, QK-norm's scope, depth, z-loss, soft-capping

    The [Pre-Norm vs Post-Norm](pre_post_norm.ipynb) and [modern_norms](modern_norms.ipynb)
    notebooks place the norm before or around a Transformer block's branches. The models a 2026
    course discusses have moved on; this notebook takes five of their choices, each with its
    forward, its backward and a measurement made in the cell:

    1. **OLMo 2's reordered norm**, $x + \operatorname{Norm}(F(x))$: the norm on the branch's
       output only
    2. **QK-norm per head or over the whole projection**: what each bounds
    3. **The curse of depth**: Pre-LN's growing stream, LayerNorm Scaling ($1/\sqrt{l}$) and
       Mix-LN (Post-LN first, Pre-LN after), measured at initialisation
    4. **z-loss and soft-capping**: two ways of keeping logits in range, and their backward
    5. the figures: what the experiments measure after training, at this scale
    6. a summary

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import numpy as np
    import normcore as nc

    np.set_printoptions(precision=4, suppress=True)
    """),

    # --- 1. reordered ------------------------------------------------------------------------
    md(r"""
    ## 1. OLMo 2's reordered norm: $x + \operatorname{Norm}(F(x))$

    ### Five places for the norm

    | position | forward of one sub-layer $F$ | backward |
    |---|---|---|
    | Post-LN | $y = \operatorname{Norm}(x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \bar{x} = \bar{z} + F'(\bar{z})$ |
    | Pre-LN | $y = x + F(\operatorname{Norm}(x))$ | $\bar{x} = \bar{y} + \operatorname{Norm}'(F'(\bar{y}))$ |
    | Peri-LN | $y = x + \operatorname{Norm}_\text{out}(F(\operatorname{Norm}(x)))$ | $\bar{x} = \bar{y} + \operatorname{Norm}'(F'(\operatorname{Norm}_\text{out}'(\bar{y})))$ |
    | reordered | $y = x + \operatorname{Norm}_\text{out}(F(x))$ | $\bar{x} = \bar{y} + F'(\operatorname{Norm}_\text{out}'(\bar{y}))$ |
    | DeepNorm | $y = \operatorname{Norm}(\alpha x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \bar{x} = \alpha\bar{z} + F'(\bar{z})$ |

    ($G'(g)$ is $G$'s backward applied to $g$.) OLMo 2 (Team OLMo 2024, "2 OLMo 2 Furious")
    keeps only Peri-LN's output norm: $F$ reads the raw stream, and what it adds is normalised.
    The identity path stays untouched, as in Pre-LN. `TransformerBlock(position="reordered")`
    has children `norm1_out` and `norm2_out` and no input norms. The block written out, forward
    and backward, against the layer:
    """),
    code(r"""
    rng = np.random.default_rng(0)
    block = nc.TransformerBlock(8, 2, norm="rmsnorm", position="reordered", rng=0)
    print([name for name, _ in block.named_modules() if name and "." not in name])   # its children
    x = rng.standard_normal((2, 4, 8))
    dy = rng.standard_normal(x.shape)
    y_block, dx_block = block(x), block.backward(dy)

    h = x + block.norm1_out(block.attn(x))                          # attention branch, raw x in
    y_hand = h + block.norm2_out(block.ffn(h))                      # feed-forward branch
    dh = dy + block.ffn.backward(block.norm2_out.backward(dy))
    dx_hand = dh + block.attn.backward(block.norm1_out.backward(dh))
    print("forward, written out - block:", np.abs(y_hand - y_block).max())
    print("backward, written out - block:", np.abs(dx_hand - dx_block).max())
    report = nc.gradcheck(nc.TransformerBlock(4, 2, d_ff=6, norm="rmsnorm", position="reordered", rng=1),
                          rng.standard_normal((2, 3, 4)))
    print(f"gradient check: {len(report.checks)} gradients, worst rel error {max(report.errors.values()):.1e}")
    assert report.passed and np.abs(dx_hand - dx_block).max() < 1e-12
    """),
    md(r"""
    What each branch adds is a token of RMS exactly 1 (RMSNorm, $\gamma = 1$), whatever the
    stream's scale, as in Peri-LN; unlike Peri-LN, $F$ sees the stream's scale. Multiply the
    input by 100: Pre-LN's branch does not notice (its norm comes first), the reordered branch's
    $F$ gets inputs 100 times larger, and only its output is brought back to RMS 1. The slip
    "the reordered norm placed before the branch" gives Pre-LN, a different function:
    """),
    code(r"""
    def token_rms(h):
        return np.sqrt((h ** 2).mean(-1))                                # (B, T)

    pre = nc.TransformerBlock(8, 2, norm="rmsnorm", position="pre", rng=0)
    for scale in (1, 100):
        added_reordered = block.norm1_out(block.attn(scale * x))
        added_pre = pre.attn(pre.norm1(scale * x))
        print(f"x times {scale:<3}: RMS the attention branch adds, reordered {token_rms(added_reordered).mean():.4f}, "
              f"Pre-LN {token_rms(added_pre).mean():.4f};  RMS F's input reads, reordered "
              f"{token_rms(scale * x).mean():.1f}, Pre-LN {token_rms(pre.norm1(scale * x)).mean():.2f}")
    """),

    # --- 2. QK-norm's scope ------------------------------------------------------------------
    md(r"""
    ## 2. QK-norm per head or over the whole projection

    QK-norm normalises the queries and keys before their dot product. Two published variants
    differ in the channels they normalise over: Gemma 3 and Qwen3 normalise each head's $D$
    channels (`qk_norm_scope="head"`, normcore's default); OLMo 2 normalises the whole
    projection, all $E = HD$ channels, before the split into heads
    (`qk_norm_scope="projection"`). With RMSNorm and gains $\gamma = 1$:

    * per head, each head's $\hat{q}$ has norm $\sqrt{D}$, so by Cauchy-Schwarz every logit
      $\hat{q} \cdot \hat{k} / \sqrt{D}$ is at most $\sqrt{D}$;
    * over the projection, the whole query has norm $\sqrt{E}$, shared by the heads: one head's
      part may hold all of it, so one logit is at most $E/\sqrt{D} = H\sqrt{D}$, $H$ times more.

    The projection's bound is reached only when a query's whole norm sits in one head. Built on
    purpose below: $W_q$ and $W_k$ write into head 0 only. The logits are computed from the
    attention's own children (`q`, `k`, `q_norm`, `k_norm`), with the gains at 1:
    """),
    code(r"""
    E, H = 8, 4
    D = E // H

    def normalised_qk(scope, x, heads_written=None):
        # q and k as the attention uses them, split into heads: (B, H, T, D) each
        attn = nc.MultiheadSelfAttention(E, H, qk_norm="rmsnorm", qk_norm_scope=scope, rng=3)
        if heads_written is not None:                                   # W_q, W_k write into these heads only
            rows = np.zeros((E, 1))
            for head in heads_written:
                rows[head * D:(head + 1) * D] = 1
            attn.q.weight.data *= rows
            attn.k.weight.data *= rows
        q, k = attn.q(x), attn.k(x)                                     # (B, T, E)
        if scope == "projection":
            q, k = attn.q_norm(q), attn.k_norm(k)                       # over all E channels
        q, k = (t.reshape(*t.shape[:2], H, D).transpose(0, 2, 1, 3) for t in (q, k))   # (B, H, T, D)
        if scope == "head":
            q, k = attn.q_norm(q), attn.k_norm(k)                       # over each head's D channels
        return q, k

    def logits(q, k):
        return q @ k.transpose(0, 1, 3, 2) / np.sqrt(D)                 # (B, H, T, T)

    x = rng.standard_normal((4, 6, E)) * 3
    print(f"bounds: per head sqrt(D) = {np.sqrt(D):.3f}, over the projection H sqrt(D) = {H * np.sqrt(D):.3f}")
    for scope in ("head", "projection"):
        random_input = np.abs(logits(*normalised_qk(scope, x))).max()
        one_head = np.abs(logits(*normalised_qk(scope, x, heads_written=[0]))).max()
        print(f"{scope:<10}: largest |logit| on random input {random_input:.3f}, "
              f"with W_q, W_k writing into head 0 only {one_head:.3f}")
    """),
    question(r"""
    On random input, with no weight built on purpose, the projection's largest logit is already
    above the per-head bound $\sqrt{D}$. How can it be, and what bounds it?
    """, r"""
    The projection's norm fixes only the sum over the heads, $\sum_h \|\hat{q}_h\|^2 = E$ (with
    $\gamma = 1$). A token whose projection happens to load one head more than the others gives
    that head a share $s_q > 1/H$ of the total, and by Cauchy-Schwarz that head's logit with a
    key of share $s_k$ is at most $\sqrt{s_q s_k}\,E/\sqrt{D}$. Per head, every share is
    $1/H$ by construction, hence $\sqrt{D}$. Measured below at the largest logit: the two
    shares, and the bound they give, which the logit stays under.
    """),
    code(r"""
    q, k = normalised_qk("projection", x)
    S = logits(q, k)
    b, head, i, j = np.unravel_index(np.abs(S).argmax(), S.shape)
    share_q = np.sum(q[b, head, i] ** 2) / np.sum(q[b, :, i] ** 2)
    share_k = np.sum(k[b, head, j] ** 2) / np.sum(k[b, :, j] ** 2)
    print(f"largest |logit| {abs(S[b, head, i, j]):.3f} in head {head}: shares of the query {share_q:.2f} "
          f"and of the key {share_k:.2f} (1/H = {1 / H}); bound sqrt(s_q s_k) E / sqrt(D) = "
          f"{np.sqrt(share_q * share_k) * E / np.sqrt(D):.3f}")
    """),

    # --- 3. depth ----------------------------------------------------------------------------
    md(r"""
    ## 3. The curse of depth: LayerNorm Scaling and Mix-LN

    Sun et al. 2025 ("The Curse of Depth in Large Language Models") argue that in Pre-LN the
    output variance grows with depth (exponentially, their abstract says), so a deep block's
    derivative approaches the identity and it contributes little; their **LayerNorm Scaling**
    multiplies each block's norm output by $1/\sqrt{l}$, $l$ the block's 1-based depth:

    $$y = x + F\!\left(\tfrac{1}{\sqrt{l}}\operatorname{Norm}(x)\right), \qquad
      \bar{x} = \bar{y} + \operatorname{Norm}'\!\left(\tfrac{1}{\sqrt{l}}\,F'(\bar{y})\right).$$

    Li et al. 2024 (Mix-LN) report that Pre-LN's deeper layers get smaller gradient norms, while
    Post-LN keeps them larger in deep layers but vanishes in early ones; **Mix-LN** uses
    Post-LN in the first blocks and Pre-LN in the rest (`TinyTransformer(position="mix")`, a
    quarter of the blocks Post-LN by default). Both papers are about trained models. What can be
    measured here in a second is the untrained model: a 16-block model at normcore's
    initialisation, one batch, the RMS of the residual stream after each block and the gradient
    norm of each block's weights.
    """),
    code(r"""
    tokens = rng.integers(0, 32, size=(8, 16))
    targets = rng.integers(0, 32, size=(8, 16))
    ce = nc.CrossEntropyLoss()

    def per_block(**options):
        model = nc.TinyTransformer(32, 16, 16, 2, 16, embedding_std=0.02, rng=0, **options)
        stream, h = [], model.pos_emb(model.tok_emb(tokens))
        for blk in model.blocks:
            h = blk(h)
            stream.append(np.sqrt((h ** 2).mean()))
        model.zero_grad()
        logits = model(tokens)
        ce(logits.reshape(-1, 32), targets.reshape(-1))
        model.backward(ce.backward().reshape(logits.shape))
        grads = [np.sqrt(sum(np.sum(p.grad ** 2) for p in blk.parameters())) for blk in model.blocks]
        return np.array(stream), np.array(grads)

    variants = {"Pre-LN": dict(position="pre"), "LayerNorm Scaling": dict(position="pre", norm_scale="depth"),
                "Post-LN": dict(position="post"), "Mix-LN": dict(position="mix")}
    depth = {name: per_block(**options) for name, options in variants.items()}
    print(f"{'':<18} {'stream RMS after blocks 1, 4, 8, 16':<38} {'gradient norm of blocks 1, 4, 8, 16'}")
    for name, (stream, grads) in depth.items():
        print(f"{name:<18} {str(stream[[0, 3, 7, 15]].round(3)):<38} {grads[[0, 3, 7, 15]]}")
    (pre_stream, pre_grads), (lns_stream, _), (post_stream, post_grads) = (depth[n] for n in list(variants)[:3])
    assert np.all(np.diff(pre_stream) > 0) and lns_stream[-1] < pre_stream[-1] / 2
    assert pre_grads[0] > pre_grads[1:].max() and post_grads.argmax() == 0
    """),
    md(r"""
    Read it at initialisation only. Pre-LN's stream grows block after block (each branch adds to
    it and nothing normalises it), and LayerNorm Scaling slows that growth, since a deep branch
    reads a norm output shrunk by $1/\sqrt{l}$. Post-LN normalises the stream after every block,
    so its RMS stays at the norm's; Mix-LN's stream follows Post-LN's for its first quarter,
    then grows as Pre-LN's does. In the gradient norms, Pre-LN's deeper blocks get less than its
    first, the direction Mix-LN's authors report for Pre-LN; but this untrained Post-LN does not
    show small gradients in its early blocks: its first block gets the most. The papers' claims
    are about training (how the variance and the gradients evolve, and whether deep blocks end up
    contributing), which this cell does not test.
    """),
    question(r"""
    LayerNorm Scaling divides the norm output of block 16 by 4. Does the branch's output, what
    block 16 adds to the stream, become 4 times smaller?
    """, r"""
    Not exactly: the branch is not linear in its input. The projections' biases do not shrink
    with the input; the part of each attention logit that comes from the input is a product of
    two projections of it and shrinks by $4^2 = 16$, which flattens the attention; and GELU near 0
    is $u/2$ plus a term in $u^2$, which shrinks by 16 too. What the scaling fixes is the factor
    on the norm's output, not on what the branch adds. Measured below on block 16 of the Pre-LN
    model: its input norm's output fed to each sub-layer as it is and divided by 4.
    """),
    code(r"""
    model = nc.TinyTransformer(32, 16, 16, 2, 16, embedding_std=0.02, rng=0)
    h = model.pos_emb(model.tok_emb(tokens))
    for blk in model.blocks[:15]:
        h = blk(h)
    last = model.blocks[15]
    n = last.norm1(h)
    for name, f in (("attention", last.attn), ("feed-forward", last.ffn)):
        ratio = np.sqrt((f(n) ** 2).mean()) / np.sqrt((f(n / 4) ** 2).mean())
        print(f"{name:<12}: RMS of F(norm) / RMS of F(norm / 4) = {ratio:.2f}")
    """),

    # --- 4. z-loss and soft-capping ----------------------------------------------------------
    md(r"""
    ## 4. Logits in range: z-loss and soft-capping

    ### z-loss

    Cross-entropy does not change when every logit of a position moves by the same constant:
    $\log\operatorname{softmax}$ subtracts $\log Z = \operatorname{logsumexp}(\text{logits})$.
    So nothing in the loss holds the logits' common level, and it can drift. PaLM (Chowdhery et
    al. 2022) adds $10^{-4}\,(\log Z)^2$ to the loss, pulling $\log Z$ towards 0, and Wortsman et
    al. 2023 use it against the output logits' drift. `nc.CrossEntropyLoss(z_loss=1e-4)` adds
    $z \cdot \operatorname{mean}_n(\log Z_n)^2$. Since $\partial \log Z / \partial \text{logits} =
    \operatorname{softmax}$, its gradient per position is

    $$\frac{\partial}{\partial\,\text{logits}_n}\, \frac{z}{N}(\log Z_n)^2 = \frac{2z}{N}\,\log Z_n\,\operatorname{softmax}(\text{logits}_n),$$

    the softmax factor included (the slip candidates make is to leave it out, a gradient spread
    evenly over the classes). The cross-entropy part's gradient sums to zero over the classes of
    each position; the z-loss part sums to $2z\log Z_n / N$: it is the only part that moves the
    logits' common level.
    """),
    code(r"""
    logits = rng.normal(3.0, 2.0, size=(4, 10))
    labels = rng.integers(0, 10, size=4)
    z = 1e-4

    def loss_and_grad(loss_fn, logits):
        value = loss_fn(logits, labels)
        return value, loss_fn.backward()

    plain, with_z = nc.CrossEntropyLoss(), nc.CrossEntropyLoss(z_loss=z)
    (l_plain, g_plain), (l_z, g_z) = loss_and_grad(plain, logits), loss_and_grad(with_z, logits)
    lse = np.log(np.exp(logits).sum(1))                                 # log Z per position
    softmax = np.exp(logits - lse[:, None])
    print("loss difference - z mean(log Z ** 2):", l_z - l_plain - z * np.mean(lse ** 2))
    print("gradient difference - 2 z log Z softmax / N:", np.abs(g_z - g_plain - 2 * z * lse[:, None] * softmax / 4).max())
    print("per position, the CE gradient sums to", g_plain.sum(1), " the z-loss part to", (g_z - g_plain).sum(1))
    """),
    question(r"""
    Add 5 to every logit. What happens to the cross-entropy, to its gradient, to the z-loss and
    to the z-loss's gradient?
    """, r"""
    The cross-entropy and its gradient do not change: the softmax is the same. The z-loss grows,
    each $\log Z_n$ being 5 larger, and its gradient $2z\log Z_n\operatorname{softmax}/N$ keeps
    the same softmax but a larger factor $\log Z_n$: a larger push down on every logit of the
    position at once. That is what the z-loss is for: it acts only on the common level the
    cross-entropy ignores. Measured below.
    """),
    code(r"""
    (l_plain5, g_plain5), (l_z5, g_z5) = loss_and_grad(plain, logits + 5), loss_and_grad(with_z, logits + 5)
    print("CE changes by", l_plain5 - l_plain, " its gradient by", np.abs(g_plain5 - g_plain).max())
    print(f"z-loss term: {l_z - l_plain:.6f} -> {l_z5 - l_plain5:.6f};  its gradient summed per position:",
          (g_z - g_plain).sum(1), "->", (g_z5 - g_plain5).sum(1))
    """),
    md(r"""
    ### Soft-capping

    Gemma 2 (its report, arXiv 2408.00118) bounds its attention scores and its final logits smoothly,
    $y = c\tanh(x/c)$, with $c = 50$ for the attention and $c = 30$ for the final logits.
    `nc.SoftCap(c)` is the layer; `attn_softcap=` and `logit_softcap=` apply it in the attention
    and the models. Near 0 it is the identity; no output reaches $c$. With $t = \tanh(x/c)$:

    $$\bar{x} = \bar{y}\,c \cdot \tfrac{1}{c}\,(1 - t^2) = \bar{y}\,\big(1 - (y/c)^2\big).$$

    The outer $c$ and the inner $1/c$ cancel. The two slips: writing the slope as $1 - y^2$ (a
    plain tanh's, negative as soon as $|y| > 1$), and forgetting the cap in the backward
    altogether (slope 1, as if nothing were capped):
    """),
    code(r"""
    cap = nc.SoftCap(30.0)
    x = np.array([[-100.0, -60.0, -30.0, -5.0, 0.0, 0.5, 10.0, 29.0, 45.0, 120.0]])
    y = cap(x)
    dx = cap.backward(np.ones_like(x))
    print("x            ", x[0])
    print("30 tanh(x/30)", y[0].round(3))
    print("slope        ", dx[0].round(4))
    print("1 - y**2     ", (1 - y ** 2)[0].round(1))
    report = nc.gradcheck(nc.SoftCap(3.0), rng.normal(0, 4, size=(3, 5)))
    print("gradient check:", "pass" if report.passed else "FAIL", f"({report.errors['x']:.1e})")
    """),
    md(r"""
    Two things to read. The slope is what makes the cap work as a bound in training too: at
    $x = c$ it is already $1 - \tanh^2 1 = 0.42$, and a logit pushed far past the cap gets almost
    no gradient, so it stops growing. And the written-out $1 - y^2$ is negative for every
    $|y| > 1$, which is nearly every logit here: the gradient would point the wrong way.
    Soft-capping bounds the values themselves; QK-norm (section 2) bounds the logits through
    the gains; the z-loss bounds nothing, it only pulls $\log Z$ towards 0.
    """),

    # --- 5. figures -------------------------------------------------------------------------
    md(r"""
    ## 5. Figures: what the experiments measure after training, at this scale

    From the experiments (`normcore figures NAME`; the README gives each one's setting and what
    it does not show). Small models trained briefly on synthetic tasks: read each verdict as
    "at this scale".

    **The curse of depth** (`curse_of_depth`). Trained on the copy task, an 8-block Pre-LN
    Transformer's stream grows about 4-fold over its depth (steadily, not exponentially), its
    deep blocks' Jacobians come near the identity and removing any of blocks 4-8 raises the loss
    by at most 0.007, as the curse of depth describes; Peri-LN, reordered and Mix-LN's Pre-LN
    blocks behave alike. LayerNorm Scaling brings the deep blocks nearer the identity still, the
    opposite of its aim, at this scale. Post-LN's blocks stay far from the identity, but at 8
    blocks it does not train in this budget. One easy task, which a few blocks solve.

    ![The curse of depth: how much each block of a trained Transformer does, by norm placement](../figures/curse_of_depth.png)

    **Logit control** (`logit_control`). In a 2-block Pre-LN Transformer (Adam, no warmup) every
    variant trains at lr $3 \times 10^{-3}$ and $3 \times 10^{-2}$ and none at 0.3. At 0.1 only
    QK-norm keeps the largest attention logit at 30-50 and trains: per head in both seeds, over
    the whole projection in one. Without it the logits reach $10^3$-$10^4$ and the loss stays at
    chance; the z-loss ($10^{-4}$) changes neither; soft-capping holds what the softmax sees at
    50 while the scores under the cap grow as far, and learns in one seed of two. The final cap
    (30) never binds here.

    ![Logit control: z-loss, soft-capping and QK-norm over a sweep of learning rates](../figures/logit_control.png)
    """),

    # --- 6. summary --------------------------------------------------------------------------
    md(r"""
    ## 6. Summary

    * **Reordered norm** (OLMo 2): $y = x + \operatorname{Norm}(F(x))$, backward
      $\bar{x} = \bar{y} + F'(\operatorname{Norm}'(\bar{y}))$; each branch adds RMS 1 with
      RMSNorm at $\gamma = 1$, and $F$ reads the raw stream.
    * **QK-norm's scope**: per head, each logit is at most $\sqrt{D}\max|\gamma_q|\max|\gamma_k|$;
      over the projection, $H$ times that, reached when one head holds the whole query.
    * **Depth**: LayerNorm Scaling multiplies the norm's output by $1/\sqrt{l}$, which slows
      Pre-LN's stream growth at initialisation; Mix-LN starts with Post-LN blocks. What they do
      after training is the papers' claim, not measured here.
    * **z-loss**: $+\,z\,(\log Z)^2$, gradient $2z\log Z\operatorname{softmax}$: the only force
      on the logits' common level. **Soft-capping**: $c\tanh(x/c)$, slope $1 - (y/c)^2$.
    """),

    md(notebook_references(__file__)),
]
