"""Source of notebooks/dropout.ipynb (build with: python notebooks/build.py dropout)."""

from build import code, md, question

CELLS = [
    md(r"""
    # Dropout: a random mask, and the scale that keeps the expectation

    Dropout is not a norm, but it lives next to them in every Transformer block, and it has the
    same kind of train/eval trap. In training each unit is zeroed with probability $p$ and the
    survivors are scaled by $1/(1-p)$ (*inverted* dropout); in evaluation it does nothing.

    1. the intuition
    2. the formulas
    3. the forward in code: the mask and the expectation
    4. the backward, step by step, on a tape
    5. the compact formula
    6. the gradient check
    7. the pitfalls: the missing scale, `p` vs keep-probability, a new mask in backward,
       train vs eval, dropout before a norm
    8. figures

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import numpy as np
    import matplotlib.pyplot as plt
    import normcore as nc
    from normcore.derivations import Tape

    np.set_printoptions(precision=4, suppress=True)

    def tidy(a):   # rounded to the 4 printed decimals; + 0.0 turns -0.0 into 0.0, so "-0." is never printed
        return np.round(a, 4) + 0.0
    """),
    md(r"""
    ## 1. Intuition

    A study group where each day a random 30% of the members stay home: nobody can rely on one
    particular member knowing the answer, so the knowledge gets spread around. For a network:
    no unit can rely on one particular other unit being present, which discourages fragile
    co-adaptations and acts as a regulariser.

    The catch: on an ordinary day only 70% show up, so the group's total output is 70% of what
    it is when everyone comes (at evaluation). Inverted dropout fixes that during training:
    each member who does come works $1/0.7$ times as hard, so the *expected* total is the same in
    both modes.

    ## 2. The formulas

    $$m_i \sim \text{Bernoulli}(1 - p), \qquad y_i = \frac{m_i\, x_i}{1 - p} \quad\text{(training)}, \qquad y = x \quad\text{(evaluation)}$$

    $$\mathbb{E}[y_i] = x_i, \qquad \frac{\partial L}{\partial x_i} = \frac{m_i}{1 - p}\,\frac{\partial L}{\partial y_i}$$

    The mask is drawn once per forward pass and reused by the backward.
    """),
    md(r"""
    ## 3. The forward in code: the mask and the expectation
    """),
    code(r"""
    drop = nc.Dropout(p=0.3, rng=42)
    x = np.arange(1.0, 11.0).reshape(2, 5)
    y = drop(x)
    print(drop)
    print("x =\n", x)
    print("y =\n", y, "\n(kept units scaled by 1/0.7 =", 1 / 0.7, ")")

    many = np.stack([drop(x) for _ in range(20000)])
    print("average of y over 20000 masks:\n", many.mean(axis=0))
    print("eval mode returns x itself:", drop.eval()(x) is x or np.array_equal(drop(x), x))
    drop.train();
    """),
    question(r"""
    Inverted dropout scales the kept units by $1/(1-p)$ during training. The original recipe
    left training unscaled and multiplied by $1 - p$ at evaluation instead. What do the two
    have in common, and why do frameworks prefer the inverted one?
    """, r"""
    Both make the expected output in training equal the output at evaluation. Inverted dropout
    does the scaling where the randomness is, so evaluation is the identity: the trained model
    runs as it is, and nothing at inference needs to know $p$.
    """),
    md(r"""
    ## 4. The backward, step by step, on a tape

    The forward is one elementary step: $y = x \cdot k$ with the *constant* $k = m/(1-p)$ (the mask
    and the scale, fixed once drawn). Its local derivative is $\partial y / \partial x = k$, so
    $\bar{x} = \bar{y}\,k$. The same `Tape` that builds the norms' step-throughs builds this one:
    """),
    code(r"""
    drop = nc.Dropout(p=0.3, rng=7)
    x = np.random.default_rng(42).normal(size=(2, 5))
    y = drop(x)
    keep = np.where(y != 0, y / x, 0.0)       # the mask times 1/(1-p), recovered from this forward

    tape = Tape()
    tx = tape.leaf("x", x)
    tk = tape.leaf("keep", keep, "k")
    ty = tape.mul(tx, tk, "y", "drop", "y")
    dy = np.random.default_rng(1).standard_normal(x.shape)
    tape.backward(dy)

    edge = ty.edges[0]
    print("forward:", ty.formula, "   local derivative:", edge.local, "   rule:", edge.rule)
    print("keep = mask / (1 - p):\n", tidy(keep))
    print("dL/dx from the tape:\n", tidy(tx.grad))
    print("Dropout.backward:\n", tidy(drop.backward(dy)))
    print("numerical (mask fixed):\n", tidy(tape.numerical_grad(tx, dy)))
    """),
    md(r"""
    ## 5. The compact formula

    $\bar{x} = \bar{y} \odot m / (1 - p)$: the same mask, the same scale. That is why Dropout
    caches the mask (and nothing else): the backward of a random layer is only defined given the
    randomness the forward used. A dropped unit gets no gradient.

    ## 6. The gradient check

    `nc.gradcheck` runs the forward many times; it copies the layer's random generator in the
    same state each time, so every run draws the same mask and the function being
    differentiated is fixed.
    """),
    code(r"""
    x = np.random.default_rng(3).normal(size=(4, 6))
    for p in (0.1, 0.5, 0.9):
        report = nc.gradcheck(nc.Dropout(p, rng=0), x, name=f"Dropout(p={p})")
        print(report.table(header=p == 0.1))
        assert report.passed
    """),
    question(r"""
    The backward reuses the mask the forward drew. What would a backward that draws a fresh mask
    compute, and would the gradient check notice?
    """, r"""
    The gradient of a different function: units that reached the loss would get no gradient,
    and dropped units, which did not, would get one. The check would notice, since its central
    differences replay the forward with the forward's own mask.
    """),
    md(r"""
    ## 7. Pitfalls

    ### Forgetting the scale

    Without $1/(1-p)$ the training-time activations are $(1-p)$ times the evaluation-time ones on
    average; the next layer is trained on one scale and evaluated on another.
    """),
    code(r"""
    x = np.ones((1000, 100))
    rng = np.random.default_rng(0)
    mask = rng.random(x.shape) >= 0.5
    print("mean in training, inverted dropout:", (x * mask / 0.5).mean())
    print("mean in training, no scale:        ", (x * mask).mean())
    print("mean in evaluation:                ", x.mean())
    """),
    md(r"""
    ### `p` is the probability of dropping

    In normcore and PyTorch `p` is the drop probability. Some older APIs took `keep_prob`, the
    probability of keeping. `Dropout(0.9)` keeps only 10% of the units.
    """),
    code(r"""
    x = np.ones((100, 100))
    for p in (0.1, 0.9):
        print(f"Dropout({p}): fraction of units kept {(nc.Dropout(p, rng=0)(x) != 0).mean():.2f}")
    try:
        nc.Dropout(1.5)
    except ValueError as err:
        print("ValueError:", err)
    print("Dropout(1.0) gives zeros:", np.count_nonzero(nc.Dropout(1.0)(x)))
    """),
    md(r"""
    ### A new mask in the backward is wrong

    The gradient must use the forward's mask. Drawing a fresh one gives a gradient of the right
    size and the wrong direction, and a gradient check catches it at once.
    """),
    code(r"""
    x = np.random.default_rng(5).normal(size=(3, 4))
    layer = nc.Dropout(0.5, rng=0)
    y = layer(x)
    dy = np.random.default_rng(6).standard_normal(x.shape)
    right = layer.backward(dy)
    fresh = dy * (np.random.default_rng(99).random(x.shape) >= 0.5) / 0.5
    expected = np.where(y != 0, dy / 0.5, 0.0)     # y = 2 x where kept, 0 where dropped
    print("relative error, the forward's mask:", nc.rel_error(right, expected))
    print("relative error, a fresh mask:      ", nc.rel_error(fresh, expected))
    """),
    md(r"""
    ### Train vs eval, and dropout before a norm

    Evaluation must be the identity, so remember `model.eval()`. A subtler effect: inverted
    dropout keeps the *mean* but not the *variance*. For a unit with value $x$, the output in
    training has variance $x^2 p/(1-p)$, in evaluation 0. A BatchNorm placed after dropout learns
    running statistics of the noisier training activations and then normalises the quieter
    evaluation activations with them (the "variance shift" between dropout and BatchNorm).
    """),
    code(r"""
    rng = np.random.default_rng(8)
    features = rng.normal(1.0, 1.0, size=(4096, 1))
    for p in (0.1, 0.3, 0.5):
        train_out = nc.Dropout(p, rng=1)(features)
        print(f"p={p}: variance in training {train_out.var():.3f}, in evaluation {features.var():.3f}")
    """),
    md(r"""
    ## 8. Figures

    The variance added by dropout grows like $p/(1-p)$: mild at $p = 0.1$, adding the whole
    second moment $\mathbb{E}[x^2]$ at $p = 0.5$, exploding as $p \to 1$. Measured against the formula
    $\operatorname{Var}_{\text{train}} = \operatorname{Var}(x) + \mathbb{E}[x^2]\,p/(1-p)$:
    """),
    code(r"""
    ps = np.linspace(0.0, 0.8, 17)
    measured = [nc.Dropout(p, rng=2)(features).var() for p in ps]
    predicted = features.var() + (features ** 2).mean() * ps / (1 - ps)
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot(ps, measured, "o", label="measured")
    ax.plot(ps, predicted, "-", label="Var(x) + E[x^2] p / (1 - p)")
    ax.set_xlabel("dropout probability p"); ax.set_ylabel("variance in training"); ax.legend()
    plt.show()
    """),
    md(r"""
    **From the experiments** (`normcore figures`; each claim is asserted by a test). Inverted
    dropout keeps $\mathbb{E}[y] = x$ for every $p$; without the $1/(1-p)$ the expectation shrinks
    to $(1-p)\,x$ in training, and a trained network's evaluation outputs come out about
    $1/(1-p)$ too large.

    ![Expectation of the dropout output with and without the 1/(1-p) scale](../figures/dropout_expectation.png)

    A small regression network trained with $p = 0.5$, then evaluated: with inverted dropout its
    predictions follow the targets; without the scale they come out about twice as large.

    ![Evaluation predictions of a network trained with and without the 1/(1-p) scale](../figures/dropout_train_eval.png)
    """),
    md(r"""
    ## Where next

    * `normcore gradcheck --only Dropout` checks Dropout in both modes.
    * The Pre-Norm vs Post-Norm notebook puts dropout, the norms and attention together.
    """),
]
