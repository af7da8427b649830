"""The cells that measure the claims notebook's rows on RMSNorm: no centring, its printed example,
its normaliser, its cost, its parameters, the models that use it.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_rmsnorm.py with that
id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py asserts the
row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "rms-printed": r'''
        x = np.array([[[ 0.8744, -1.4011, -1.2448, -0.8057],
                       [ 1.6685, -0.5629,  0.2041,  0.4760]],
                      [[ 1.4454,  1.2081,  1.7494,  0.1720],
                       [ 1.2395,  1.7557, -0.1404,  2.2577]]])
        printed = np.array([[[ 0.7879, -1.2625, -1.1217, -0.7260],
                             [ 1.8181, -0.6133,  0.2224,  0.5186]],
                            [[ 1.1220,  0.9378,  1.3579,  0.1335],
                             [ 0.7945,  1.1254, -0.0900,  1.4471]]])
        y = nc.RMSNorm(4, eps=1e-5)(x)
        print(y)
        same = digits_equal(y, printed)
        print(tr("from the printed input: {same} of {size} entries equal to 4 decimals").format(
            same=same, size=y.size))
        x_found = reproduce_printed(nc.RMSNorm(4, eps=1e-5), x, printed)
        same_found = digits_equal(nc.RMSNorm(4, eps=1e-5)(x_found), printed)
        print(tr("from an input within {max:.1e} of it: {same_found} of {size}").format(
            max=np.abs(x_found - x).max(), same_found=same_found, size=y.size))
        ''',
    "rms-no-centring": r'''
        rng = np.random.default_rng(18)
        x = rng.standard_normal((500, 16)) + 5.0
        rms = nc.RMSNorm(16, eps=1e-5, elementwise_affine=False)
        ln = nc.LayerNorm(16, elementwise_affine=False)
        rms_mean, ln_mean = rms(x).mean(), ln(x).mean()
        print(tr("output mean: RMSNorm"), rms_mean.round(3), " LayerNorm", ln_mean.round(12))
        centred = x - x.mean(axis=1, keepdims=True)
        centred_gap = np.abs(rms(centred) - ln(x)).max()
        print(tr("RMSNorm(centred x) - LayerNorm(x):"), centred_gap)
        ''',
    "mean-square-is-variance": r'''
        x = np.random.default_rng(30).normal(2.0, 1.0, size=(1, 1000))
        ms, var, mean = (x ** 2).mean(), x.var(), x.mean()
        print(tr("mean square {ms:.4f}, variance {var:.4f}, variance + mean^2 {value:.4f}").format(
            ms=ms, var=var, value=var + mean ** 2))
        ''',
    "relu-mean-zero": r'''
        z = np.maximum(np.random.default_rng(31).standard_normal((1000, 256)), 0.0)
        relu_mean, relu_rms = z.mean(), np.sqrt((z ** 2).mean())
        out = nc.RMSNorm(256, elementwise_affine=False)(z)
        print(tr("ReLU output: mean {relu_mean:.3f}, rms {relu_rms:.3f}, 1/sqrt(2 pi) = {value:.3f}").format(
            relu_mean=relu_mean, relu_rms=relu_rms, value=1 / np.sqrt(2 * np.pi)))
        print(tr("mean of RMSNorm's output after the ReLU: {mean:.3f}").format(mean=out.mean()))
        ''',
    "rms-batch-size-normaliser": r'''
        rng = np.random.default_rng(19)
        d = 4
        ratios = {}
        for b in (2, 8):
            x = rng.standard_normal((b, 3, d))
            wrong = x / np.sqrt((x ** 2).sum(-1, keepdims=True) / b)
            right = nc.RMSNorm(d, eps=0.0)(x)
            ratios[b] = (wrong / right).mean()
            print(tr("b={b}: written-up / normcore = {ratios:.4f}, sqrt(b/d) = {sqrt:.4f}").format(b=b, ratios=ratios[b], sqrt=np.sqrt(b / d)))
        ''',
    "rms-over-whole-tensor": r'''
        x = np.array([[0.1, -0.2, 0.15, 0.05],
                      [2.0, -1.0, 1.5, -2.5]])
        whole = x / np.sqrt((x ** 2).mean() + 1e-5)
        right = nc.RMSNorm(4, eps=1e-5)(x)
        row_rms = lambda a: np.sqrt((a ** 2).mean(axis=1))
        print(tr("row RMS, whole-matrix version:"), row_rms(whole))
        print(pad(tr("row RMS, normcore RMSNorm:"), 30), row_rms(right))
        ''',
    "rms-cheaper": r'''
        from normcore.experiments.speed import count_passes
        rng = np.random.default_rng(20)
        small_x, small_dy = rng.standard_normal((64, 256)), rng.standard_normal((64, 256))
        passes_ln = count_passes(nc.LayerNorm(256), small_x, small_dy)
        passes_rms = count_passes(nc.RMSNorm(256), small_x, small_dy)
        print(tr("passes over the data (forward, backward): LayerNorm"), passes_ln,
              " RMSNorm", passes_rms)
        ''',
    "rms-keeps-performance": r'''
        def final_loss(Norm, seed, steps=60):
            rng = np.random.default_rng(seed)
            x = rng.standard_normal((256, 16))
            target = np.sin(3 * x @ rng.standard_normal((16, 1)) / 4)
            net = nc.Sequential(nc.Linear(16, 64, rng=rng), Norm(64), nc.Tanh(),
                                nc.Linear(64, 1, rng=rng))
            loss, opt = nc.MSELoss(), nc.Adam(net.parameters(), lr=1e-2)
            for _ in range(steps):
                opt.zero_grad()
                value = loss(net(x), target)
                net.backward(loss.backward())
                opt.step()
            return float(value), float(target.var())
        runs = {name: np.array([final_loss(Norm, s) for s in range(3)])
                for name, Norm in [("LayerNorm", nc.LayerNorm), ("RMSNorm", nc.RMSNorm)]}
        print(tr("variance of the targets (the loss of predicting their mean):"),
              runs["LayerNorm"][:, 1].round(3))
        for name, values in runs.items():
            print(tr("{name:9s} final training loss, 3 initialisations:").format(
                name=name), values[:, 0].round(4))
        ratio = runs["RMSNorm"][:, 0] / runs["LayerNorm"][:, 0]
        print(tr("RMSNorm / LayerNorm, each initialisation:"), ratio.round(3))
        ''',
    "rms-half-parameters": r'''
        count = lambda m: sum(p.data.size for p in m.parameters())
        n_rms, n_ln = count(nc.RMSNorm(768)), count(nc.LayerNorm(768))
        print("RMSNorm(768):", n_rms, " LayerNorm(768):", n_ln)
        ''',
    "rms-vanishing-gradients": r'''
        def layer_gradients(Norm, seed, depth=16, d=64):
            rng = np.random.default_rng(seed)
            layers = []
            for _ in range(depth):
                layers += [nc.Linear(d, d, rng=rng), Norm(d), nc.Tanh()]
            net = nc.Sequential(*layers)
            y = net(rng.standard_normal((32, d)))
            net.backward(rng.standard_normal(y.shape))
            return np.array([np.linalg.norm(l.weight.grad) for l in layers[::3]])
        seeds = range(21, 27)
        g_ln = np.array([layer_gradients(nc.LayerNorm, s) for s in seeds])  # (seeds, layers)
        g_rms = np.array([layer_gradients(nc.RMSNorm, s) for s in seeds])
        grad_ratio = g_rms / g_ln
        growth = {"LayerNorm": g_ln[:, 0] / g_ln[:, -1], "RMSNorm": g_rms[:, 0] / g_rms[:, -1]}
        print(tr("weight-gradient norm, layer 1 / layer 16, 6 initialisations:"))
        for name, values in growth.items():
            print(f"  {name:9s}", values.round(1))
        print(tr("RMSNorm / LayerNorm, every layer and initialisation: from"),
              grad_ratio.min().round(2), tr("to"), grad_ratio.max().round(2))
        ''',
    "float32-compute": r'''
        x16 = np.array([[300.0, -200.0, 100.0, 50.0]], dtype=np.float16)
        with np.errstate(over="ignore"):
            naive = x16 / np.sqrt((x16 ** 2).mean(axis=-1, keepdims=True) + np.float16(1e-6))
        ours = nc.RMSNorm(4, eps=1e-6)(x16)
        exact = nc.RMSNorm(4, eps=1e-6)(x16.astype(np.float64))
        print(tr("float16 all the way:"), naive)
        print(pad(tr("normcore:"), 20), ours, ours.dtype)
        fp16_gap = np.abs(ours.astype(np.float64) - exact).max()
        print(tr("normcore (float16) - float64:"), fp16_gap.round(5))
        ''',
    "gpt4-rmsnorm": r'''
        def norm_kinds(parameter_names):
            "What a norm's parameters in a checkpoint allow it to be."
            if parameter_names is None:
                return tr("nothing to inspect: no weights published")
            if "bias" in parameter_names:
                return tr("LayerNorm (a gain and a bias)")
            return tr("RMSNorm, or a LayerNorm without bias (a gain only)")
        names = lambda layer: [n for n, _ in layer.named_parameters()]
        kinds = {"normcore LayerNorm": norm_kinds(names(nc.LayerNorm(8))),
                 "normcore RMSNorm": norm_kinds(names(nc.RMSNorm(8))),
                 "GPT-4": norm_kinds(None)}
        for model, kind in kinds.items():
            print(f"{model:18s} {kind}")
        ''',
    "palm-rmsnorm": r'''
        rms, ln_no_bias = nc.RMSNorm(8), nc.LayerNorm(8, bias=False)
        for name, layer in [("RMSNorm", rms), ("LayerNorm(bias=False)", ln_no_bias)]:
            print(tr("{name:22s} parameters:").format(
                name=name), [(n, p.data.shape) for n, p in layer.named_parameters()])
        x = np.random.default_rng(40).normal(2.0, 1.0, (3, 8))
        bias_free_gap = np.abs(rms(x) - ln_no_bias(x)).max()
        print(tr("the same parameters, outputs on rows of mean 2 differ by up to"), bias_free_gap.round(3))
        ''',
    "llama-hundreds-of-billions": r'''
        def parameters(d, layers, ffn, vocab, kv_width):
            "A Llama model: attention (q and o d x d, k and v d x kv_width), SwiGLU, two norms."
            per_layer = 2 * d * d + 2 * d * kv_width + 3 * d * ffn + 2 * d
            return layers * per_layer + 2 * vocab * d + d   # + embedding, output, final norm
        shapes = {"LLaMA 65B": (8192, 80, 22016, 32000, 8192),
                  "Llama 3.1 405B": (16384, 126, 53248, 128256, 1024)}
        billions, norm_share = {}, {}
        for name, (d, layers, ffn, vocab, kv_width) in shapes.items():
            n = parameters(d, layers, ffn, vocab, kv_width)
            norm = (2 * layers + 1) * d
            billions[name], norm_share[name] = n / 1e9, norm / n
            print(tr("{name:15s} {value:6.1f} billion parameters, RMSNorm gains {value2:.1f} million ({value3:.1e} of them)").format(
                name=name, value=n / 1e9, value2=norm / 1e6, value3=norm / n))
        ''',
    "rms-suits-large-models": r'''
        def parameters(d, layers, ffn, vocab, kv_width):
            "A Llama model: attention (q and o d x d, k and v d x kv_width), SwiGLU, two norms."
            per_layer = 2 * d * d + 2 * d * kv_width + 3 * d * ffn + 2 * d
            return layers * per_layer + 2 * vocab * d + d
        shapes = {"LLaMA 7B": (4096, 32, 11008, 32000, 4096),
                  "LLaMA 65B": (8192, 80, 22016, 32000, 8192),
                  "Llama 3.1 405B": (16384, 126, 53248, 128256, 1024)}
        saved = {}
        for name, (d, layers, ffn, vocab, kv_width) in shapes.items():
            betas = (2 * layers + 1) * d        # what LayerNorm would add
            saved[name] = betas / parameters(d, layers, ffn, vocab, kv_width)
            print(tr("{name:15s} LayerNorm's betas would add {value:4.1f} million parameters: {saved:.1e} of the model").format(
                name=name, value=betas / 1e6, saved=saved[name]))
        ''',
}
