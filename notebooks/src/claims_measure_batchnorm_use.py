"""The cells that measure the claims notebook's rows on BatchNorm in use: small batches, its noise,
padding, the learning rate, its cost and memory, the models that use it.

``EVIDENCE[row id]`` is the code cell shown under the row of claims_data_batchnorm_use.py with
that id; it runs after the setup cell (claims_measure_setup.py), and tests/test_claims.py
asserts the row's verdict on the numbers it leaves behind.
"""

EVIDENCE = {
    "bn-small-batch": r'''
        rng = np.random.default_rng(12)
        sizes = [2, 8, 32, 128]
        mean_error, mode_gap = [], []
        for b in sizes:
            x = rng.standard_normal((2000, b, 1))
            mean_error.append(np.abs(x.mean(axis=1)).mean())
            bn = nc.BatchNorm1d(1)
            gaps = [np.abs(bn.train()(batch) - batch).mean() for batch in x[:200]]
            mode_gap.append(np.mean(gaps))  # eval output with the true stats is x itself
        for b, e, g in zip(sizes, mean_error, mode_gap):
            print(tr("b={b:4d}  |batch mean error| {e:.3f}  train-vs-eval gap {g:.3f}").format(
                b=b, e=e, g=g))
        ''',
    "bn-noise-regularises": r'''
        rng = np.random.default_rng(13)
        sample = rng.standard_normal((1, 4))
        def spread(b):
            bn = nc.BatchNorm1d(4)
            outs = [bn(np.vstack([sample, rng.standard_normal((b - 1, 4))]))[0]
                    for _ in range(300)]
            return np.std(outs, axis=0).mean()
        noise = {b: spread(b) for b in (4, 64)}
        for b, s in noise.items():
            print(tr("batch {b:3d}: the same sample's output varies by {s:.3f} (std)").format(b=b, s=s))
        ''',
    "bn-padding": r'''
        rng = np.random.default_rng(14)
        long_, short = rng.normal(2.0, 1.5, (1, 3, 5)), rng.normal(2.0, 1.5, (1, 3, 2))
        padded = np.concatenate([long_, np.pad(short, ((0, 0), (0, 0), (0, 3)))])
        real = np.concatenate([long_.reshape(3, 5), short.reshape(3, 2)], axis=1)  # (C, 7)
        bn_padded = nc.BatchNorm1d(3, affine=False)(padded)  # (N, C, L)
        mean, var = real.mean(axis=1), real.var(axis=1)
        masked = (long_[0] - mean[:, None]) / np.sqrt(var[:, None] + 1e-5)
        bn_change = np.abs(bn_padded[0] - masked).max()
        print(tr("BatchNorm, padded vs statistics over the real tokens only:"), bn_change.round(3))
        ln = nc.LayerNorm(3)
        tokens = np.swapaxes(padded, 1, 2)  # (N, L, C): one token per row
        ln_change = np.abs(ln(tokens)[1, :2] - ln(np.swapaxes(short, 1, 2))[0]).max()
        print(tr("LayerNorm, padded vs unpadded:"), ln_change)
        ''',
    "bn-larger-lr": r'''
        rng = np.random.default_rng(27)
        x, dy = rng.standard_normal((64, 8)), rng.standard_normal((64, 16))
        outputs, grads = {}, {}
        for scale in (1.0, 10.0):
            fc = nc.Linear(8, 16, rng=np.random.default_rng(28))
            fc.weight.data *= scale
            net = nc.Sequential(fc, nc.BatchNorm1d(16))
            outputs[scale] = net(x)
            net.backward(dy)
            grads[scale] = np.linalg.norm(fc.weight.grad)
        output_gap = np.abs(outputs[10.0] - outputs[1.0]).max()
        grad_ratio = grads[10.0] / grads[1.0]
        print(tr("weights x10: output changes by"), f"{output_gap:.1e}",
              " " + tr("weight gradient x"), grad_ratio.round(4))
        ''',
    "bn-costlier": r'''
        import normcore.distributed as ncd
        from normcore.experiments.speed import count_passes
        rng = np.random.default_rng(29)
        fc, bn = nc.Linear(16, 8, rng=rng), nc.BatchNorm1d(8)
        for _ in range(20):
            bn(fc(rng.normal(1.0, 2.0, (32, 16))))
        folded = nc.fold_batchnorm(fc, bn.eval())
        x = rng.standard_normal((5, 16))
        fold_gap = np.abs(folded(x) - bn(fc(x))).max()
        print(tr("Linear then BatchNorm (evaluation) vs the folded Linear:"), f"{fold_gap:.1e}")
        try:
            nc.fold_batchnorm(fc, nc.LayerNorm(8))
            ln_folds = True
        except TypeError as err:
            ln_folds = False
            print(tr("LayerNorm: {error}, it cannot be folded into the Linear before it").format(
                error=type(err).__name__))
        x, dy = rng.standard_normal((64, 256)), rng.standard_normal((64, 256))
        passes = {name: count_passes(layer, x, dy) for name, layer in
                  [("BatchNorm1d", nc.BatchNorm1d(256)), ("LayerNorm", nc.LayerNorm(256)),
                   ("RMSNorm", nc.RMSNorm(256))]}
        print(tr("passes over the data (forward, backward):"), passes)
        log = []
        group = ncd.InProcessGroup(4, log=log)
        sync = [ncd.SyncBatchNorm(8, process_group=w) for w in group.workers]
        shards = list(rng.standard_normal((4, 6, 8)))
        ys = group.run(lambda w, shard: sync[w.rank](shard), shards)
        sync_gap = np.abs(np.concatenate(ys) - nc.BatchNorm1d(8)(np.concatenate(shards))).max()
        group.run(lambda w, shard: sync[w.rank].backward(np.ones_like(shard)), shards)
        agreement, *data = log                       # the first message: what each worker will send
        sent = [m.received.size for m in data]
        print(tr("SyncBatchNorm, 4 workers, vs BatchNorm on the whole batch: {sync_gap:.1e}").format(
            sync_gap=sync_gap))
        print(tr("the agreement: {agreed} values; then {rounds} all-reduce rounds in one training step, "
                 "values per worker: {sent}").format(agreed=agreement.sent[0].size, rounds=len(data), sent=sent))
        log = []
        group = ncd.InProcessGroup(4, log=log)
        sync = [ncd.SyncBatchNorm(8, process_group=w, protocol="gather") for w in group.workers]
        group.run(lambda w, shard: sync[w.rank](shard), shards)
        group.run(lambda w, shard: sync[w.rank].backward(np.ones_like(shard)), shards)
        gathered = [(m.op, m.sent[0].size) for m in log[1:]]   # after the agreement
        print(tr("protocol=\"gather\", one training step (collective, values each worker sends):"), gathered)
        # torch's forward: gather each worker's (mean, variance, count), merge in one round
        means = np.array([s.mean(0) for s in shards])
        variances = np.array([s.var(0) for s in shards])
        counts = np.array([len(s) for s in shards])[:, None]
        mean = (counts * means).sum(0) / counts.sum()
        var = (counts * (variances + (means - mean) ** 2)).sum(0) / counts.sum()  # within + between
        whole = np.concatenate(shards)
        gather_gap = max(np.abs(mean - whole.mean(0)).max(), np.abs(var - whole.var(0)).max())
        print(tr("one gather round: merged mean and variance vs the whole batch's: {gather_gap:.1e}").format(
            gather_gap=gather_gap))
        ''',
    "resnet-bn": r'''
        def stream_rms(kind, blocks=100, d=64, seed=47):
            """The stream's RMS before the first block and after each of them."""
            rng = np.random.default_rng(seed)
            x = rng.standard_normal((64, d))
            rms = [np.sqrt((x ** 2).mean())]
            for _ in range(blocks):
                fc1 = nc.Linear(d, d, bias=False, init="kaiming", rng=rng)
                fc2 = nc.Linear(d, d, bias=False, init="kaiming", rng=rng)
                h = np.maximum(fc1(x), 0)
                if kind == "BatchNorm in each branch":
                    h = nc.BatchNorm1d(d)(h)
                branch = fc2(h)
                if kind == "no norm, branch / sqrt(100)":
                    branch = branch / np.sqrt(blocks)
                x = x + branch
                rms.append(np.sqrt((x ** 2).mean()))
            return np.array(rms)
        profiles = {kind: stream_rms(kind) for kind in
                    (N_("no norm"), N_("BatchNorm in each branch"), N_("no norm, branch / sqrt(100)"))}
        rms = {kind: profile[-1] for kind, profile in profiles.items()}
        for kind, value in rms.items():
            print(tr("{kind} RMS of the stream after 100 blocks: {value:.3g}").format(
                kind=pad(tr(kind), 28), value=value))
        variance_growth = profiles["no norm"] ** 2
        per_block = (variance_growth[-1] / variance_growth[0]) ** (1 / 100)
        print(tr("no norm: the stream's variance grows {per_block:.2f} times per block on average, {median:.2f} in the median block").format(
            per_block=per_block, median=np.median(variance_growth[1:] / variance_growth[:-1])))
        ''',
    "bn-positions-not-identical": r'''
        rng = np.random.default_rng(61)
        s, d = 6, 4
        position_mean = 3 * rng.standard_normal((s, d))   # each position its own distribution
        def batch(b):
            "b sequences drawn independently: token (i, t) ~ N(position_mean[t], 1)"
            return position_mean + rng.standard_normal((b, s, d))
        error = {}
        for b in (8, 128):
            means = np.stack([batch(b).mean(axis=0) for _ in range(500)])
            error[b] = np.abs(means - position_mean).mean()
            print(tr("b = {b:3d}: per-position batch mean is off by {error:.3f} on average").format(
                b=b, error=error[b]))
        x = batch(64)
        per_position = (x - x.mean(axis=0)) / x.std(axis=0)            # W2's statistics, over b
        pooled = np.swapaxes(nc.BatchNorm1d(d, affine=False)(np.swapaxes(x, 1, 2)), 1, 2)
        offset = {N_("per position"): np.abs(per_position.mean(axis=0)).max(),
                  N_("pooled over positions"): np.abs(pooled.mean(axis=0)).max()}
        for name, v in offset.items():
            print(tr("largest mean of one position's output, {name}: {v:.3f}").format(name=tr(name), v=v))
        ''',
    "lm-small-batch": r'''
        rng = np.random.default_rng(62)
        sequences = {N_("one device, 4 sequences"): 4, N_("BERT, 256 sequences"): 256,
                     N_("GPT-3 175B, 3.2M / 2048 tokens"): round(3.2e6 / 2048),
                     N_("LLaMA, 4M / 2048 tokens"): round(4e6 / 2048)}
        error = {}
        for name, b in sequences.items():
            means = rng.standard_normal((400, b)).mean(axis=1)   # one position, one feature
            error[b] = np.abs(means).mean()
            print(tr("{name} b = {b:5d}: batch mean off by {error:.3f} (sqrt(2 / (pi b)) = {sqrt:.3f})").format(
                name=pad(tr(name), 31), b=b, error=error[b], sqrt=np.sqrt(2 / (np.pi * b))))
        ''',
    "bn-buffers-keep-graph": r'''
        try:
            import torch
        except ImportError:
            torch = None
            print(tr("torch is not installed: this cell compares with it and is skipped"))
        if torch is not None:
            class W3BatchNorm(torch.nn.Module):
                "W3's update, kept as written (its momentum convention too); no gamma, beta."
                def __init__(self, n, momentum=0.1, eps=1e-5):
                    super().__init__()
                    self.momentum, self.eps = momentum, eps
                    self.register_buffer("running_mean", torch.zeros(n))
                    self.register_buffer("running_var", torch.ones(n))
                def forward(self, x):
                    if self.training:
                        mean, var = x.mean(dim=0), x.var(dim=0, unbiased=False)
                        self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mean
                        self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var
                    else:
                        mean, var = self.running_mean, self.running_var
                    return (x - mean) / torch.sqrt(var + self.eps)
            def autograd_nodes(*tensors):
                "How many autograd nodes stand behind the tensors."
                seen, todo = set(), [t.grad_fn for t in tensors]
                while todo:
                    node = todo.pop()
                    if node is not None and node not in seen:
                        seen.add(node)
                        todo.extend(next_node for next_node, _ in node.next_functions)
                return len(seen)
            torch.manual_seed(0)
            fc, w3, ref = torch.nn.Linear(16, 32), W3BatchNorm(32), torch.nn.BatchNorm1d(32)
            nodes = {}
            for step in range(1, 51):
                h = fc(torch.randn(64, 16))
                (w3(h).pow(2).mean() + ref(h).pow(2).mean()).backward()
                nodes[step] = autograd_nodes(w3.running_mean, w3.running_var)
            requires_grad = {"W3": w3.running_var.requires_grad,
                             "torch": ref.running_var.requires_grad}
            print(tr("buffers require grad:"), requires_grad)
            print(tr("autograd nodes behind W3's buffers after 1, 10, 50 steps:"),
                  nodes[1], nodes[10], nodes[50])
            w3.eval()
            try:
                w3(fc(torch.randn(8, 16))).sum().backward()
                eval_error = None
            except RuntimeError as error:
                eval_error = str(error).split(" (")[0]
            print(tr("backward in evaluation mode:"), eval_error)
        print(tr("normcore's running_mean is a"), type(nc.BatchNorm1d(32).running_mean).__name__)
        ''',
    "bn-batch-memory": r'''
        rng = np.random.default_rng(63)
        def activation_bytes(norm, b, width=256):
            "Bytes of the activations a forward pass of Linear -> norm -> ReLU -> Linear keeps."
            layers = [nc.Linear(64, width, rng=rng), norm, nc.ReLU(), nc.Linear(width, 10, rng=rng)]
            x, kept = rng.standard_normal((b, 64)), 0
            for layer in layers:
                x = layer(x)
                kept += x.nbytes
            return kept
        kept = {name: {b: activation_bytes(make(), b) for b in (32, 512)}
                for name, make in [("BatchNorm1d", lambda: nc.BatchNorm1d(256)),
                                   ("LayerNorm", lambda: nc.LayerNorm(256)),
                                   ("no norm", lambda: nc.Sequential())]}
        for name, by_batch in kept.items():
            print(tr("{name:12s} batch 32: {value:6.0f} KiB   batch 512: {value2:6.0f} KiB").format(
                name=name, value=by_batch[32] / 1024, value2=by_batch[512] / 1024))
        bn = nc.BatchNorm1d(256)
        print(tr("BatchNorm's running statistics:"), bn.running_mean.size + bn.running_var.size,
              tr("numbers at any batch size"))
        ''',
    "bn-cv-uniform-shapes": r'''
        rng = np.random.default_rng(64)
        def images(n, size):
            "n images of 3 channels with different means and scales, at any resolution."
            x = rng.normal([0.5, -1.0, 2.0], [1.0, 0.5, 3.0], (n, size, size, 3))
            return x.transpose(0, 3, 1, 2)
        bn = nc.BatchNorm2d(3, affine=False, momentum=None)   # running averages over all batches
        for _ in range(50):
            bn(images(16, 32))
        bn.eval()
        moments = {}
        for size in (8, 32, 96):
            y = bn(images(64, size))
            moments[size] = (y.mean(axis=(0, 2, 3)), y.std(axis=(0, 2, 3)))
            print(tr("{size:2d} x {size2:2d} images, per-channel mean {round}  std {round2}").format(
                size=size, size2=size, round=moments[size][0].round(3), round2=moments[size][1].round(3)))
        ''',
}
