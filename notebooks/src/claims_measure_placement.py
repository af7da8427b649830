"""The cells that measure the claims notebook's rows on where the norm sits (Pre-Norm and Post-
Norm): the identity path, the output's size, depth and width.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_placement.py with that
id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py asserts the
row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "encoder-decoder": r'''
        rng = np.random.default_rng(50)
        memory, x = rng.standard_normal((2, 5, 32)), rng.standard_normal((2, 7, 32))
        gaps = {}
        for position in ("post", "pre"):
            block = nc.TransformerDecoderBlock(32, 4, position=position, rng=rng)
            ln1, ln2, ln3, ffn = block.norm1, block.norm2, block.norm3, block.ffn
            masked_multi_head_attention = block.self_attn              # causal
            multi_head_attention = lambda q, kv: block.cross_attn(q, kv, kv)
            if position == "post":                                     # W3's Post-LN decoder
                h = ln1(x + masked_multi_head_attention(x))
                h = ln2(h + multi_head_attention(h, memory))
                h = ln3(h + ffn(h))
            else:                                                      # W3's Pre-LN decoder
                h = x + masked_multi_head_attention(ln1(x))
                h = h + multi_head_attention(ln2(h), memory)
                h = h + ffn(ln3(h))
            gaps[position] = np.abs(block(x, memory) - h).max()
            print(tr("{position}: TransformerDecoderBlock vs the pseudo-code: {gaps:.1e}").format(
                position=position, gaps=gaps[position]))
        models = {position: nc.TinySeq2Seq(10, 10, 32, 1, 4, 5, 7, position=position, rng=0)
                  for position in ("post", "pre")}
        final_norms = {position: [hasattr(model, name) for name in ("enc_norm", "dec_norm")]
                       for position, model in models.items()}
        print(tr("TinySeq2Seq has a final encoder norm, decoder norm:"), final_norms)
        ''',
    "post-identity-weight": r'''
        xs = residual_stack("post", 8)
        weight = x0_weight(xs)
        theory = 2.0 ** (-np.arange(9) / 2)
        print(tr("weight of x_0 in x_l, l = 0..8:\n"), weight.round(3))
        print("2^(-l/2):\n", theory.round(3))
        ''',
    "post-fixed-size": r'''
        rms = {pos: np.sqrt((residual_stack(pos, 8) ** 2).mean(axis=(1, 2)))
               for pos in ("post", "pre")}
        for pos, values in rms.items():
            print(tr("{pos:4s} rms of x_l, l = 0..8:").format(pos=pos), values.round(2))
        ''',
    "pre-identity-path": r'''
        xs = residual_stack("pre", 8)
        weight = x0_weight(xs)
        rms = np.sqrt((xs ** 2).mean(axis=(1, 2)))
        print(tr("weight of x_0:"), weight.round(3))
        print(pad(tr("rms of x_l:"), 14), rms.round(3))
        print("sqrt(1 + l):  ", np.sqrt(1 + np.arange(9)).round(3))
        rng = np.random.default_rng(23)
        gain = {}
        for depth in (2, 8, 32):
            x, dy = rng.standard_normal((2, 4, 8, 32))
            dx = input_gradient(transformer_stack("pre", depth), x, dy)
            gain[depth] = float(np.linalg.norm(dx) / np.linalg.norm(dy))
        print(tr("|dL/dx_0| / |dL/dy|, Pre-LN, 2, 8, 32 blocks:"),
              [round(v, 2) for v in gain.values()])
        ''',
    "pre-gradient-identity": r'''
        branch_share = {}
        for depth in (2, 8, 32):
            shares = []
            for seed in range(4):
                rng = np.random.default_rng(34 + seed)
                x, dy = rng.standard_normal((2, 4, 8, 32))
                dx = input_gradient(transformer_stack("pre", depth, seed=34 + seed), x, dy)
                shares.append(np.linalg.norm(dx - dy) / np.linalg.norm(dy))
            branch_share[depth] = np.array(shares)
        print(tr("|branches' part of dL/dx_0| / |identity's part (dL/dy)|, 4 initialisations:"))
        for depth, shares in branch_share.items():
            print(tr("{depth:2d} blocks:").format(depth=depth), shares.round(2))
        ''',
    "pre-wider-not-deeper": r'''
        xs = residual_stack("pre", 16)
        n = np.linalg.norm(xs, axis=-1)
        cosine = ((xs[:-1] * xs[1:]).sum(-1) / (n[:-1] * n[1:])).mean(axis=1)
        theory = np.sqrt((1 + np.arange(16)) / (2 + np.arange(16)))
        print("cos(x_l, x_l+1), l = 0, 3, 7, 15:", cosine[[0, 3, 7, 15]].round(3))
        print("sqrt((1+l)/(2+l)):               ", theory[[0, 3, 7, 15]].round(3))
        ''',
    "depth-vs-width": r'''
        def pieces(f, n=2 ** 12):
            "Linear pieces of a piecewise-linear f on [0, 1]: the changes of slope, plus one."
            grid = np.linspace(0.0, 1.0, n + 1)                # holds every kink below
            slope = np.diff(f(grid)) * n
            return int(np.sum(np.abs(np.diff(slope)) > 1e-6)) + 1
        tent = lambda x: 2 * np.maximum(x, 0) - 4 * np.maximum(x - 0.5, 0)   # two ReLUs
        def deep(x, depth):
            for _ in range(depth):
                x = tent(x)
            return x
        counted = {depth: pieces(lambda x: deep(x, depth)) for depth in (1, 4, 8)}
        for depth, n in counted.items():
            print(tr("{depth} layers of 2 ReLUs ({value} ReLUs): {n} pieces; one hidden layer needs {value2} ReLUs").format(
                depth=depth, value=2 * depth, n=n, value2=n - 1))
        ''',
}
