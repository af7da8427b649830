"""The cells that measure the claims notebook's rows on what normalization is for: fixed
distributions, the standard normal, [0, 1], saturation, low precision, large inputs.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_purpose.py with that
id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py asserts the
row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "fixed-distribution": r'''
        rng = np.random.default_rng(0)
        x = rng.standard_normal((256, 8))
        target = np.tanh(x @ rng.standard_normal((8, 1)) * 2) + 3.0
        fc1, bn, fc2 = nc.Linear(8, 16, rng=rng), nc.BatchNorm1d(16), nc.Linear(16, 1, rng=rng)
        net = nc.Sequential(fc1, bn, nc.Tanh(), fc2)
        loss, opt = nc.MSELoss(), nc.SGD(net.parameters(), lr=0.1)
        def bn_output_stats():
            h = bn(fc1(x))
            return h.mean(axis=0), h.std(axis=0)
        mean0, std0 = bn_output_stats()
        for step in range(200):
            opt.zero_grad()
            loss(net(x), target)
            net.backward(loss.backward())
            opt.step()
        mean1, std1 = bn_output_stats()
        shift = np.abs(mean1 - mean0).max()
        spread = np.abs(std1 - std0).max()
        print(tr("BatchNorm output per channel, before training: |mean| <="),
              np.abs(mean0).max().round(4), " " + tr("std"), std0.min().round(4),
              tr("to"), std0.max().round(4))
        print(pad(tr("after 200 SGD steps, largest change of a channel's mean:"), 56), shift.round(3))
        print(pad(tr("after 200 SGD steps, largest change of a channel's std:"), 56), spread.round(3))
        ''',
    "zscore-normal": r'''
        x = np.random.default_rng(32).exponential(3.0, size=(100000, 1))
        z = nc.BatchNorm1d(1, affine=False)(x)
        skew = lambda a: np.mean(((a - a.mean()) / a.std()) ** 3)
        print(tr("after BatchNorm: mean {value:.4f}, std {std:.4f}").format(
            value=round(z.mean(), 4) + 0.0, std=z.std()))
        print(tr("skewness before {value:.3f}, after {value2:.3f} (normal: 0)").format(
            value=skew(x), value2=skew(z)))
        ''',
    "range-0-1": r'''
        rng = np.random.default_rng(1)
        x = rng.standard_normal((1000, 16)) * 5 + 2
        y = nc.LayerNorm(16, elementwise_affine=False)(x)
        print(tr("LayerNorm output range:"), y.min().round(3), tr("to"), y.max().round(3))
        spike = np.zeros((1, 16)); spike[0, 0] = 100.0
        top = nc.LayerNorm(16, elementwise_affine=False)(spike)[0, 0]
        print(tr("one outlier in 16 features:"), top.round(4), " sqrt(15) =", np.sqrt(15).round(4))
        corr = np.corrcoef(x[0], y[0])[0, 1]
        print(tr("correlation of a row with its output (affine map):"), corr.round(12))
        ''',
    "sigmoid-saturation": r'''
        s = 1 / (1 + np.exp(-4.0))
        print("sigmoid(4) =", round(s, 4), " " + tr("slope"), round(s * (1 - s), 4), " " + tr("slope at 0: 0.25"))
        def saturated(with_norm, depth=5, width=100, seed=0):
            rng = np.random.default_rng(seed)
            h, fractions = rng.standard_normal((256, width)), []
            for _ in range(depth):
                z = h @ rng.standard_normal((width, width))  # weights of variance 1
                if with_norm:
                    z = nc.LayerNorm(width, elementwise_affine=False)(z)
                fractions.append(np.mean(np.abs(z) > 4))
                h = 1 / (1 + np.exp(-z))
            return np.array(fractions)
        plain, normed = saturated(False), saturated(True)
        print(pad(tr("fraction of |z| > 4 per layer, plain:"), 41), plain.round(3))
        print(pad(tr("fraction of |z| > 4 per layer, LayerNorm:"), 41), normed.round(4))
        ''',
    "sigmoid-into-saturation": r'''
        rng = np.random.default_rng(49)
        z = rng.normal(3.0, 8.0, size=(10000, 16))   # pre-activations of large mean and spread
        z_hat = nc.BatchNorm1d(16, affine=False)(z)
        sigmoid = lambda a: 1 / (1 + np.exp(-a))
        beyond_4, slope = {}, {}
        for name, a in [(N_("before"), z), (N_("after BatchNorm"), z_hat)]:
            s = sigmoid(a)
            beyond_4[name], slope[name] = np.mean(np.abs(a) > 4), np.mean(s * (1 - s))
            print(tr("{name} share of |z| > 4: {beyond_4:.1e}   mean slope of the sigmoid: {slope:.3f}").format(
                name=pad(tr(name), 16), beyond_4=beyond_4[name], slope=slope[name]))
        ''',
    "low-precision": r'''
        rng = np.random.default_rng(2)
        errors = {}
        for scale in (1.0, 1000.0, 1e-6):
            v = scale * (1 + rng.random(100000))
            errors[scale] = (np.abs(v.astype(np.float16).astype(np.float64) - v) / v).max()
            print(tr("float16 relative rounding error around {scale:7.0e}: max {errors:.2e}").format(
                scale=scale, errors=errors[scale]))
        spacing = {v: float(np.spacing(np.float16(v))) for v in (1.0, 1e-3, 1e-6)}
        print(tr("smallest normal float16:"), np.finfo(np.float16).tiny)
        print(tr("spacing of float16 near 1, 1e-3, 1e-6:"), [f"{d:.1e}" for d in spacing.values()])
        with np.errstate(over="ignore"):
            square = np.float16(300) ** 2
        print("2**-11 =", f"{2.0 ** -11:.2e}", "  2**-24 =", f"{2.0 ** -24:.1e}",
              "  float16(1e-8) =", np.float16(1e-8), "  float16(300)**2 =", square)

        def fp8_e4m3(v):
            """Round to FP8 E4M3: 3 mantissa bits, normal from 2**-6, largest value 448."""
            exponent = np.floor(np.log2(np.maximum(np.abs(v), 2.0 ** -6)))
            step = 2.0 ** (exponent - 3)
            return np.clip(np.round(v / step) * step, -448, 448)

        def per_tensor(v, fmt):
            """v through the format with one scale for the whole tensor (its largest magnitude
            mapped to the format's largest value), scaled back."""
            if fmt == "FP8":
                scale = 448 / np.abs(v).max()
                return fp8_e4m3(v * scale) / scale
            scale = 127 / np.abs(v).max()
            return np.round(v * scale) / scale

        rows = rng.standard_normal((256, 64)) * 10.0 ** rng.uniform(-2, 3, (256, 1))
        data = {N_("raw"): rows, "LayerNorm": nc.LayerNorm(64, elementwise_affine=False)(rows)}
        bad = {}
        for name, v in data.items():
            for fmt in ("FP8", "int8"):
                relative = np.abs(per_tensor(v, fmt) - v) / np.abs(v)
                bad[name, fmt] = (relative > 0.1).mean()
            print(tr("{name} one scale per tensor, entries more than 10% wrong: FP8 {bad:.1%}, int8 {bad2:.1%}").format(
                name=pad(tr(name), 9), bad=bad[name, 'FP8'], bad2=bad[name, 'int8']))
        ''',
    "large-inputs": r'''
        rng = np.random.default_rng(43)
        x = rng.standard_normal((128, 4))
        y = x @ np.array([[1.0], [-2.0], [0.5], [3.0]])
        loss_at, grad_at, max_step = {}, {}, {}
        for scale in (1.0, 100.0):
            fc, mse = nc.Linear(4, 1, rng=np.random.default_rng(44)), nc.MSELoss()
            loss_at[scale] = mse(fc(x * scale), y)
            fc.backward(mse.backward())
            grad_at[scale] = np.linalg.norm(fc.weight.grad)
            curvature = np.linalg.eigvalsh(2 * (x * scale).T @ (x * scale) / len(x)).max()
            max_step[scale] = 2 / curvature            # beyond it gradient descent diverges
            print(tr("inputs x{scale:3.0f}: initial MSE {loss_at:9.1f}, weight gradient {grad_at:8.1f}, largest stable step {max_step:.1e}").format(
                scale=scale, loss_at=loss_at[scale], grad_at=grad_at[scale], max_step=max_step[scale]))
        ''',
}
