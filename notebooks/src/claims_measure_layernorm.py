"""The cells that measure the claims notebook's rows on LayerNorm: its axes, the printed example,
eps, gamma and beta, outlier features, PyTorch's defaults.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_layernorm.py with that
id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py asserts the
row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "ln-axes": r'''
        rng = np.random.default_rng(15)
        x = rng.normal(1.0, 3.0, size=(2, 5, 8))
        ln = nc.LayerNorm(8)
        ln.gamma.data[...], ln.beta.data[...] = rng.standard_normal(8), rng.standard_normal(8)
        mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        formula_gap = np.abs(ln(x) - ((x - mu) / np.sqrt(var + 1e-5) * ln.gamma.data
                                      + ln.beta.data)).max()
        alone_gap = np.abs(ln(x[1:, 2:3]) - ln(x)[1:, 2:3]).max()
        print(tr("LayerNorm - formula:"), formula_gap, " " * 2 + tr("token alone vs in the batch:"), alone_gap)
        ''',
    "ln-printed": r'''
        x = np.array([[[-0.6082, -0.0579,  0.4678,  1.6887],
                       [ 1.5721,  0.6620,  0.4141,  0.5767]],
                      [[ 1.0832, -0.6886,  0.6742,  0.2675],
                       [ 1.5962,  1.1237,  0.3454,  1.3228]]])
        printed = np.array([[[-1.1541, -0.5067,  0.1120,  1.5488],
                             [ 1.6979, -0.3197, -0.8694, -0.5088]],
                            [[ 1.1401, -1.5563,  0.5175, -0.1013],
                             [ 1.0730,  0.0574, -1.6155,  0.4852]]])
        y = nc.LayerNorm(4)(x)
        print(y)
        same = digits_equal(y, printed)
        print(tr("from the printed input: {same} of {size} entries equal to 4 decimals").format(
            same=same, size=y.size))
        x_found = reproduce_printed(nc.LayerNorm(4), x, printed)
        same_found = digits_equal(nc.LayerNorm(4)(x_found), printed)
        print(tr("from an input within {max:.1e} of it: {same_found} of {size}").format(
            max=np.abs(x_found - x).max(), same_found=same_found, size=y.size))
        ''',
    "ln-output-shape": r'''
        x = np.random.default_rng(41).standard_normal((2, 3, 4))   # (batch, seq_len, hidden)
        mu = x.mean(axis=-1, keepdims=True)
        out = nc.LayerNorm(4)(x)
        print(tr("input"), x.shape, " " + tr("mean and variance"), mu.shape, " " + tr("output"), out.shape)
        ''',
    "eps-outside-sqrt": r'''
        eps = 1e-5
        rng = np.random.default_rng(16)
        ratios = {}
        for variance in (1.0, 1e-2, 1e-4, 1e-5, 1e-6):
            row = rng.standard_normal((1, 64))
            row = (row - row.mean()) / row.std() * np.sqrt(variance)
            inside = nc.LayerNorm(64, eps=eps, elementwise_affine=False)(row)
            outside = (row - row.mean()) / (row.std() + eps)
            ratios[variance] = np.abs(outside).mean() / np.abs(inside).mean()
            exact = np.sqrt(variance + eps) / (np.sqrt(variance) + eps)
            print(tr("variance {variance:7.0e}: |eps outside| / |eps inside| = {ratios:.6f}  (sqrt(var + eps) / (std + eps) = {exact:.6f})").format(
                variance=variance, ratios=ratios[variance], exact=exact))
        ''',
    "gamma-beta": r'''
        rng = np.random.default_rng(17)
        x = rng.normal(5.0, 10.0, size=(64, 4))
        bn = nc.BatchNorm1d(4)
        bn.gamma.data[...] = np.sqrt(x.var(axis=0) + bn.eps)
        bn.beta.data[...] = x.mean(axis=0)
        bn_identity_error = np.abs(bn(x) - x).max()
        print(tr("BatchNorm, gamma = sqrt(var + eps), beta = mean: max |y - x| ="),
              f"{bn_identity_error:.1e}")
        x_hat = nc.LayerNorm(4, elementwise_affine=False)(x)
        fits = [np.linalg.lstsq(np.c_[x_hat[:, j], np.ones(64)], x[:, j], rcond=None)
                for j in range(4)]
        ln_fit_error = max(np.sqrt(f[1][0] / 64) for f in fits)
        print(tr("LayerNorm, best per-feature gamma and beta: rms error"),
              ln_fit_error.round(3), tr("(data std 10)"))
        ''',
    "ln-similar-distribution": r'''
        rng = np.random.default_rng(45)
        x = rng.normal(loc=[0.0, 10.0, -5.0, 2.0], scale=[1.0, 3.0, 0.1, 5.0], size=(2000, 4))
        y = nc.LayerNorm(4, elementwise_affine=False)(x)
        sample_means, sample_stds = y.mean(axis=1), y.std(axis=1)
        print(tr("each sample, over its features: |mean| <="), np.abs(sample_means).max().round(6),
              " " + tr("std"), sample_stds.min().round(4), tr("to"), sample_stds.max().round(4))
        feature_means, feature_stds = y.mean(axis=0), y.std(axis=0)
        print(tr("each feature, over the samples: means"), feature_means.round(2),
              " " + tr("stds"), feature_stds.round(2))
        ''',
    "ln-outlier-feature": r'''
        rng = np.random.default_rng(46)
        x = rng.standard_normal((1000, 64))
        x_outlier = x.copy()
        x_outlier[:, 0] += 60.0                       # one feature far larger than the rest
        ln = nc.LayerNorm(64, elementwise_affine=False)
        spread = {name: ln(v)[:, 1:].std()
                  for name, v in [(N_("no outlier"), x), (N_("one outlier feature"), x_outlier)]}
        for name, value in spread.items():
            print(tr("{name} spread of the other 63 features after LayerNorm: {value:.3f}").format(
                name=pad(tr(name), 20), value=value))
        ''',
    "affine-defaults": r'''
        defaults = {"normcore LayerNorm": [n for n, _ in nc.LayerNorm(4).named_parameters()],
                    "normcore BatchNorm2d": [n for n, _ in nc.BatchNorm2d(4).named_parameters()],
                    "normcore LayerNorm(elementwise_affine=False)":
                        [n for n, _ in nc.LayerNorm(4, elementwise_affine=False).named_parameters()]}
        try:
            import torch
        except ImportError:
            torch = None
            print(tr("torch is not installed: only normcore's defaults are shown"))
        if torch is not None:
            defaults["torch LayerNorm: elementwise_affine"] = torch.nn.LayerNorm(4).elementwise_affine
            for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"):
                defaults[f"torch {name}: affine"] = getattr(torch.nn, name)(4).affine
        for name, value in defaults.items():
            print(f"{name}: {value}")
        ''',
}
