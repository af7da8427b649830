"""Source of notebooks/pre_post_norm.ipynb (build with: python notebooks/build.py pre_post_norm)."""

from build import code, md, question

CELLS = [
    md(r"""
    # Pre-Norm vs Post-Norm: where the norm sits in a Transformer block

    A Transformer block wraps each sub-layer $F$ (attention, then the feed-forward) in a residual
    connection and a norm. Where the norm goes changes how signals and gradients travel through a
    deep stack:

    * **Post-Norm** (the original Transformer, BERT): $y = \operatorname{Norm}(x + F(x))$
    * **Pre-Norm** (GPT-2 onwards, LLaMA): $y = x + F(\operatorname{Norm}(x))$
    * **DeepNorm**: $y = \operatorname{Norm}(\alpha x + F(x))$, Post-Norm with an up-weighted
      identity path and a down-scaled initialisation of $F$

    In $x + F(x)$, $x$ (carried over unchanged) is the **identity path** and $F(x)$ the
    **residual branch**; the notebook uses the two names in that sense only.

    1. the intuition: the residual stream and its identity path
    2. the formulas, forward and backward
    3. the forward in code: what happens to the residual stream
    4. the backward: the norm on the gradient's path, and the softmax inside attention, node by node
    5. the gradient check of a block in every position
    6. the pitfalls: warmup, the final norm, the "divide by $\sqrt{2}$" argument, DeepNorm's constants
    7. figures: training with and without warmup
    8. the decoder block of an encoder-decoder Transformer, written out in both positions

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    import normcore as nc
    from normcore.derivations import step_through
    from normcore.optim import grad_norm, linear_warmup

    np.set_printoptions(precision=4, suppress=True)
    """),
    md(r"""
    ## 1. Intuition: the identity path

    Think of the residual stream as a running draft: every block reads it and adds a correction.
    In **Pre-Norm** each block reads a normalised *copy* of the draft, and its correction is added
    to the draft itself; nothing ever rescales the draft, so the input reaches the output (and the
    output's gradient reaches the input) along an untouched identity path. In **Post-Norm** the
    draft is renormalised after every correction: the stream stays at unit scale, but everything,
    the identity path included, passes through a norm in every block.

    ## 2. The formulas

    With $G'(g)$ meaning "the backward of $G$ applied to the gradient $g$":

    | position | forward | backward |
    |---|---|---|
    | pre | $y = x + F(\operatorname{Norm}(x))$ | $\bar{x} = \bar{y} + \operatorname{Norm}'(F'(\bar{y}))$ |
    | post | $y = \operatorname{Norm}(x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \ \bar{x} = \bar{z} + F'(\bar{z})$ |
    | deepnorm | $y = \operatorname{Norm}(\alpha x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \ \bar{x} = \alpha\bar{z} + F'(\bar{z})$ |

    DeepNorm, for a decoder-only stack of $N$ blocks, uses $\alpha = (2N)^{1/4}$ and initialises the
    feed-forward and the attention's value and output projections with gain $\beta = (8N)^{-1/4}$.
    `nc.TransformerBlock(d_model, n_heads, position=...)` implements all three (and `"none"`,
    no norm at all).
    """),
    code(r"""
    rng = np.random.default_rng(42)
    x = rng.standard_normal((2, 4, 8))                    # (B, T, d_model)
    for position in ("pre", "post", "deepnorm"):
        block = nc.TransformerBlock(8, n_heads=2, position=position, n_layers=6, rng=0)
        y = block(x)
        print(f"{position:<9} alpha={block.alpha:.3f}  output rms {np.sqrt((y ** 2).mean()):.3f}  "
              f"parameters {sum(p.size for p in block.parameters())}")
    print("DeepNorm constants for N = 6:", nc.nn.deepnorm_constants(6))
    """),
    question(r"""
    Read the backward column of the table. In which position does the output's gradient
    $\bar{y}$ reach the block's input $x$ without passing through any norm's backward?
    """, r"""
    Pre-Norm: $\bar{x} = \bar{y} + \dots$, the identity path hands $\bar{y}$ to $x$ untouched,
    block after block. In Post-Norm and DeepNorm the first step is
    $\bar{z} = \operatorname{Norm}'(\bar{y})$, so even the identity path passes through a
    norm's backward in every block (DeepNorm then weights it by $\alpha$).
    """),
    md(r"""
    ## 3. The forward in code: the residual stream

    Stack twelve blocks at initialisation and follow the root-mean-square size of the stream
    after each block, and the size of the gradient on the way back (a random upstream gradient at
    the top).
    """),
    code(r"""
    x = rng.standard_normal((4, 8, 16))
    dy = rng.standard_normal(x.shape)
    sizes, grads = {}, {}
    for position in ("pre", "post"):
        blocks = [nc.TransformerBlock(16, 2, position=position, rng=i) for i in range(12)]
        h, sizes[position] = x, []
        for b in blocks:
            h = b(h)
            sizes[position].append(np.sqrt((h ** 2).mean()))
        g, grads[position] = dy, []
        for b in reversed(blocks):
            g = b.backward(g)
            grads[position].append(np.sqrt((g ** 2).mean()))
        grads[position].reverse()
        print(f"{position:<5} stream rms per block:", np.round(sizes[position], 2))
        print(f"{'':<5} gradient rms at each block's input:", np.round(grads[position], 2))
    """),
    md(r"""
    Pre-Norm's stream grows block after block (each adds a correction, nothing rescales), and
    so does the gradient going down: the identity path hands every block the full upstream
    gradient plus what its own branch adds. Post-Norm's stream is pinned at unit scale, and its
    gradient is pinned too: each block's backward starts with the norm's backward, which divides
    by the size of $x + F(x)$ and projects out two directions.

    ## 4. The backward: the norm on the gradient's path

    In a Post-Norm block the first thing the gradient meets is LayerNorm's backward, on the
    residual sum $z = x + F(x)$. That is exactly the LayerNorm step-through, with $z$ as its input.
    Here for one token of the last block (with the block's own $\gamma$ and $\beta$), checked
    against the block itself:
    """),
    code(r"""
    block = nc.TransformerBlock(8, 2, position="post", rng=1)
    xb = rng.standard_normal((1, 3, 8))
    block.zero_grad()
    yb = block(xb)
    dyb = rng.standard_normal(yb.shape)
    block.backward(dyb)

    # rebuild z = h + ffn(h), the input of norm2, from the block's own children
    h = block.norm1(xb + block.attn(xb))
    z = h + block.ffn(h)
    st = step_through("layernorm", z[0], gamma=block.norm2.gamma.data, beta=block.norm2.beta.data, dy=dyb[0])
    print("dL/dz from the tape vs norm2.backward:", np.abs(st.tape["x"].grad - block.norm2.backward(dyb)[0]).max())
    print(st.text(latex=False, parts=("checks",)))
    """),
    md(r"""
    **The softmax inside attention.** Attention scores $S = qk^\top/\sqrt{D}$ become weights
    $P = \operatorname{softmax}(S)$ row by row, with the future masked to $-\infty$. Its tape is
    max, shift, exp, sum, reciprocal, normalise; the compact backward is
    $\bar{S} = P \odot (\bar{P} - \sum_j \bar{P}\odot P)$. Masked entries have $P = 0$, so they
    get no gradient, and the path through the row maximum carries exactly zero (softmax ignores a
    shift of its row), as the numbers show:
    """),
    code(r"""
    T = 4
    scores = rng.standard_normal((T, T))
    scores[np.triu_indices(T, 1)] = -np.inf                 # causal mask: no looking ahead
    st = step_through("softmax", scores, seed=3)
    print(st.text(latex=False, parts=("forward",)))
    """),
    code(r"""
    print(st.text(latex=False, parts=("backward",)))
    """),
    code(r"""
    print(st.text(parts=("checks",)))
    """),
    question(r"""
    The route through the row maximum $m$ brings back exactly zero. Why, and why does the tape
    subtract the maximum at all?
    """, r"""
    Softmax ignores a shift of its row, and $m$ only shifts the row, so the loss does not depend
    on it: its gradient is $-\sum_j \bar{z}_j$, and $\bar{z}$ sums to zero over the row because
    the rest of the tape, a softmax of $z$, ignores a shift of $z$ as well. The maximum is
    subtracted for the forward's sake: $e^{s}$ overflows for large scores, while
    $e^{s - m} \le 1$.
    """),
    md(r"""
    ## 5. The gradient check of a block in every position

    Every parameter of the block (attention projections, feed-forward, both norms) and the
    input, in float64 with a random upstream gradient:
    """),
    code(r"""
    xs = rng.standard_normal((2, 3, 4))
    for position in ("pre", "post", "deepnorm"):
        for norm in ("layernorm", "rmsnorm"):
            block = nc.TransformerBlock(4, 2, d_ff=6, norm=norm, position=position, n_layers=2, rng=0)
            report = nc.gradcheck(block, xs)
            worst = max(c.rel_error for c in report.checks)
            print(f"{position:<9} {norm:<10} {len(report.checks):>2} gradients, worst rel error {worst:.1e}",
                  "pass" if report.passed else "FAIL")
            assert report.passed
    """),
    md(r"""
    ## 6. Pitfalls

    ### Post-Norm wants warmup

    A Post-Norm stack trained with a large learning rate from step 0 can stall or diverge; a short
    linear warmup usually rescues it. Xiong et al. (2020) trained Pre-Norm Transformers without
    warmup, but that does not make warmup obsolete: GPT-2, GPT-3 and LLaMA are Pre-Norm, and
    GPT-3 and LLaMA report training with a warmup all the same. Section 7 shows the difference on small copy and reversal
    tasks.

    ### Pre-Norm needs a final norm

    The Pre-Norm stream is never normalised (section 3), so the model needs one more norm before
    the output projection. `nc.TinyTransformer(position="pre")` adds `norm_f`; Post-Norm and
    DeepNorm blocks already end in a norm.
    """),
    code(r"""
    for position in ("pre", "post"):
        model = nc.TinyTransformer(vocab_size=10, d_model=8, n_layers=2, n_heads=2, max_len=6, position=position, rng=0)
        print(position, "has a final norm:", hasattr(model, "norm_f"))
    """),
    md(r"""
    ### "Post-Norm divides the identity path by $\sqrt{2}$ in every block"

    A common argument: if $x$ and $F(x)$ each have variance 1 and are independent, $x + F(x)$ has
    variance 2, so the norm divides by $\sqrt{2}$ and the identity path's weight shrinks by
    $1/\sqrt{2}$ per block. The conclusion (the identity path is damped, block after block) is
    right in spirit, but the numbers rest on assumptions worth measuring. At initialisation $F(x)$
    is far from unit variance. It is uncorrelated with $x$ (what the variance of the sum needs),
    though not independent of it: $F(x)$ is a function of $x$. The factor actually applied is the
    norm's $r = 1/\sqrt{\operatorname{var}(z) + \epsilon}$, per token:
    """),
    code(r"""
    block = nc.TransformerBlock(16, 2, position="post", rng=0)
    xt = rng.standard_normal((4, 8, 16))
    f = block.attn(xt)
    z = xt + f
    print("variance of x: %.3f, of F(x): %.3f, of x + F(x): %.3f" % (xt.var(-1).mean(), f.var(-1).mean(), z.var(-1).mean()))
    correlation = np.corrcoef(xt.ravel(), f.ravel())[0, 1]
    print("correlation of x and F(x): %.3f" % correlation)
    r = (1 / np.sqrt(z.var(-1) + 1e-5)).mean()
    print("the norm's factor r, mean over tokens: %.3f (1/sqrt(2) = %.3f)" % (r, 1 / np.sqrt(2)))
    assert f.var(-1).mean() < 0.5 * xt.var(-1).mean() and abs(correlation) < 0.05 and 0.85 < r < 0.95
    """),
    md(r"""
    Here $F(x)$ has less than half the variance of $x$ and the factor is about 0.9, not 0.71: the
    variance assumption, not the independence one, is what fails. Where both hold (branches
    uncorrelated with their input, with unit variance), the
    experiment behind `figures/effective_depth.png` measures exactly $2^{-l/2}$ for the weight of
    the input in the Post-Norm stream, and shows the Pre-Norm side of the story: the stream's
    norm grows like $\sqrt{1 + l}$ and consecutive layers' inputs become almost parallel.

    ![Effective depth: the input's weight, consecutive layers' cosine and the stream's norm](../figures/effective_depth.png)
    """),
    md(r"""
    ### DeepNorm's constants depend on the architecture

    $\alpha = (2N)^{1/4}$, $\beta = (8N)^{-1/4}$ are the decoder-only values for $N$ blocks; an
    encoder-decoder model uses different ones. They are not a free choice: $\alpha$ and $\beta$
    are derived together so that one update changes the model's output by a bounded amount.
    """),
    code(r"""
    for N in (1, 6, 24, 100):
        alpha, beta = nc.nn.deepnorm_constants(N)
        print(f"N={N:<4} alpha={alpha:.3f} beta={beta:.3f}")
    """),
    md(r"""
    ## 7. Figures: training with and without warmup

    From the experiments (`normcore figures`; each claim is asserted by a test). A 12-block
    Transformer on a copy task at one Adam learning rate (2e-3), three initialisations each:
    without warmup Post-LN stays at the chance loss, with a linear warmup it learns; Pre-LN and
    DeepNorm learn either way. One depth and one learning rate: a case where Post-LN needs
    warmup, not the depth or rate at which the need begins (the smaller run at the end of this
    section stalls a 4-block Post-LN without warmup, at a higher rate).

    ![Training loss of Post-LN, Pre-LN and DeepNorm with and without warmup](../figures/warmup.png)

    Why (Xiong et al. 2020): at initialisation Post-LN's parameter gradients near the output are
    several times Pre-LN's, and Post-LN's last block's does not shrink with depth, while Pre-LN's
    does. Read the bands, not only the means: on average Post-LN's gradients rise toward the
    output, but the bands of its first and last block overlap, so a single model can have them
    the other way round. Pre-LN's last-block gradient falls with a log-log slope of about -0.3
    here, shallower than the -1/2 of the theory's $O(\sqrt{1/L})$ bound.

    ![Gradient norms at initialisation by block, and the last block's against depth](../figures/pre_post_gradients.png)

    And a small random change of every weight moves a Post-LN model's output in proportion to its
    depth, a Pre-LN model's only about logarithmically (Liu et al. 2020): Post-LN amplifies the
    large early updates that warmup holds back.

    ![Output change under a small random weight change against depth](../figures/output_change.png)

    A smaller run, in a few seconds: four models (4 blocks, width 16, one initialisation) learn
    to reverse a sequence of 5 symbols with AdamW at a learning rate of 0.03 for 80 steps.
    """),
    code(r"""
    task = nc.tasks.ReverseTask(n_tokens=5, n_symbols=8)
    runs = {"pre": ("pre", None), "post": ("post", None), "post + warmup": ("post", linear_warmup(0.03, 40)),
            "deepnorm": ("deepnorm", None)}
    styles = {"pre": ("#0072B2", "--"), "post": ("#D55E00", "-"), "post + warmup": ("#E69F00", ":"),
              "deepnorm": ("#009E73", "-.")}   # Okabe-Ito colours, and a line style each
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for label, (position, schedule) in runs.items():
        model = nc.TinyTransformer(vocab_size=task.vocab_size, d_model=16, n_layers=4, n_heads=2,
                                   max_len=task.seq_len, position=position, rng=0)
        history = nc.fit(model, task, nc.AdamW(model.parameters(), lr=0.03), steps=80, schedule=schedule,
                         progress=False, batch_size=16, seed=1)
        color, linestyle = styles[label]
        ax.plot(history["loss"], color=color, linestyle=linestyle, label=label)
        print(f"{label:<14} final loss {history['loss'][-10:].mean():.3f}, accuracy {history['accuracy'][-10:].mean():.2f}")
    ax.set_xlabel("step"); ax.set_ylabel("training loss"); ax.set_yscale("log"); ax.legend()
    plt.show()
    """),
    md(r"""
    What these numbers show (the means of the last 10 steps): Pre-LN and DeepNorm learn the task
    (accuracy 1.00 and 0.99); Post-LN without warmup does not (loss 2.0, accuracy 0.21).
    Post-LN with warmup learns, but slowly and not stably: its loss falls to about 0.7 by step
    72, then jumps to 2.8 at the last step (79), so it ends at loss 1.08 and accuracy 0.53.
    Warmup helps Post-LN here, but in 80 steps it neither catches up with Pre-LN nor stays
    stable: a weaker result than the figure's, from one initialisation.
    """),
    md(r"""
    ## 8. The decoder block, written out

    An encoder-decoder Transformer's decoder block has three sub-layers instead of two:
    masked (causal) self-attention over the target, attention from the target to the
    encoder's output (the *memory*: queries from the target, keys and values from the
    memory), and the feed-forward. Each gets its residual connection and its norm in the same
    place as in the encoder block. Post-LN normalises each residual sum; Pre-LN normalises only
    what each sub-layer reads, and leaves the memory as the encoder delivered it.

    Below, both forms written out line by line with the sub-layers of a
    `nc.TransformerDecoderBlock`, so the weights are the block's own, and compared with the
    block's forward:
    """),
    code(r"""
    def post_ln_decoder(b, x, memory):
        x = b.norm1(x + b.self_attn(x))                    # causal self-attention: query i sees keys j <= i
        x = b.norm2(x + b.cross_attn(x, memory, memory))   # attend to the encoder's output
        x = b.norm3(x + b.ffn(x))                          # position-wise feed-forward
        return x

    def pre_ln_decoder(b, x, memory):
        x = x + b.self_attn(b.norm1(x))
        x = x + b.cross_attn(b.norm2(x), memory, memory)   # the memory itself is not normalised here
        x = x + b.ffn(b.norm3(x))
        return x

    target = rng.standard_normal((2, 5, 8))                # (B, Tt, d_model): the decoder's input
    memory = rng.standard_normal((2, 7, 8))                # (B, Ts, d_model): the encoder's output
    for position, by_hand in (("post", post_ln_decoder), ("pre", pre_ln_decoder)):
        block = nc.TransformerDecoderBlock(8, 2, position=position, rng=3)
        difference = np.abs(by_hand(block, target, memory) - block(target, memory)).max()
        print(f"{position:<5} max |written out - TransformerDecoderBlock| = {difference:.1e}")
        assert difference < 1e-12
    """),
    md(r"""
    What the position changes for the gradient: in Pre-LN, each line is
    $x \leftarrow x + F(\operatorname{Norm}(x))$, so the output's gradient reaches the block's
    input along the identity path untouched, $\bar{x} = \bar{y} + \dots$, through all three
    sub-layers; in Post-LN every line ends in a norm, so every gradient, the identity path's
    included, goes through `norm3`, `norm2` and `norm1`'s backward on its way down. The
    memory's gradient is the cross-attention's key gradient plus its value gradient
    (`backward` returns both `dx` and `dmemory`). With the three branches silenced (their
    output projections set to zero), the Pre-LN block's backward is exactly the identity and
    the Post-LN block's is not:
    """),
    code(r"""
    dy = rng.standard_normal(target.shape)
    for position in ("pre", "post"):
        block = nc.TransformerDecoderBlock(8, 2, position=position, rng=3)
        for projection in (block.self_attn.o, block.cross_attn.o, block.ffn.fc2):
            projection.weight.data[...] = 0
        block(target, memory)
        dx, dmemory = block.backward(dy)
        print(f"{position:<5} max |dx - dy| = {np.abs(dx - dy).max():.2f}   max |dmemory| = {np.abs(dmemory).max():.2f}")
    """),
    md(r"""
    ## Where next

    * `normcore explain softmax --shape 4x4 --causal` and `normcore explain layernorm` print the
      two tapes above.
    * `normcore gradcheck --only TransformerBlock` checks every block position.
    """),
]
