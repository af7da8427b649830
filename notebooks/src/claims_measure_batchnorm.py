"""The cells that measure the claims notebook's rows on BatchNorm's statistics: its axes, the
write-ups' printed example, the running statistics and their momentum, evaluation mode.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_batchnorm.py with that
id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py asserts the
row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "bn-axes": r'''
        scores = np.array([[90.0, 80.0, 70.0],     # student A: Chinese, maths, English
                           [60.0, 50.0, 40.0]])    # student B
        print(tr("BatchNorm's means (one per subject):"), scores.mean(axis=0))
        print(tr("LayerNorm's means (one per student):"), scores.mean(axis=1))
        rng = np.random.default_rng(3)
        x = rng.standard_normal((6, 3)) * 4 + 1
        bn = nc.BatchNorm1d(3)
        bn.gamma.data[...], bn.beta.data[...] = rng.standard_normal(3), rng.standard_normal(3)
        mu, var = x.mean(axis=0), ((x - x.mean(axis=0)) ** 2).mean(axis=0)
        by_hand = (x - mu) / np.sqrt(var + 1e-5) * bn.gamma.data + bn.beta.data
        bn_error = np.abs(bn(x) - by_hand).max()
        print(tr("BatchNorm1d - formula:"), bn_error)
        ''',
    "bn-index-slips": r'''
        rng = np.random.default_rng(42)
        m, k = 8, 3                                   # m samples, k features
        x = rng.normal([0.0, 5.0, -3.0], [1.0, 2.0, 0.5], size=(m, k))
        mu = x.mean(axis=0)                           # one mean per feature
        as_meant = ((x[:, 0] - mu[0]) ** 2).mean()    # sum_i (x_ik1 - mu_k1)^2 / m
        as_written = ((x - mu[0]) ** 2).mean(axis=0)  # sum_i (x_i - mu_k1)^2 / m, whole rows
        print(tr("means:"), mu.shape, tr("one per feature (k = {k}), not per sample (m = {m})").format(
            k=k, m=m))
        print(tr("variance of feature 1:"), as_meant.round(3), " " + tr("as written:"), as_written.round(3))
        ''',
    "bn-printed": r'''
        x = np.array([[-0.2762, -0.7904,  0.1992],
                      [ 1.3222,  2.2137, -2.6562],
                      [ 0.4343, -1.4394, -1.5970],
                      [-0.6139,  0.3419, -0.9845]])
        printed = np.array([[-0.6641, -0.6289,  1.4123],
                            [ 1.4900,  1.5381, -1.3520],
                            [ 0.2934, -1.0971, -0.3266],
                            [-1.1193,  0.1879,  0.2663]])
        y = nc.BatchNorm1d(3)(x)
        print(y)
        same = digits_equal(y, printed)
        print(tr("from the printed input: {same} of {size} entries equal to 4 decimals").format(
            same=same, size=y.size))
        # a column is one channel's batch: search the columns, k candidates as k channels
        x_found = reproduce_printed(lambda c: nc.BatchNorm1d(len(c))(c.T).T,
                                    x.T, printed.T).T
        same_found = digits_equal(nc.BatchNorm1d(3)(x_found), printed)
        print(tr("from an input within {max:.1e} of it: {same_found} of {size}").format(
            max=np.abs(x_found - x).max(), same_found=same_found, size=y.size))
        ''',
    "bn-per-position": r'''
        rng = np.random.default_rng(33)
        b, s, d = 2, 5, 3
        x = rng.normal(1.0, 2.0, size=(b, s, d))
        per_position = (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5)   # W2's formula
        flat = nc.BatchNorm1d(s * d, affine=False)(x.reshape(b, s * d)).reshape(b, s, d)
        variant_gap = np.abs(flat - per_position).max()
        print(tr("W2's formula vs BatchNorm1d(s * d) on the flattened tensor:"), f"{variant_gap:.1e}")
        print(tr("per-position outputs (b = 2):"), np.unique(np.round(per_position, 3)))
        bn = nc.BatchNorm1d(d, affine=False)
        per_channel = np.swapaxes(bn(np.swapaxes(x, 1, 2)), 1, 2)  # (N, C, L) in, back to (b, s, d)
        per_position_gap = np.abs(per_position - per_channel).max()
        print(tr("largest difference from the per-feature BatchNorm1d:"), per_position_gap.round(3))
        ''',
    "bn-momentum-flipped": r'''
        x = np.random.default_rng(4).normal(3.0, 2.0, size=(32, 3))
        bn = nc.BatchNorm1d(3, momentum=0.1)
        bn(x)
        m = 0.1
        flipped_mean = m * np.zeros(3) + (1 - m) * x.mean(axis=0)
        print(tr("normcore / PyTorch running_mean:"), bn.running_mean)
        print(pad(tr("W3's rule with momentum=0.1:"), 32), flipped_mean)
        ratio = flipped_mean / bn.running_mean
        print(tr("ratio:"), ratio)
        ''',
    "momentum-decay": r'''
        rng = np.random.default_rng(5)
        # 500 channels side by side: 500 independent runs of the same running average
        batches = rng.normal(3.0, 2.0, size=(600, 16, 500))
        def final_noise(momentum):
            bn = nc.BatchNorm1d(500, momentum=momentum)
            for b in batches:
                bn(b)
            return bn.running_mean.std()  # across the runs, after 600 batches
        noise = {decay: final_noise(1 - decay) for decay in (0.9, 0.99)}
        for decay, value in noise.items():
            m = 1 - decay
            theory = 2.0 / np.sqrt(16) * np.sqrt(m / (2 - m))
            print(tr("decay {decay} (normcore momentum={m:.2f}): running-mean noise {value:.4f}, theory {theory:.4f}").format(
                decay=decay, m=m, value=value, theory=theory))
        ''',
    "bn-running-var-biased": r'''
        rng = np.random.default_rng(6)
        bn = nc.BatchNorm1d(1, momentum=None)  # the exact average of every batch
        biased = []
        for _ in range(2000):
            b = rng.normal(0.0, 2.0, size=(4, 1))
            bn(b)
            biased.append(b.var())
        print(tr("true variance 4.0; normcore running_var"), bn.running_var.round(3))
        print(tr("average biased batch variance (W3's running_var):"), np.mean(biased).round(3))
        ''',
    "printed-test-passes": r'''
        class WrittenUpBN:
            """W3's update rule, in NumPy: flipped momentum, biased running variance."""
            def __init__(self, c, momentum=0.1, eps=1e-5):
                self.m, self.eps = momentum, eps
                self.running_mean, self.running_var = np.zeros(c), np.ones(c)
            def train_forward(self, x):
                mean, var = x.mean(axis=0), x.var(axis=0)
                self.running_mean = self.m * self.running_mean + (1 - self.m) * mean
                self.running_var = self.m * self.running_var + (1 - self.m) * var
                return (x - mean) / np.sqrt(var + self.eps)
            def eval_forward(self, x):
                return (x - self.running_mean) / np.sqrt(self.running_var + self.eps)
        rng = np.random.default_rng(7)
        x = rng.normal(3.0, 2.0, size=(4, 3))
        mine, ref = WrittenUpBN(3), nc.BatchNorm1d(3)
        train_gap = np.abs(mine.train_forward(x) - ref(x)).max()
        print(tr("training outputs, largest difference:"), train_gap)
        print("running_mean  W3:", mine.running_mean, " " + tr("normcore:"), ref.running_mean)
        print("running_var   W3:", mine.running_var, " " + tr("normcore:"), ref.running_var)
        test = rng.normal(3.0, 2.0, size=(5, 3))
        eval_gap = np.abs(mine.eval_forward(test) - ref.eval()(test)).max()
        print(tr("evaluation outputs, largest difference:"), eval_gap.round(4))
        ''',
    "bn-eval-squared-var": r'''
        rng = np.random.default_rng(8)
        bn = nc.BatchNorm1d(1, momentum=None)
        for _ in range(200):
            bn(rng.normal(1.0, 2.0, size=(32, 1)))
        test = rng.normal(1.0, 2.0, size=(5000, 1))
        right = bn.eval()(test)
        squared = (test - bn.running_mean) / np.sqrt(bn.running_var ** 2 + bn.eps)
        print("running_var", bn.running_var.round(3))
        print(tr("std of the evaluation output: normcore"), right.std().round(3),
              " " + tr("with running_var**2"), squared.std().round(3))
        ''',
    "running-buffers": r'''
        bn = nc.BatchNorm1d(3)
        print(tr("initial gamma"), bn.gamma.data, " beta", bn.beta.data)
        print(tr("initial running_mean"), bn.running_mean, " running_var", bn.running_var)
        print(tr("parameters:"), [name for name, _ in bn.named_parameters()])
        rng = np.random.default_rng(9)
        bn(rng.standard_normal((8, 3)))
        before = bn.running_mean.copy(), bn.running_var.copy()
        bn.backward(rng.standard_normal((8, 3)))
        untouched = (np.array_equal(before[0], bn.running_mean)
                     and np.array_equal(before[1], bn.running_var))
        print(tr("backward changed the running statistics:"), not untouched)
        ''',
    "eval-running-stats": r'''
        rng = np.random.default_rng(10)
        bn = nc.BatchNorm1d(3)
        for _ in range(20):
            bn(rng.normal(2.0, 3.0, size=(16, 3)))
        bn.eval()
        batch = rng.normal(2.0, 3.0, size=(8, 3))
        alone_gap = np.abs(bn(batch[:1]) - bn(batch)[:1]).max()
        print(tr("sample alone vs inside a batch, in evaluation:"), alone_gap)
        try:
            bn.train()(batch[:1])
            refused = False
        except ValueError as err:
            refused = True
            print(tr("training on one sample: ValueError:"), str(err)[:40], "...")
        ''',
    "single-sample-blowup": r'''
        eps = 1e-5
        one = np.array([[7.3]])
        x_hat_one = (one - one.mean(0)) / np.sqrt(one.var(0) + eps)
        print(tr("one sample:"), x_hat_one.ravel())
        two = np.array([[1000.0], [1000.001]])
        x_hat_two = (two - two.mean(0)) / np.sqrt(two.var(0) + 1e-12)
        print(tr("two samples, almost equal:"), x_hat_two.ravel().round(4))
        rng = np.random.default_rng(11)
        worst = max(np.abs(nc.BatchNorm1d(1, eps=1e-12)(
            rng.standard_cauchy((8, 1)))).max() for _ in range(200))
        print(tr("largest |x_hat| over 200 heavy-tailed batches of 8:"), worst.round(4),
              " sqrt(7) =", np.sqrt(7).round(4))
        ''',
}
