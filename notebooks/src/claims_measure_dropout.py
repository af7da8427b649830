"""The cells that measure the claims notebook's rows on Dropout: the printed example, the
expectation, the mask's device, regularisation.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_dropout.py with that
id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py asserts the
row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "dropout-printed": r'''
        ones = np.ones((2, 6))
        printed = [np.array([[1, 1, 1, 1, 1, 0], [1, 0, 1, 0, 1, 0]]) * 1.6667,
                   np.array([[0, 1, 0, 0, 0, 1], [0, 1, 1, 1, 1, 1]]) * 1.6667]
        matches = []
        for target in printed:
            seed = next(s for s in range(100000)
                        if np.array_equal(np.random.default_rng(s).random((2, 6)) >= 0.4,
                                          target > 0))
            y = nc.Dropout(0.4, rng=seed)(ones)
            matches.append(np.array_equal(np.round(y, 4), target))
            print(tr("seed {seed}:\n{y}").format(seed=seed, y=y))
        evaluation = nc.Dropout(0.4).eval()(ones)
        print(tr("evaluation:\n"), evaluation)
        ''',
    "dropout-expectation": r'''
        x = np.array([[1.0, -2.0, 3.0, 0.5]])
        drop = nc.Dropout(0.4, rng=22)
        mean_out = np.mean([drop(x) for _ in range(20000)], axis=0)
        print(pad(tr("input"), 12), x)
        print(pad(tr("mean output"), 12), mean_out)
        print(pad(tr("evaluation"), 12), drop.eval()(x))
        ''',
    "dropout-mask-device": r'''
        try:
            import torch
        except ImportError:
            torch = None
            print(tr("torch is not installed: this cell compares with it and is skipped"))
        if torch is not None:
            def w3_dropout(x, p=0.4):
                "W3's training-mode Dropout, as written."
                mask = (torch.rand(x.shape) > p).float()
                return mask * x / (1 - p)
            half = torch.ones(2, 6, dtype=torch.float16)
            dtypes = {"W3": w3_dropout(half).dtype, "nn.Dropout": torch.nn.Dropout(0.4)(half).dtype}
            print(tr("float16 in, out:"), dtypes)
            elsewhere = torch.ones(2, 6, device="meta")   # a device other than the CPU
            try:
                w3_dropout(elsewhere)
                device_error = None
            except RuntimeError as error:
                device_error = str(error)
            print(tr("x on another device:"), device_error)
            print(tr("nn.Dropout there:"), torch.nn.Dropout(0.4)(elsewhere).device)
        normcore_dtype = nc.Dropout(0.4, rng=0)(np.ones((2, 6), np.float16)).dtype
        print(tr("normcore's Dropout, float16 in:"), normcore_dtype)
        ''',
    "dropout-regularises": r'''
        rng = np.random.default_rng(65)
        x = rng.standard_normal((1, 1000))
        drop = nc.Dropout(0.4, rng=66)
        outputs = np.stack([drop(x) for _ in range(2000)])
        spread = (outputs.std(axis=0) / np.abs(x)).mean()
        print(tr("spread of a unit's training output / |input|:"), spread.round(3),
              "  sqrt(p / (1 - p)) =", round(np.sqrt(0.4 / 0.6), 3))
        evaluation_same = all(np.array_equal(drop.eval()(x), x) for _ in range(3))
        print(tr("evaluation returns the input every time:"), evaluation_same)
        ''',
}
