"""The cells that measure the claims notebook's rows on Pre-Norm and Post-Norm in training: tuning,
warmup, the gradients at initialisation, the models that use each, and the guide for choosing a
norm and its position.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_placement_training.py
with that id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py
asserts the row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "post-better-tuned": r'''
        w_post = x0_weight(residual_stack("post", 8))
        w_pre = x0_weight(residual_stack("pre", 8))
        print(tr("weight of x_0 in x_8: Post-Norm"), w_post[-1].round(3),
              " Pre-Norm", w_pre[-1].round(3))
        ''',
    "post-long-range-finetune": r'''
        post, pre = gradient_profile("post"), gradient_profile("pre")
        first_over_last = {name: p[:, :2].mean(axis=1) / p[:, -2:].mean(axis=1)
                           for name, p in (("Post-LN", post), ("Pre-LN", pre))}
        print(tr("gradient norm of the first two blocks / the last two, 8 blocks, 4 initialisations:"))
        for name, values in first_over_last.items():
            print(f"  {name}", values.round(2))
        ''',
    "post-needs-warmup": r'''
        depths, seeds = (2, 8, 32), range(4)
        change = {pos: np.array([[output_change(pos, depth, seed=s) for s in seeds]
                                 for depth in depths]) for pos in ("post", "pre")}
        print(tr("relative output change, mean of 4 seeds, 2 / 8 / 32 blocks:"))
        for pos, values in change.items():
            print(f"  {pos:4s}", [f"{v:.2e}" for v in values.mean(axis=1)])
        post_above_pre = bool(np.all(change["post"] > change["pre"]))
        print(tr("Post-LN's above Pre-LN's in every seed and depth:"), post_above_pre)
        ''',
    "warmup-recipe": r'''
        from normcore.optim.schedules import linear_warmup
        peak, start, steps = 1e-4, 1e-6, 1000
        recipe = lambda step: start + (peak - start) * min(1.0, step / steps)   # W1's ramp
        ours = linear_warmup(peak, steps)
        for step in (0, 10, 500, 999, 1500):
            print(tr("step {step:4d}: W1's ramp {value:.2e}   linear_warmup {value2:.2e}").format(
                step=step, value=recipe(step), value2=ours(step)))
        ramp_gap = max(abs(recipe(s) - ours(s)) for s in range(2000)) / peak
        print(tr("largest difference, as a share of the peak:"), round(ramp_gap, 4))
        ''',
    "post-gradients-explode": r'''
        profiles = gradient_profile("post")           # (initialisations, blocks)
        print(tr("Post-LN, gradient norm per block (1 = next to the input), mean of 4:"))
        print(profiles.mean(axis=0).round(2))
        first_over_last = profiles[:, :2].mean(axis=1) / profiles[:, -2:].mean(axis=1)
        print(tr("first two blocks / last two, each initialisation:"), first_over_last.round(2))
        ''',
    "post-gradients-weaken": r'''
        profiles = gradient_profile("post")
        first_over_last = profiles[:, :2].mean(axis=1) / profiles[:, -2:].mean(axis=1)
        print(tr("parameter gradients, first two blocks / last two:"), first_over_last.round(2))
        rng = np.random.default_rng(25)
        post_gain = {}
        for depth in (2, 8, 32):
            x, dy = rng.standard_normal((2, 4, 8, 32))
            dx = input_gradient(transformer_stack("post", depth), x, dy)
            post_gain[depth] = float(np.linalg.norm(dx) / np.linalg.norm(dy))
        print(tr("|dL/dx_0| / |dL/dy|, Post-LN, 2, 8, 32 blocks:"),
              [round(v, 2) for v in post_gain.values()])
        ''',
    "deep-needs-pre": r'''
        deep_change = {pos: np.array([output_change(pos, 32, seed=s) for s in range(4)])
                       for pos in ("post", "deepnorm")}
        for pos, values in deep_change.items():
            print(tr("{pos:8s} relative output change, 32 blocks, 4 seeds:").format(pos=pos),
                  [f"{v:.1e}" for v in values])
        ''',
    "llama-layers": r'''
        def llama_parameters(d, layers, ffn, vocab=32000):
            "LLaMA's parameter count: layers of attention, SwiGLU and two RMSNorm gains."
            per_layer = 4 * d * d + 3 * d * ffn + 2 * d
            return layers * per_layer + 2 * vocab * d + d       # + embedding, head, final norm
        billions = {N_("7B, 32 layers"): llama_parameters(4096, 32, 11008) / 1e9,
                    N_("65B, 80 layers"): llama_parameters(8192, 80, 22016) / 1e9,
                    N_("65B's width, 65 layers"): llama_parameters(8192, 65, 22016) / 1e9}
        for name, n in billions.items():
            print(tr("{name} {n:6.2f} billion parameters").format(name=pad(tr(name), 23), n=n))
        ''',
    "pre-converges-faster": r'''
        post, pre = gradient_profile("post"), gradient_profile("pre")
        last_block_ratio = post[:, -1] / pre[:, -1]
        print(tr("gradient norm of the last of 8 blocks, 4 initialisations:"))
        print("  Post-LN", post[:, -1].round(2), "\n  Pre-LN ", pre[:, -1].round(2))
        print("Post-LN / Pre-LN:", last_block_ratio.round(1))
        ''',
    "post-small-initial-lr": r'''
        def w1_warmup(step, start=1e-6, peak=1e-4, steps=1000):
            "W1's recipe: linear from 1e-6 to 1e-4 over the first 1000 steps."
            return start + (peak - start) * min(step, steps) / steps
        def transformer_rate(step, d_model=512, warmup=4000):
            "The original Transformer's schedule (Vaswani et al. 2017, eq. 3)."
            return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)
        passes = next(step for step in range(1001) if w1_warmup(step) >= 1e-5)
        print(tr("W1's warmup: step 0"), w1_warmup(0), " " + tr("step 1000"), w1_warmup(1000),
              " " + tr("passes 1e-5 at step"), passes)
        peak = max(transformer_rate(step) for step in range(1, 20001))
        print(tr("original Transformer: peak rate {peak:.1e} at step 4000").format(peak=peak))
        ''',
    "bert-transformer-post-ln": r'''
        def transformer_rate(step, d_model=512, warmup=4000):
            "Vaswani et al. (2017), eq. 3."
            return d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)
        def bert_rate(step, peak=1e-4, warmup=10_000, total=1_000_000):
            "Devlin et al. (2019): linear warmup to 1e-4, then linear decay to 0."
            return peak * min(step / warmup, (total - step) / (total - warmup))
        schedules = {"Transformer": (transformer_rate, (400, 4000, 40000)),
                     "BERT": (bert_rate, (1000, 10_000, 500_000))}
        rates = {}
        for name, (rate, steps) in schedules.items():
            rates[name] = [rate(step) for step in steps]
            print(tr("{name} rate at steps {steps}:").format(name=pad(name, 11), steps=steps),
                  ", ".join(f"{r:.1e}" for r in rates[name]))
        ''',
    "pre-in-large-models": r'''
        first_over_last = {name: p[:, 0] / p[:, -1]
                           for name, p in (("Post-LN", gradient_profile("post")),
                                           ("Pre-LN", gradient_profile("pre")))}
        print(tr("gradient norm of the first block / the last, 8 blocks, 4 initialisations:"))
        for name, ratio in first_over_last.items():
            print(f"  {name:7s}", ratio.round(2))
        ''',
    "decision-guide": r'''
        rng = np.random.default_rng(48)
        pre = nc.TransformerBlock(32, 4, position="pre", rng=rng)
        post = nc.TransformerBlock(32, 4, position="post", rng=rng)
        post.load_state_dict(pre.state_dict())          # the same weights, the norm moved
        x = rng.standard_normal((2, 8, 32))
        same_keys = list(pre.state_dict()) == list(post.state_dict())
        moved = np.linalg.norm(post(x) - pre(x)) / np.linalg.norm(pre(x))
        print(tr("same parameter names:"), same_keys, " " * 2 + tr("relative change of the output:"), moved.round(2))
        ''',
}
