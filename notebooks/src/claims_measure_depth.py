"""The cells that measure the claims notebook's rows on depth in trained Transformers: how much
each block of a Pre-Norm or Post-Norm stack still does.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_depth.py with that id;
it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py asserts the
row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "pre-deep-blocks-near-identity": r'''
        from normcore.experiments._positions import residual_stream, tiny_model
        from normcore.experiments.curse_of_depth import copy_task, jacobian_distance
        task = copy_task()
        tokens, _ = task.batch(8, 0)
        rng = np.random.default_rng(0)
        distance = {}
        for placement in ("post", "pre", "lns"):
            model = tiny_model(task, placement, 8, seed=0)     # 8 blocks, at initialisation
            xs = list(residual_stream(model, tokens))          # x_0 ... x_8
            distance[placement] = np.array([jacobian_distance(block, x, rng)
                                            for block, x in zip(model.blocks, xs[:-1])])
            print(tr("{placement:4s} ||J - I|| / sqrt(n), blocks 1..8:").format(placement=placement),
                  distance[placement].round(2))
        ''',
}
