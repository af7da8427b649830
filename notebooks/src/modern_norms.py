"""Source of notebooks/modern_norms.ipynb (build with: python notebooks/build.py modern_norms).

It is one piece, though long: it holds nothing but the notebook's cells in order, each helper
defined in the code cell that shows it, so the file reads as the notebook does (one source per
notebook: helpers moved out would no longer be shown).
"""

from build import code, md, question
from normcore.bibliography import notebook_references

CELLS = [
    md(r"""
    # Normalization since 2020: DyT, QK-norm, Peri-LN

    Three changes to where and how a Transformer normalises, each a few lines of code, each with
    its own backward:

    * **DyT** (Dynamic Tanh): replace LayerNorm by $\gamma \tanh(\alpha x) + \beta$, an
      element-wise squashing with no mean and no variance;
    * **QK-norm**: normalise each attention head's queries and keys before their dot product,
      so the attention logits are bounded by the norm's learned gains, not by the projection
      weights;
    * **Peri-LN**: normalise each residual branch's output as well as its input, so no branch
      can add more than a norm's worth to the residual stream.

    1. DyT: a concrete example, why it can stand in for LayerNorm, the formulas, the staged
       backward with the tape, the compact backward, the gradient check, the classic mistakes
    2. QK-norm: the logits with and without it, the formulas, where the norm's backward enters
       $\bar{q}$ and $\bar{k}$, the gradient check, the classic mistakes
    3. Peri-LN: what a branch can add to the stream, the formulas, the backward written out,
       the gradient check
    4. RMSNorm against LayerNorm, in one paragraph
    5. the figures: each paper's claim, measured at this scale

    Runs in a few seconds with `normcore` importable (`pip install -e .` in the repository).
    """),
    code(r"""
    import numpy as np
    import normcore as nc
    from normcore.derivations import step_through

    np.set_printoptions(precision=4, suppress=True)
    """),

    # --- 1. DyT --------------------------------------------------------------------------------
    md(r"""
    ## 1. DyT: a norm without statistics

    ### A concrete example

    One token with five features. `nc.DyT(5)` starts with $\alpha = 0.5$, $\gamma = 1$,
    $\beta = 0$, so it computes $\tanh(x / 2)$ value by value: small values pass almost
    unchanged (halved), large ones are squashed towards $\pm 1$. Nothing is computed across
    the features: no mean, no variance, no $\epsilon$.
    """),
    code(r"""
    rng = np.random.default_rng(0)
    x = np.array([[-4.0, -1.0, 0.0, 0.5, 3.0]])
    dyt = nc.DyT(5)
    print(dyt, " alpha =", dyt.alpha.data, " gamma =", dyt.gamma.data, " beta =", dyt.beta.data)
    print("x       =", x)
    print("DyT(x)  =", dyt(x))
    print("tanh(x/2) - DyT(x):", np.abs(np.tanh(x / 2) - dyt(x)).max())
    moved = x.copy()
    moved[0, 0] = 100.0                                     # change one feature only
    print("change of the output when x[0] becomes 100:", dyt(moved) - dyt(x))
    assert np.all(dyt(moved)[0, 1:] == dyt(x)[0, 1:])
    """),
    md(r"""
    ### Why it can replace LayerNorm

    LayerNorm is linear within one token, $(x - \mu)/\sigma$, but it also squashes: a feature
    far out in its token raises that token's $\sigma$, so it is divided by more. However large
    one value grows, its LayerNorm output cannot exceed $\sqrt{D - 1}$ (the largest a single
    entry of a row with mean 0 and variance 1 can be; in floating point, a row whose values
    differ only in their last digits can go past it, up to $\sqrt{D}$ by rounding, because its
    computed mean is then off by as much as its spread). Below, the row $(0.5, -0.5, 1, c)$ with
    a growing $c$: LayerNorm's last output saturates at $\sqrt{3} \approx 1.732$, as $\tanh$
    saturates at 1.
    """),
    code(r"""
    ln = nc.LayerNorm(4, elementwise_affine=False)
    dyt4 = nc.DyT(4)
    print(f"{'c':>6}  {'LayerNorm of the row':<40} {'DyT of the row'}")
    for c in (1, 3, 10, 30, 100, 1000):
        row = np.array([[0.5, -0.5, 1.0, c]])
        print(f"{c:>6}  {str(ln(row)[0]):<40} {dyt4(row)[0]}")
    big = np.array([[0.5, -0.5, 1.0, 1e6]])
    assert abs(ln(big)[0, -1] - np.sqrt(3)) < 1e-5
    """),
    md(r"""
    The two squash differently. LayerNorm's outlier takes the rest of its token with it: as
    $c$ grows, the first three outputs all tend to $-1/\sqrt{3} \approx -0.577$ and their
    differences vanish. DyT works value by value, so the other three outputs do not move.

    Over many tokens the squashing shows as an S-shaped curve. Draw 4000 tokens of 16
    heavy-tailed features (Student's t with 3 degrees of freedom, whose tails reach far out)
    and look at the typical LayerNorm output for inputs of each size: it grows with the input,
    ever more slowly (the ratio output / input falls), and stays below the bound
    $\sqrt{15} \approx 3.87$.
    That tanh-like curve, measured in trained Transformers, is what motivated DyT (Zhu et al.,
    "Transformers without Normalization", 2025).
    """),
    code(r"""
    tokens = rng.standard_t(3, size=(4000, 16))
    out = nc.LayerNorm(16, elementwise_affine=False)(tokens)
    size, out_size = np.abs(tokens).ravel(), np.abs(out).ravel()
    edges = [0, 0.5, 1, 2, 4, 8, 16, np.inf]
    ln_median, ln_ratio = [], []
    print(f"{'|x| in':<12} {'values':>7} {'median |LN(x)|':>15} {'median |LN(x)| / |x|':>21}")
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (size >= lo) & (size < hi)
        ln_median.append(np.median(out_size[sel]))
        ln_ratio.append(np.median(out_size[sel] / size[sel]))
        print(f"[{lo:g}, {hi:g})".ljust(12), f"{sel.sum():>7} {ln_median[-1]:>15.3f} {ln_ratio[-1]:>21.3f}")
    print("largest |LN(x)|:", out_size.max().round(3), " bound sqrt(15):", np.sqrt(15).round(3))
    assert np.all(np.diff(ln_median) > 0) and np.all(np.diff(ln_ratio) < 0) and out_size.max() <= np.sqrt(15)
    """),
    md(r"""
    ### The formulas

    For $x$ of shape $(\ast, D)$:

    $$u = \alpha\, x, \qquad t = \tanh u, \qquad y = \gamma\, t + \beta$$

    $\alpha$ is **one** learned number (shape $(1,)$), shared by every element of every token;
    $\gamma$ and $\beta$ have one value per feature, like LayerNorm's. Training and evaluation
    are the same computation. The state dict holds `alpha`, `weight`, `bias`, in that order.
    """),
    code(r"""
    layer = nc.DyT(3)
    layer.alpha.data[...] = 0.8
    layer.gamma.data[...] = rng.uniform(0.5, 1.5, 3)
    layer.beta.data[...] = rng.normal(0, 0.5, 3)
    x = rng.normal(0, 2, size=(2, 3))
    y = layer(x)
    print({name: value.shape for name, value in layer.state_dict().items()})
    assert np.array_equal(layer.eval()(x), y) and layer.train().training     # evaluation: the same computation
    print("largest difference from the formulas:",
          np.abs(layer.gamma.data * np.tanh(layer.alpha.data * x) + layer.beta.data - y).max())
    """),
    md(r"""
    ### The backward, one node at a time

    Four nodes: scale by $\alpha$, tanh, scale by $\gamma$, shift by $\beta$. Each node's
    local derivative is one factor, and nothing mixes elements, so the backward is a chain of
    element-wise products. Two reductions remain: $\gamma$ and $\beta$ are shared by the
    tokens (sum over the leading axes), and $\alpha$ by everything (sum over **every** axis).
    The derivative of tanh is written with its *output*: $\tanh'(u) = 1 - \tanh^2 u = 1 - t^2$.

    <<tape dyt 2x3>>

    The same tape on the layer above, with a random upstream gradient:
    """),
    code(r"""
    dy = rng.standard_normal(x.shape)
    st = step_through("dyt", x, alpha=layer.alpha.data, gamma=layer.gamma.data, beta=layer.beta.data, dy=dy)
    print(st.text(latex=False, parts=("backward",)))
    """),
    code(r"""
    print(st.text(parts=("checks",)))
    """),
    md(r"""
    ### The compact backward

    Collapse the chain, with $\bar{u}$ the gradient at $u$:

    $$\bar{u} = \bar{y}\,\gamma\,(1 - t^2), \qquad \bar{x} = \alpha\,\bar{u}, \qquad
      \bar{\alpha} = \sum_{\text{every element}} \bar{u}\, x, \qquad
      \bar{\gamma} = \sum_{\ast} \bar{y}\, t, \qquad \bar{\beta} = \sum_{\ast} \bar{y}$$

    Unlike LayerNorm's $\bar{x}$, which has terms in $\operatorname{mean}(g)$ and
    $\operatorname{mean}(g\hat{x})$ over the token, each $\bar{x}_j$ depends on its own
    $x_j$ and $\bar{y}_j$ only. And since $\alpha$ multiplies $x$, $\bar{\alpha} = \sum \bar{x}\,x / \alpha$.
    """),
    code(r"""
    t = np.tanh(layer.alpha.data * x)
    du = dy * layer.gamma.data * (1 - t ** 2)
    compact = {"x": layer.alpha.data * du, "alpha": np.array([(du * x).sum()]),
               "gamma": (dy * t).sum(axis=0), "beta": dy.sum(axis=0)}
    layer.zero_grad()
    layer(x)
    given = {"x": layer.backward(dy), "alpha": layer.alpha.grad, "gamma": layer.gamma.grad, "beta": layer.beta.grad}
    for name in compact:
        print(f"{name:<6} compact - DyT.backward: {np.abs(compact[name] - given[name]).max():.1e}   "
              f"compact - tape: {np.abs(compact[name] - st.tape[name].grad).max():.1e}")
    print("dalpha - sum(dx * x) / alpha:", (compact["alpha"] - (compact["x"] * x).sum() / layer.alpha.data).item())
    """),
    md(r"""
    ### The gradient check

    Random $\alpha$, $\gamma$, $\beta$, float64, a random upstream gradient (`nc.gradcheck`
    draws one), over one feature axis and over two (`normalized_shape=(3, 4)`):
    """),
    code(r"""
    batch = rng.normal(0, 2, size=(2, 3, 4))
    for shape in (4, (3, 4)):
        check = nc.DyT(shape)
        check.alpha.data[...] = rng.uniform(0.3, 1.5)
        check.gamma.data[...] = rng.uniform(0.5, 1.5, check.gamma.shape)
        check.beta.data[...] = rng.normal(0, 0.5, check.beta.shape)
        report = nc.gradcheck(check, batch)
        print(report, "\n")
        assert report.passed
    """),
    md(r"""
    ### The classic mistakes

    A DyT with a hand-written backward, in which the class attribute `mistake` switches in one
    of three slips:

    * $\bar{\alpha}$ **not summed over every element** (here averaged: `(du * x).mean()`);
    * **tanh' from the input**: $1 - x^2$ instead of $1 - t^2$;
    * **no $\alpha$ in $\bar{x}$**: the chain rule stopped at $u$.

    Each breaks a different set of gradients, and `normcore practice`'s grader (the `dyt`
    exercise) names each one from its numbers alone:
    """),
    code(r"""
    from normcore.practice import EXERCISES, grade

    class HandDyT(nc.DyT):
        # normcore's forward; the backward written out, with an optional slip
        mistake = None

        def backward(self, dy):
            x, t, _, _ = self._cached()                                 # x and t = tanh(alpha x), (*, D)
            lead = tuple(range(dy.ndim - len(self.normalized_shape)))   # the * axes
            self.gamma.grad += (dy * t).sum(axis=lead)                  # D
            self.beta.grad += dy.sum(axis=lead)                         # D
            slope = 1 - x ** 2 if self.mistake == "tanh' from x" else 1 - t ** 2
            du = dy * self.gamma.data * slope                           # (*, D)
            self.alpha.grad += (du * x).mean() if self.mistake == "dalpha averaged" else (du * x).sum()  # (1,)
            return du if self.mistake == "no alpha in dx" else self.alpha.data * du                  # (*, D)

    def with_mistake(mistake):
        return type("DyT", (HandDyT,), {"mistake": mistake})

    mine = with_mistake(None)(4)                                        # random alpha, gamma, beta
    mine.load_state_dict({"alpha": rng.uniform(0.3, 1.5, 1), "weight": rng.uniform(0.5, 1.5, 4),
                          "bias": rng.normal(0, 0.5, 4)})
    print(f"{'mistake':<16} {'dx':>8} {'dalpha':>8} {'dgamma':>8} {'dbeta':>8}   normcore practice says")
    dyt_errors = {}
    for mistake in (None, "dalpha averaged", "tanh' from x", "no alpha in dx"):
        candidate = with_mistake(mistake)(4)
        candidate.load_state_dict(mine.state_dict())
        report = nc.gradcheck(candidate, batch)
        dyt_errors[mistake] = report.errors
        verdict = grade(with_mistake(mistake), EXERCISES["dyt"])
        said = "pass" if verdict.passed else ", ".join(verdict.diagnosis_ids)
        print(f"{str(mistake):<16} " + " ".join(f"{e:>8.0e}" for e in report.errors.values()) + f"   {said}")
    """),
    md(r"""
    What each gives, in numbers, on this batch of $2 \times 3 \times 4 = 24$ values:
    the averaged $\bar{\alpha}$ is exactly 24 times too small (and a per-channel "sum over the
    batch only" gives an array of 4 numbers whose *sum* is the right answer); $1 - x^2$ turns
    negative wherever $|x| > 1$, so the gradient there points the wrong way; without $\alpha$,
    $\bar{x}$ is $1/\alpha$ times the right value everywhere.
    """),
    code(r"""
    def gradients(mistake):
        layer_ = with_mistake(mistake)(4)
        layer_.load_state_dict(mine.state_dict())
        layer_(batch)
        dx = layer_.backward(dy_batch)
        return dx, layer_.alpha.grad.copy()

    dy_batch = rng.standard_normal(batch.shape)
    dx_right, dalpha_right = gradients(None)
    alpha_ = mine.alpha.data.item()
    t_batch = np.tanh(alpha_ * batch)
    du_batch = dy_batch * mine.gamma.data * (1 - t_batch ** 2)
    dalpha_mean = gradients("dalpha averaged")[1]
    print("dalpha right / dalpha averaged:", (dalpha_right / dalpha_mean).item(), " values:", batch.size)
    per_channel = (du_batch * batch).sum(axis=(0, 1))
    print("per channel:", per_channel, " its sum:", per_channel.sum(), " right dalpha:", dalpha_right.item())
    wrong_slope = 1 - batch ** 2
    print(f"1 - x**2 is negative for {np.mean(wrong_slope < 0):.0%} of the values (|x| > 1); 1 - t**2 is in (0, 1]:",
          bool(np.all((1 - t_batch ** 2 > 0) & (1 - t_batch ** 2 <= 1))))
    ratio = gradients("no alpha in dx")[0] / dx_right
    print("dx without alpha / right dx: from", ratio.min().round(6), "to", ratio.max().round(6),
          " 1/alpha =", round(1 / alpha_, 6))
    """),
    question(r"""
    With $\alpha = 0.5$, a feature of size 30 gives $u = 15$. How much gradient reaches that
    $x$ (and $\alpha$) through it, and what does that say about the choice of `alpha_init`?
    """, r"""
    Almost none: the slope $1 - \tanh^2(15) \approx 3.7 \times 10^{-13}$, so
    $\bar{x} = \alpha\,\bar{y}\,\gamma\,(1 - t^2)$ is about $10^{-13}$ of the upstream
    gradient, and that element's share of $\bar{\alpha}$ is as small. A saturated tanh passes
    no gradient. A smaller $\alpha$ keeps more values in tanh's nearly linear range
    $|\alpha x| \lesssim 1$, which is why $\alpha$ starts small (0.5) and is learned.
    Measured: `nc.DyT(1)` on $x = 30$ with $\bar{y} = 1$ gives $\bar{x} \approx 1.9 \times 10^{-13}$.
    """),
    code(r"""
    saturated = nc.DyT(1)
    saturated(np.array([[30.0]]))
    dx_saturated = saturated.backward(np.ones((1, 1))).item()
    print(f"dx at x = 30: {dx_saturated:.2e}   1 - tanh(15)**2 = {1 - np.tanh(15.0) ** 2:.2e}")
    assert 1e-13 < dx_saturated < 3e-13
    """),

    # --- 2. QK-norm ----------------------------------------------------------------------------
    md(r"""
    ## 2. QK-norm: bounded attention logits

    ### A concrete example

    Attention compares a query $q$ with each key $k$ by the logit $q \cdot k / \sqrt{D}$ (one
    head, $D$ channels), and softmax turns the logits into weights. The logits grow with the
    query and key weights: scale $W_q$ and $W_k$ by $c$ and they grow by $c^2$, until softmax
    puts all the weight on one key. QK-norm normalises each head's $q$ and $k$ before the dot
    product. Henry et al. (2020, "Query-Key Normalization for Transformers", arXiv 2010.04245)
    introduced it for translation: each head's $q$ and $k$ divided by their L2 norm, and a
    learned scalar in place of $1/\sqrt{D}$. ViT-22B (Dehghani et al. 2023, arXiv 2302.05442)
    brought it back as a LayerNorm on the queries and keys, without biases, to stop the attention
    logits of an 8B-parameter ViT from growing until training diverged. Gemma 3 and Qwen3 use an
    RMSNorm on each head's $D$ channels, as normcore does; OLMo 2 uses one RMSNorm over the whole
    $q$ (and $k$) projection, all heads together, before the split into heads (Hugging Face
    transformers, `modeling_olmo2.py`; "The classic mistakes" below shows what that changes).

    Below, `attend` writes the layer's forward out line by line with its own children (it is
    checked against the layer), so the logits $S$ can be printed. Two heads of $D = 4$ channels;
    the QK-norm weights $\gamma_q$, $\gamma_k$ are random.
    """),
    code(r"""
    rng = np.random.default_rng(1)

    def heads(a, t):          # (B, T, C) -> (B, H, T, D)
        B, T, _ = t.shape
        return t.reshape(B, T, a.num_heads, a.head_dim).transpose(0, 2, 1, 3)

    def merge(a, t):          # (B, H, T, D) -> (B, T, C)
        B, _, T, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, a.embed_dim)

    def attend(a, x):
        q, k, v = heads(a, a.q(x)), heads(a, a.k(x)), heads(a, a.v(x))   # (B, H, T, D) each
        if a.qk_norm is not None:
            q, k = a.q_norm(q), a.k_norm(k)                              # each head's rows over D
        S = q @ k.swapaxes(-1, -2) / np.sqrt(a.head_dim)                 # (B, H, T, T)
        P = np.exp(S - S.max(-1, keepdims=True))
        P /= P.sum(-1, keepdims=True)                                    # softmax over the keys
        return a.o(merge(a, P @ v)), dict(q=q, k=k, v=v, S=S, P=P)

    x = rng.standard_normal((1, 5, 8))
    print(f"{'c':>4}   {'max |S|, no norm':>16} {'max P':>6}   {'max |S|, QK-norm':>16} {'max P':>6}   bound")
    logits = {}
    for c in (1, 4, 16, 64):
        row = []
        for qk_norm in (None, "rmsnorm"):
            a = nc.MultiheadSelfAttention(8, 2, qk_norm=qk_norm, rng=0)
            a.q.weight.data *= c
            a.k.weight.data *= c
            if qk_norm:
                a.q_norm.gamma.data[...] = np.random.default_rng(2).uniform(-1.5, 1.5, 4)
                a.k_norm.gamma.data[...] = np.random.default_rng(3).uniform(-1.5, 1.5, 4)
                bound = np.sqrt(a.head_dim) * np.abs(a.q_norm.gamma.data).max() * np.abs(a.k_norm.gamma.data).max()
            y, parts = attend(a, x)
            assert np.abs(y - a(x)).max() < 1e-12                        # the written-out forward is the layer's
            logits[c, qk_norm] = np.abs(parts["S"]).max()
            row.append(f"{logits[c, qk_norm]:>16.2f} {parts['P'].max():>6.3f}")
        print(f"{c:>4}   " + "   ".join(row) + f"   {bound:.2f}")
    assert all(logits[c, "rmsnorm"] <= bound for c in (1, 4, 16, 64))
    print("growth of max |S| from c = 1 to 64, without / with QK-norm:",
          round(logits[64, None] / logits[1, None]), round(logits[64, "rmsnorm"] / logits[1, "rmsnorm"], 3))
    """),
    md(r"""
    Without the norm the largest logit grows by $64^2 = 4096$ and softmax is one-hot from
    $c = 4$ on (max $P$ = 1.000); with it the logits stay where they were (RMSNorm ignores the
    scale of its input) and under the bound in the last column, which only $\gamma_q$ and
    $\gamma_k$ set. In training those gains are learned and can grow, and the bound with them:
    QK-norm slows the logits' growth, it does not stop it (section 5 measures it).

    ### The formulas

    Per head $h$, with $\operatorname{Norm}$ an `RMSNorm(D)` or `LayerNorm(D)` whose weight
    $\gamma$ (and bias) is shared by all heads:

    $$\hat{q}_h = \operatorname{Norm}_q(q_h), \quad \hat{k}_h = \operatorname{Norm}_k(k_h), \quad
      S_h = \frac{\hat{q}_h \hat{k}_h^\top}{\sqrt{D}}, \quad P_h = \operatorname{softmax}(S_h)$$

    after splitting the heads (each head's $D$ channels, not the whole $d_\text{model}$) and
    before the $1/\sqrt{D}$ scaling. **The bound.** RMSNorm's $\hat{q}$ (before $\gamma$) has
    RMS 1, so $\|\hat{q}\| \le \sqrt{D}$, and multiplying by $\gamma$ scales each entry by at
    most $\max|\gamma|$. By Cauchy-Schwarz

    $$\frac{|q \cdot k|}{\sqrt{D}} \le \frac{\|q\|\,\|k\|}{\sqrt{D}}
      \le \frac{\sqrt{D}\max|\gamma_q| \cdot \sqrt{D}\max|\gamma_k|}{\sqrt{D}}
      = \sqrt{D}\,\max|\gamma_q|\,\max|\gamma_k|$$

    whatever $W_q$, $W_k$ and the input are: only the two small vectors $\gamma_q$, $\gamma_k$
    can make the logits large. The same holds for a LayerNorm without bias ($\|\hat{q}\| \le
    \sqrt{D}$ too). A LayerNorm bias $\beta_q$ is added after the norm and adds
    $\beta_q \cdot \hat{k} / \sqrt{D}$ to each logit, up to $\|\beta_q \odot \gamma_k\|$, however
    small $\gamma$ is (normcore's QK-LayerNorm has $\beta_q$; the question below says why it has
    no $\beta_k$). With both biases, for $\hat{q} = \gamma_q \odot u + \beta_q$ and
    $\hat{k} = \gamma_k \odot w + \beta_k$ ($u$, $w$ the standardised rows, $\|u\|, \|w\| \le \sqrt{D}$):

    $$\frac{|\hat{q} \cdot \hat{k}|}{\sqrt{D}} \le \sqrt{D}\max_i|\gamma_{q,i}\gamma_{k,i}|
      + \|\gamma_q \odot \beta_k\| + \|\beta_q \odot \gamma_k\| + \frac{|\beta_q \cdot \beta_k|}{\sqrt{D}}$$

    the bound `normcore.experiments.qk_norm.logit_bound` computes. Below, a QK-LayerNorm with
    $\gamma = 1$ and $\beta_q = \pm 5$: the bias-free bound says 2, the logits go far past it.
    """),
    code(r"""
    from normcore.experiments.qk_norm import logit_bound

    a = nc.MultiheadSelfAttention(16, 4, qk_norm="layernorm", rng=0)     # D = 4
    a.q_norm.bias.data[...] = 5.0 * np.array([1.0, -1.0, 1.0, -1.0])
    _, parts = attend(a, np.random.default_rng(5).standard_normal((4, 16, 16)))
    bias_free = np.sqrt(a.head_dim) * np.abs(a.q_norm.gamma.data).max() * np.abs(a.k_norm.gamma.data).max()
    largest = np.abs(parts["S"]).max()
    print(f"largest |logit| {largest:.2f}, bias-free bound {bias_free:.2f}, with the biases {logit_bound(a):.2f}")
    assert bias_free < largest <= logit_bound(a)
    """),
    md(r"""
    ### The backward: where the norm enters $\bar{q}$ and $\bar{k}$

    The attention's backward runs as before down to the logits,
    $\bar{S} = P \odot (\bar{P} - \sum_j \bar{P} \odot P)$, and gives the gradients of the
    *normalised* queries and keys:
    $\bar{\hat{q}} = \bar{S}\,\hat{k}/\sqrt{D}$, $\bar{\hat{k}} = \bar{S}^\top \hat{q}/\sqrt{D}$.
    Then, per head, the norm's own backward (RMSNorm's
    $\bar{q} = r\,(g - \hat{x}\operatorname{mean}(g\hat{x}))$ with $g = \bar{\hat{q}}\gamma_q$)
    turns them into the gradients of the raw $q$ and $k$, which go on through the
    projections. Written out, and checked against `backward`:
    """),
    code(r"""
    attn = nc.MultiheadSelfAttention(8, 2, qk_norm="rmsnorm", rng=0)
    attn.q_norm.gamma.data[...] = rng.uniform(0.5, 1.5, 4)
    attn.k_norm.gamma.data[...] = rng.uniform(0.5, 1.5, 4)
    attn.zero_grad()
    attn(x)
    dy = rng.standard_normal(x.shape)
    dx_layer = attn.backward(dy)
    dgamma_q = attn.q_norm.gamma.grad.copy()                 # gamma_q's gradient, from the norm's backward
    print("gamma_q:", attn.q_norm.gamma.shape, "shared by", attn.num_heads, "heads")

    y, f = attend(attn, x)                                   # q, k: normalised; the norms cache their input
    dA = heads(attn, dy @ attn.o.weight.data)                # (B, H, T, D)
    dP, dv = dA @ f["v"].swapaxes(-1, -2), f["P"].swapaxes(-1, -2) @ dA
    dS = f["P"] * (dP - (dP * f["P"]).sum(-1, keepdims=True))          # softmax backward
    dq_hat = dS @ f["k"] / np.sqrt(attn.head_dim)                      # gradient of the normalised q
    dk_hat = dS.swapaxes(-1, -2) @ f["q"] / np.sqrt(attn.head_dim)
    dq, dk = attn.q_norm.backward(dq_hat), attn.k_norm.backward(dk_hat)  # per head: the RMSNorm backward
    dx_hand = (merge(attn, dq) @ attn.q.weight.data + merge(attn, dk) @ attn.k.weight.data
               + merge(attn, dv) @ attn.v.weight.data)
    print("written out - MultiheadSelfAttention.backward:", np.abs(dx_hand - dx_layer).max())
    assert np.abs(dx_hand - dx_layer).max() < 1e-12
    """),
    md(r"""
    The norm's step is exactly the RMSNorm step-through of the RMSNorm notebook, with one
    head's raw queries as its input and $\bar{\hat{q}}$ as its upstream gradient:
    """),
    code(r"""
    q_raw = heads(attn, attn.q(x))                           # (B, H, T, D), before the norm
    st = step_through("rmsnorm", q_raw[0, 1], gamma=attn.q_norm.gamma.data, dy=dq_hat[0, 1])
    print("head 1: tape's dL/dq - the attention's:", np.abs(st.tape["x"].grad - dq[0, 1]).max())
    print(st.text(parts=("checks",)).splitlines()[-1])
    """),
    md(r"""
    ### The gradient check

    Both norms, with and without the causal mask; every weight random, the norms' weights and
    biases too; float64, a random upstream gradient:
    """),
    code(r"""
    xs = rng.standard_normal((2, 3, 8))
    for qk_norm in ("rmsnorm", "layernorm"):
        for causal in (False, True):
            a = nc.MultiheadSelfAttention(8, 2, causal=causal, qk_norm=qk_norm, rng=4)
            for name, p in a.named_parameters():
                if "norm" in name:
                    p.data[...] = rng.uniform(0.5, 1.5, p.shape) if name.endswith("weight") else rng.normal(0, 0.5, p.shape)
            report = nc.gradcheck(a, xs)
            worst = max(report.errors.values())
            print(f"{qk_norm:<10} causal={causal!s:<5} {len(report.checks)} gradients, worst rel error {worst:.1e}",
                  "pass" if report.passed else "FAIL")
            assert report.passed
    """),
    question(r"""
    Without QK-norm, normcore's attention has no key bias: its gradient would be exactly 0.
    With QK-norm the key projection has one, and the gradient check above measures its
    gradient. What changed?
    """, r"""
    Without the norm a key bias $b_k$ adds $q_i \cdot b_k$ to every logit of row $i$, the same
    constant for every key $j$, and softmax ignores a constant added to a whole row: $b_k$
    cannot change the output. With QK-norm the bias is added *before* the norm:
    $\hat{k}_j = \operatorname{Norm}(k_j + b_k)$ is not $\hat{k}_j$ plus a constant, so the
    logits change differently for each key and $b_k$ matters (a LayerNorm `k_norm`'s own bias
    $\beta_k$, added after the norm, is the per-row constant again, and normcore leaves it out).
    """),
    code(r"""
    plain = nc.MultiheadSelfAttention(8, 2, rng=4)
    normed = nc.MultiheadSelfAttention(8, 2, qk_norm="rmsnorm", rng=4)
    normed(xs)
    normed.backward(rng.standard_normal(xs.shape))
    print("key bias without QK-norm:", plain.k.bias, "  with:", normed.k.bias.shape,
          " its gradient, largest |.|:", np.abs(normed.k.bias.grad).max().round(4))
    """),
    md(r"""
    ### The classic mistakes, and a published variant

    **The norm over the whole projection instead of per head.** This one is not a mistake in
    general: it is OLMo 2's design (its `q_norm` and `k_norm` are RMSNorms over all
    $C = H \cdot D$ channels, applied before the split into heads). It is a different layer from
    the per-head one this notebook and the `qk_norm` exercise ask for, and two things change.
    One RMS for all heads lets the heads trade scale: below, head 0's query weights are 10 times
    head 1's. Per head, each head's normalised queries have RMS 1. Over the whole projection,
    head 0 takes almost all of the budget and head 1's queries shrink towards 0, so its logits
    shrink and its attention flattens towards uniform ($1/T = 0.2$ for each of the 5 keys). And
    the per-head bound loosens: one head's share of $\|\hat{q}\|^2 \le C$ can be all of it, so a
    head's logits are bounded by $H\sqrt{D}\max|\gamma_q|\max|\gamma_k|$, $H$ times the
    per-head bound.
    """),
    code(r"""
    a = nc.MultiheadSelfAttention(8, 2, qk_norm="rmsnorm", rng=0)
    a.q.weight.data[:4] *= 10                                   # the rows of Wq that make head 0's queries
    q = a.q(x)                                                  # (B, T, C)
    per_head = a.q_norm(heads(a, q))
    whole = heads(a, nc.RMSNorm(8)(q))                          # OLMo 2's way: one RMS over all 8 channels
    def rms(t):                                                 # per head
        return np.sqrt((t ** 2).mean(axis=(0, 2, 3)))

    print("RMS of the normalised queries, per head -- per-head norm:", rms(per_head), " whole-projection norm:", rms(whole))
    k_hat = a.k_norm(heads(a, a.k(x)))
    S_whole = whole @ k_hat.swapaxes(-1, -2) / np.sqrt(a.head_dim)
    P_whole = np.exp(S_whole - S_whole.max(-1, keepdims=True))
    P_whole /= P_whole.sum(-1, keepdims=True)
    _, right = attend(a, x)
    for name, S_, P_ in (("per-head norm", right["S"], right["P"]), ("whole-projection norm", S_whole, P_whole)):
        print(f"head 1, {name:<21}: max |S| = {np.abs(S_[0, 1]).max():.3f}, attention weights from "
              f"{P_[0, 1].min():.3f} to {P_[0, 1].max():.3f}")
    """),
    md(r"""
    **The norm after the $1/\sqrt{D}$ scaling.** Normalising $q/\sqrt{D}$ instead of $q$ undoes
    the scaling, since RMSNorm ignores the scale of its input: the logits come out $\sqrt{D}$
    times too large, and the bound becomes $D\max|\gamma_q|\max|\gamma_k|$.
    """),
    code(r"""
    a = nc.MultiheadSelfAttention(8, 2, qk_norm="rmsnorm", rng=0)
    q, k = heads(a, a.q(x)), heads(a, a.k(x))
    D = a.head_dim
    right = a.q_norm(q) @ a.k_norm(k).swapaxes(-1, -2) / np.sqrt(D)
    after = a.q_norm(q / np.sqrt(D)) @ a.k_norm(k).swapaxes(-1, -2)
    print("scaled after the norm / before: from", (after / right).min().round(6), "to", (after / right).max().round(6),
          "  sqrt(D) =", np.sqrt(D))
    """),
    md(r"""
    **Skipping the norm's backward.** Handing $\bar{\hat{q}}$ and $\bar{\hat{k}}$ straight to the
    projections (as if the norm were not there) gives an input gradient that is wrong by a
    relative error of order 1, and $\gamma_q$, $\gamma_k$ get no gradient (theirs is computed in
    the norm's backward, which the slip never runs):
    """),
    code(r"""
    dx_skipped = (merge(attn, dq_hat) @ attn.q.weight.data + merge(attn, dk_hat) @ attn.k.weight.data
                  + merge(attn, dv) @ attn.v.weight.data)
    skipped_error = nc.rel_error(dx_skipped, dx_layer)
    print(f"norm's backward skipped: relative error of dx {skipped_error:.2f}")
    print("gamma_q's gradient in the right backward (the slip has none):", dgamma_q)
    """),

    # --- 3. Peri-LN ----------------------------------------------------------------------------
    md(r"""
    ## 3. Peri-LN: a norm on both sides of each branch

    ### A concrete example

    A Transformer block adds two branches to its residual stream $x$: attention, then the
    feed-forward, each written $F$ here. Three placements of the norm:

    | position | forward | backward |
    |---|---|---|
    | Post-LN | $y = \operatorname{Norm}(x + F(x))$ | $\bar{z} = \operatorname{Norm}'(\bar{y}),\ \bar{x} = \bar{z} + F'(\bar{z})$ |
    | Pre-LN | $y = x + F(\operatorname{Norm}(x))$ | $\bar{x} = \bar{y} + \operatorname{Norm}'(F'(\bar{y}))$ |
    | Peri-LN | $y = x + \operatorname{Norm}_\text{out}(F(\operatorname{Norm}_\text{in}(x)))$ | $\bar{x} = \bar{y} + \operatorname{Norm}_\text{in}'(F'(\operatorname{Norm}_\text{out}'(\bar{y})))$ |

    ($G'(g)$ is $G$'s backward applied to $g$.) Peri-LN, the "sandwich" norm of Gemma 2 and 3
    (studied by Kim et al. 2025), keeps Pre-LN's identity path $x \to y$ and normalises what
    each branch adds. With RMSNorm and $\gamma_\text{out} = 1$, each branch adds a vector of
    RMS exactly 1 to each token, whatever $F$ computes.

    Stack 12 blocks ($d_\text{model} = 16$, RMSNorm) at normcore's initialisation and follow
    the RMS of the stream after each block; then multiply every projection weight by $c = 3$
    and $c = 10$, as if the weights had grown in training.
    """),
    code(r"""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 8, 16))

    def stack(position, c, depth=12):
        blocks = [nc.TransformerBlock(16, 2, norm="rmsnorm", position=position, rng=i) for i in range(depth)]
        for block in blocks:
            for name, p in block.named_parameters():
                if name.endswith("weight") and "norm" not in name:
                    p.data *= c
        return blocks

    def token_rms(h):
        return np.sqrt((h ** 2).mean(-1))                       # (B, T)

    stream = {}
    for position in ("pre", "peri"):
        for c in (1, 3, 10):
            h, stream[position, c] = x, []
            for block in stack(position, c):
                h = block(h)
                stream[position, c].append(np.sqrt((h ** 2).mean()))
            print(f"{position:<5} c={c:<3} stream RMS after blocks 1, 4, 8, 12:",
                  np.round(np.array(stream[position, c])[[0, 3, 7, 11]], 2))
    """),
    md(r"""
    Two things to read. With the weights scaled by $c$, Pre-LN's stream grows with them
    (roughly as $c^2$: each branch is two linear maps deep), while Peri-LN's hardly moves. But at
    $c = 1$, normcore's initialisation, Peri-LN's stream is the *larger* one: each of its
    branches adds exactly RMS 1 to every token, while a Pre-LN branch at initialisation adds
    less on average (some tokens get more, some less). So Peri-LN
    does not keep the stream smaller at initialisation; what it does is cap what a branch can
    add, independently of the weights. Each token's RMS after $l$ blocks is at most its initial
    RMS plus $2l$ (the triangle inequality, two branches per block):
    """),
    code(r"""
    blocks = stack("peri", 10)
    h = x
    added = []
    for depth, block in enumerate(blocks, start=1):
        out = block.norm1_out(block.attn(block.norm1(h)))        # what the attention branch adds
        added.append(token_rms(out))
        h = block(h)
        assert np.all(token_rms(h) <= token_rms(x) + 2 * depth)
    print("Peri-LN, c = 10: RMS each attention branch adds per token, from", np.min(added).round(6),
          "to", np.max(added).round(6))
    pre_block = stack("pre", 1)[0]
    pre_added = token_rms(pre_block.attn(pre_block.norm1(x)))
    pre_added_rms = np.sqrt((pre_added ** 2).mean())
    print("Pre-LN, c = 1: RMS the first attention branch adds, per token from", pre_added.min().round(3),
          "to", pre_added.max().round(3), " over all tokens", pre_added_rms.round(3))
    growth = {(p, c): stream[p, c][-1] / stream[p, 1][-1] for p in ("pre", "peri") for c in (3, 10)}
    print("final stream RMS, c = 3 and 10 against c = 1: Pre-LN", round(growth["pre", 3], 1), round(growth["pre", 10], 1),
          " Peri-LN", round(growth["peri", 3], 2), round(growth["peri", 10], 2))
    assert all(0.5 * c ** 2 < growth["pre", c] < 2 * c ** 2 and 0.8 < growth["peri", c] < 1.2 for c in (3, 10))
    assert stream["peri", 1][-1] > stream["pre", 1][-1] and pre_added_rms < 1
    """),
    md(r"""
    ### The backward, written out

    Reading the backward column: the output norm's backward sits *on the branch*, before $F$'s
    backward, and the identity path passes $\bar{y}$ to $x$ untouched, as in Pre-LN. The block
    written out with its own children, forward and backward, against `TransformerBlock`:
    """),
    code(r"""
    block = nc.TransformerBlock(8, 2, position="peri", rng=5)
    xb = rng.standard_normal((2, 4, 8))
    dy = rng.standard_normal(xb.shape)
    y_block = block(xb)
    dx_block = block.backward(dy)

    h = xb + block.norm1_out(block.attn(block.norm1(xb)))               # attention branch
    y_hand = h + block.norm2_out(block.ffn(block.norm2(h)))             # feed-forward branch
    dh = dy + block.norm2.backward(block.ffn.backward(block.norm2_out.backward(dy)))
    branch = block.norm1.backward(block.attn.backward(block.norm1_out.backward(dh)))
    dx_hand = dh + branch                                               # identity path + branch
    print("forward, written out - block:", np.abs(y_hand - y_block).max())
    print("backward, written out - block:", np.abs(dx_hand - dx_block).max())
    assert np.abs(y_hand - y_block).max() < 1e-12 and np.abs(dx_hand - dx_block).max() < 1e-12
    """),
    question(r"""
    In a Peri-LN block, the feed-forward's output weights grow by a factor 100. What happens
    to the gradient that reaches $F$ through $\operatorname{Norm}_\text{out}$?
    """, r"""
    It shrinks by the same factor 100. RMSNorm ignores the scale of its input, so its output
    does not change, and its backward divides by the input's RMS: $\bar{z} = r\,(g - \hat{z}
    \operatorname{mean}(g\hat{z}))$ with $r = 1/\operatorname{RMS}(z)$, 100 times smaller.
    A branch whose output grows gets a proportionally smaller gradient at its output; in
    Pre-LN the gradient at $F$'s output is $\bar{y}$ itself, whatever $F$'s scale.
    Measured below on `norm2_out` of an RMSNorm Peri-LN block.
    """),
    code(r"""
    block = nc.TransformerBlock(8, 2, norm="rmsnorm", position="peri", rng=5)
    z = block.ffn(block.norm2(xb))
    grads_out = []
    for scale in (1, 100):
        block.norm2_out(scale * z)
        grads_out.append(block.norm2_out.backward(dy))
    print("gradient into F, scale 1 / scale 100: from", (grads_out[0] / grads_out[1]).min().round(6),
          "to", (grads_out[0] / grads_out[1]).max().round(6))
    """),
    md(r"""
    ### The gradient check

    A Peri-LN block with each norm, every weight random (the norms' too), float64, a random
    upstream gradient:
    """),
    code(r"""
    xs = rng.standard_normal((2, 3, 4))
    for norm in ("layernorm", "rmsnorm"):
        block = nc.TransformerBlock(4, 2, d_ff=6, norm=norm, position="peri", rng=0)
        for name, p in block.named_parameters():
            if name.startswith("norm"):
                p.data[...] = rng.uniform(0.5, 1.5, p.shape) if name.endswith("weight") else rng.normal(0, 0.5, p.shape)
        report = nc.gradcheck(block, xs)
        print(f"peri {norm:<10} {len(report.checks)} gradients, worst rel error {max(report.errors.values()):.1e}",
              "pass" if report.passed else "FAIL")
        assert report.passed
    """),

    # --- 4. RMSNorm against LayerNorm ----------------------------------------------------------
    md(r"""
    ## 4. RMSNorm against LayerNorm

    Every layer above works with either norm (`qk_norm="rmsnorm"` or `"layernorm"`,
    `TransformerBlock(norm=...)`), and LLaMA-style models use RMSNorm: it skips the mean,
    one reduction instead of two, and keeps the row's offset from zero. The two agree exactly
    on rows of mean zero and drift apart as the mean grows against the spread. The
    [RMSNorm notebook](rmsnorm.ipynb) derives it node by node and measures what it gives up;
    here only how fast they drift apart, on one row shifted by a growing fraction of its spread:
    """),
    code(r"""
    rng = np.random.default_rng(3)
    row = rng.standard_normal((1, 64))
    row = (row - row.mean()) / row.std()                        # mean 0, spread 1
    rms_ln = nc.RMSNorm(64, elementwise_affine=False), nc.LayerNorm(64, elementwise_affine=False, eps=0)
    gap = {}
    for shift in (0.0, 0.1, 0.3, 1.0):
        gap[shift] = np.abs(rms_ln[0](row + shift) - rms_ln[1](row + shift)).max()
        print(f"mean / spread = {shift:<4} largest |RMSNorm - LayerNorm| = {gap[shift]:.3f}")
    assert gap[0.0] < 1e-12 and gap[0.1] < gap[0.3] < gap[1.0]
    """),

    md(r"""
    ## 5. Figures: what the papers claim, measured at this scale

    From the experiments (`normcore figures NAME`; each claim is asserted by a test on the
    measured numbers). These are small models trained for a few hundred steps on synthetic
    tasks, so read each verdict as "at this scale".

    **Does LayerNorm act like a tanh?** (`layernorm_tanh`). Each element's LayerNorm input
    against its normalised output, in a trained 8-block Pre-LN model (top) and untrained
    (bottom). Per token, no: each token is an exact straight line of slope $1/\sigma_{token}$, as
    section 1 showed. Across tokens the cloud bends only slightly, because here the tokens'
    spreads differ by less than a factor of 2: a fitted $c\tanh(\alpha x)$ beats the best
    straight line in every layer, but by at most 0.005 in $R^2$ (the straight line alone explains
    88-98% of the variance). The pronounced S of the DyT paper needs extreme tokens this toy model
    does not have.

    ![Each LayerNorm's input against its normalised output, with the fitted tanh](../figures/layernorm_tanh.png)

    **DyT in place of LayerNorm** (`dyt_training`). At one shared Adam learning rate a 4-block
    Pre-LN model trains with DyT as with LayerNorm and RMSNorm, but ends about 5 times higher in
    loss, from each of three initialisations; too large an `alpha_init` leaves it at the chance
    loss. At that learning rate, chosen at 4 blocks from one initialisation, the largest that
    trains is 2 at 2 blocks and 0.5 at 8; whether depth itself lowers that limit, or the one rate
    suits 8 blocks worse, is not tested. The paper's match with LayerNorm does not reproduce here;
    its warning about a large `alpha_init` does.

    ![Training curves with LayerNorm, RMSNorm and DyT](../figures/dyt_training.png)

    **QK-norm** (`qk_norm`). Without it, a 2-block model trained with Adam and no warmup fails
    from lr 0.1 on, its largest logit above $10^4$. With it the largest logit still grows with
    the learning rate, from about 3 at lr $10^{-4}$ to about 200 (RMSNorm) and 500 (LayerNorm) at lr 1, but it stays below the
    bound of section 2 (computed from the learned gains and biases, which grow in training), and
    the model trains up to lr 0.22 instead of 0.046: QK-norm slows the growth and widens the range
    of rates that train, it does not stop the growth. It does not make every learning rate safe
    either: from 0.46 on it fails too.

    ![Final loss against learning rate, and the largest attention logit, with and without QK-norm](../figures/qk_norm.png)

    **Peri-LN** (`peri_ln`). At initialisation and at a standard learning rate Peri-LN's residual
    stream is as large as Pre-LN's or larger (section 3's "each branch adds RMS 1"); only at a high
    learning rate (6e-2) does it keep the stream in scale (6-9 times the embeddings' RMS against
    Pre-LN's 200-360) and learn part of the task where Pre-LN stalls. That the growth is what
    stalls Pre-LN is not tested: attention collapsing onto single keys, seen in the QK-norm
    experiment, is another candidate, and the Peri-LN experiment does not measure the attention.

    ![Residual-stream RMS and gradient norm per block for Post-LN, Pre-LN, Peri-LN and DeepNorm](../figures/peri_ln.png)

    **RMSNorm against LayerNorm** (`rmsnorm_vs_layernorm`). The final losses of five
    initialisations overlap, and which norm ends lower changes from one to the next. The norm
    alone takes about 30% less time as RMSNorm, a whole training step only 4-6% less. The nine
    norms are 5-6% of a step, so their saving alone predicts about 2%; the experiment does not
    identify where the rest comes from.

    ![Loss curves and final losses of LayerNorm and RMSNorm](../figures/rmsnorm_vs_layernorm.png)
    """),

    md(r"""
    ## Summary

    * **DyT** replaces the statistics of LayerNorm by $\gamma\tanh(\alpha x) + \beta$: the
      squashing LayerNorm applies to extreme values, value by value. LayerNorm itself is linear
      within each token; across tokens its S-curve was slight here ($R^2$ up by at most 0.005 for
      a tanh over a straight line). DyT's backward is element-wise,
      $\bar{x} = \alpha\,\bar{y}\,\gamma\,(1 - t^2)$; $\bar{\alpha}$ sums over every element,
      and tanh's derivative is written with its output $t$.
    * **QK-norm** normalises each head's queries and keys over its $D$ channels, before the
      $1/\sqrt{D}$ scaling; with RMSNorm or a bias-free LayerNorm the logits are then bounded by
      $\sqrt{D}\max|\gamma_q|\max|\gamma_k|$, whatever the projection weights (a LayerNorm bias
      $\beta_q$ adds up to $\|\beta_q \odot \gamma_k\|$). The gains are learned, so the bound
      can grow in training: the logits grow more slowly, they do not stop growing. Its backward is the norm's backward, per head, between
      $\bar{\hat{q}}$ (from the attention) and the projection.
    * **Peri-LN** normalises each branch's output too: the identity path stays untouched, and a
      branch adds at most a norm's worth to the stream, however large its weights grow (at
      initialisation its stream is not smaller than Pre-LN's). The output norm's backward
      divides a growing branch's gradient.
    * **RMSNorm or LayerNorm** inside them: either works; RMSNorm is the cheaper one.
    """),

    # --- references: the entries of normcore/bibliography.toml this notebook's source cites ----
    md(notebook_references(__file__)),
]
