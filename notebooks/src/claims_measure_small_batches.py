"""The cells that measure the claims notebook's rows on BatchNorm at small batches, by training the
small_batches experiment's MLP for a short budget.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_small_batches.py with
that id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py
asserts the row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "bn-small-batch-trained": r'''
        from normcore.experiments import small_batches
        from normcore.experiments._nn import teacher_task
        rng = np.random.default_rng([0, 37])
        data = teacher_task(20000, rng=rng) + teacher_task(1024, rng=rng)
        accuracy = {}   # held-out accuracy in evaluation mode after 960 samples, 2 or 32 per statistic
        for method, b in [("batchnorm", 32), ("batchnorm", 2), ("groupnorm", 32), ("groupnorm", 2),
                          ("sync", 2)]:
            accuracy[method, b] = small_batches.train_and_measure(method, b, 960, data, 0)[0]
            name = {"batchnorm": "BatchNorm", "groupnorm": "GroupNorm", "sync": "SyncBatchNorm"}[method]
            print(tr("{name:13s} {b:2d} samples per statistic: accuracy {a:.3f}").format(
                name=name, b=b, a=accuracy[method, b]))
        ''',
    "bn-train-good-eval-bad": r'''
        from normcore.experiments import small_batches
        from normcore.experiments._nn import teacher_task
        rng = np.random.default_rng([0, 37])
        data = teacher_task(20000, rng=rng) + teacher_task(1024, rng=rng)
        modes = {}   # b -> (accuracy in evaluation mode, in training mode, gap), the same held-out samples
        for b in (32, 2):
            modes[b] = small_batches.train_and_measure("batchnorm", b, 960, data, 0)
            print(tr("{b:2d} samples per batch: evaluation mode {e:.3f}, training mode {t:.3f}, "
                     "gap {g:.2f}").format(b=b, e=modes[b][0], t=modes[b][1], g=modes[b][2]))
        ''',
}
