"""The encoder-decoder model TinySeq2Seq, the source-reversal task it learns, greedy decoding,
and the learning test (slow): a 2 + 2 block model learns to reverse sources of 3 to 8 symbols."""

import copy
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import normcore as nc
from normcore import optim, tasks
from normcore.layer_cases import perturb_parameters
from normcore.perf.threads import single_thread

POSITIONS = ["pre", "post", "deepnorm", "none", "peri"]


def small_model(position="pre", seed=0, n_layers=2, **kw):
    model = nc.TinySeq2Seq(6, 7, 4, n_layers, 2, max_src_len=5, max_tgt_len=4, d_ff=6, position=position,
                           rng=seed, embedding_std=0.5, **kw)
    return perturb_parameters(model, np.random.default_rng(seed + 100), 0.3)


def small_batch(B=2, seed=1):
    rng = np.random.default_rng(seed)
    padding = np.zeros((B, 5), dtype=bool)
    padding[0, 3:] = True
    return rng.integers(0, 6, (B, 5)), rng.integers(0, 7, (B, 4)), padding


class WithMask(nc.Module):
    """The model with its source padding mask held fixed, so gradcheck sees (src, tgt)."""

    def __init__(self, model, mask):
        self.model, self.mask = model, mask

    def forward(self, src, tgt):
        return self.model(src, tgt, self.mask)

    def backward(self, dlogits):
        return self.model.backward(dlogits)


# --- the task -------------------------------------------------------------------------------------

def test_source_reversal_layout():
    task = tasks.SourceReversalTask(n_tokens=5, n_symbols=6, min_tokens=2)
    (src, tgt_in, padding), tgt_out = task.batch(40, seed=0)
    assert src.shape == padding.shape == (40, 5) and tgt_in.shape == tgt_out.shape == (40, 6)
    assert (task.src_vocab_size, task.vocab_size, task.seq_len) == (7, 8, 6)
    np.testing.assert_array_equal(padding, src == task.pad)
    lengths = (~padding).sum(1)
    assert lengths.min() == 2 and lengths.max() == 5  # every length in [min_tokens, n_tokens] occurs
    assert np.all(padding[:, 1:] >= padding[:, :-1])  # padding only at the end
    for b, L in enumerate(lengths):
        np.testing.assert_array_equal(tgt_out[b, :L], src[b, :L][::-1])
        assert tgt_out[b, L] == task.eos and np.all(tgt_out[b, L + 1:] == tasks.IGNORE)
        np.testing.assert_array_equal(task.answer(src[b:b + 1])[0], tgt_out[b, :L])
    assert np.all(tgt_in[:, 0] == task.bos)
    scored = tgt_out[:, :-1] != tasks.IGNORE
    np.testing.assert_array_equal(tgt_in[:, 1:][scored], tgt_out[:, :-1][scored])  # teacher forcing
    assert tgt_in.max() < task.vocab_size and src.max() < task.src_vocab_size and tgt_in.min() >= 0
    (src2, _, _), _ = task.batch(40, seed=0)
    np.testing.assert_array_equal(src, src2)
    with pytest.raises(ValueError, match="min_tokens <= n_tokens"):
        tasks.SourceReversalTask(n_tokens=3, min_tokens=4)
    assert isinstance(tasks.make_task("source-reversal"), tasks.SourceReversalTask)


def test_sequence_accuracy():
    targets = np.array([[1, 2, -100], [3, 4, 5]])
    assert tasks.sequence_accuracy(np.array([[1, 2, 0], [3, 4, 0]]), targets) == 0.5
    logits = np.eye(6)[np.array([[1, 2, 9 % 6], [3, 4, 5]])]
    assert tasks.sequence_accuracy(logits, targets) == 1.0


def test_fit_passes_a_tuple_of_inputs_as_separate_arguments():
    task = tasks.SourceReversalTask(n_tokens=4, n_symbols=5, min_tokens=2)
    model = nc.TinySeq2Seq(task.src_vocab_size, task.vocab_size, 8, 1, 2, task.n_tokens, task.seq_len, rng=0)
    hist = nc.fit(model, task, nc.AdamW(model.parameters(), lr=1e-2), steps=3, batch_size=4, progress=False)
    assert hist["loss"].shape == (3,) and np.all(np.isfinite(hist["loss"])) and hist["block_grad_norm"].shape == (3, 0)


# --- the model ------------------------------------------------------------------------------------

# The model wires its blocks in one of two ways: with the final norms (pre, peri) or without
# (post, deepnorm, none). The wiring with them is gradchecked in test_nn_layers.py (layer_cases'
# "TinySeq2Seq 1 + 1 blocks pre" and "... peri qk_norm=rmsnorm"); the one without them here, with
# the source padding (which the wiring does not touch: it is applied inside the attentions) and,
# with Post-LN, with dropout. Each position's block is gradchecked on its own (layer_cases). One
# encoder and one decoder block: that the memory's gradient sums over the decoder blocks is
# checked below (test_forward_is_encode_then_decode_...), stacked blocks with TinyTransformer
# (test_nn_layers.py).
@pytest.mark.slow  # gradchecks a whole TinySeq2Seq, seconds
def test_gradcheck_every_parameter_with_source_padding():
    model = small_model("none", n_layers=1)
    src, tgt, padding = small_batch()
    # a random upstream gradient; h = 1e-5: the logits reach ~40 without norms ("none"), and at
    # h = 1e-6 their rounding is ~1e-7 of the smallest gradients (gradcheck's docstring)
    report = nc.gradcheck(WithMask(model, padding), src, tgt, seed=2, h=1e-5)
    assert report.passed, report.table()
    assert len(report.checks) == len(model.parameters())


@pytest.mark.slow  # gradchecks a whole TinySeq2Seq
def test_gradcheck_with_dropout_and_without_a_mask():
    model = small_model("post", n_layers=1, dropout=0.3)
    src, tgt, _ = small_batch()
    report = nc.gradcheck(model, src, tgt, seed=3)
    assert report.passed, report.table()


def test_forward_is_encode_then_decode_and_the_memory_gradient_sums_over_decoder_blocks():
    model = small_model("pre")
    src, tgt, padding = small_batch()
    logits = model(src, tgt, padding)
    # by hand, from the children
    s = model.src_pos(model.src_emb(src))
    for block in model.encoder:
        s = block(s, key_padding_mask=padding)
    memory = model.enc_norm(s)
    t = model.tgt_pos(model.tgt_emb(tgt))
    for block in model.decoder:
        t = block(t, memory, memory_key_padding_mask=padding)
    np.testing.assert_allclose(logits, model.head(model.dec_norm(t)), rtol=1e-12, atol=1e-12)
    # the encoder's upstream gradient is the sum of both decoder blocks' dmemory
    dlogits = np.random.default_rng(4).standard_normal(logits.shape)
    model(src, tgt, padding)
    seen = []
    for block in model.decoder:
        block_backward = block.backward
        block.backward = lambda dy, f=block_backward: seen.append(f(dy)) or seen[-1]
    norm_backward = model.enc_norm.backward
    model.enc_norm.backward = lambda dy: seen.append(dy) or norm_backward(dy)
    model.backward(dlogits)
    (_, dm1), (_, dm0), dmemory = seen
    np.testing.assert_allclose(dmemory, dm0 + dm1, rtol=1e-12, atol=1e-14)
    assert not np.allclose(dm0, 0) and not np.allclose(dm1, 0)


def test_padded_source_positions_change_nothing():
    model = small_model("post")
    src, tgt, padding = small_batch()
    logits = model(src, tgt, padding)
    other = src.copy()
    other[padding] = (other[padding] + 1) % 6
    np.testing.assert_allclose(model(other, tgt, padding), logits, rtol=1e-12, atol=1e-12)
    model.zero_grad()
    model.backward(np.random.default_rng(5).standard_normal(logits.shape))
    grad = model.src_emb.weight.grad.copy()
    used = np.zeros(6, dtype=bool)
    used[src[~padding]] = True
    np.testing.assert_array_equal(grad[~used], 0.0)  # a token seen only at padding gets no gradient


def test_state_dict_keys_and_round_trip():
    model = nc.TinySeq2Seq(6, 7, 8, 2, 2, 5, 4, rng=0, n_decoder_layers=3)
    keys = list(model.state_dict())
    assert keys[:3] == ["src_emb.weight", "src_pos.weight", "encoder.0.norm1.weight"]
    assert "encoder.1.attn.q.weight" in keys and "enc_norm.weight" in keys and "dec_norm.weight" in keys
    assert "decoder.2.cross_attn.k.weight" in keys and "decoder.3.norm1.weight" not in keys
    assert keys[-2:] == ["head.weight", "head.bias"]
    assert all(not block.attn.causal for block in model.encoder)
    post = nc.TinySeq2Seq(6, 7, 8, 1, 2, 5, 4, position="post", rng=0)
    assert "enc_norm.weight" not in post.state_dict() and "dec_norm.weight" not in post.state_dict()
    src, tgt, padding = small_batch()
    other = nc.TinySeq2Seq(6, 7, 8, 2, 2, 5, 4, rng=1, n_decoder_layers=3)
    assert not np.allclose(other(src, tgt), model(src, tgt))
    other.load_state_dict(model.state_dict())
    np.testing.assert_array_equal(other(src, tgt, padding), model(src, tgt, padding))


def test_greedy_decode_feeds_back_its_own_predictions():
    model = small_model("pre")
    src, _, padding = small_batch()
    out = model.greedy_decode(src, 3, 4, padding)
    assert out.shape == (2, 4) and out.dtype == np.int64
    # teacher forcing on the greedy output gives back the same argmax at every position
    tgt = np.concatenate([np.full((2, 1), 3), out[:, :-1]], axis=1)
    np.testing.assert_array_equal(model(src, tgt, padding).argmax(-1), out)
    with pytest.raises(RuntimeError, match="before forward"):
        model.greedy_decode(src, 3, 2, padding)
        model.backward(np.zeros((2, 2, 7)))
    with pytest.raises(ValueError, match="exceeds max_tgt_len=4"):
        model.greedy_decode(src, 3, 5)
    with pytest.raises(ValueError, match="start token"):
        model.greedy_decode(src, 7, 2)
    with pytest.raises(TypeError, match="start must be an int"):
        model.greedy_decode(src, 1.0, 2)


BAD_CALLS = [
    (lambda s, t, m: (s[0], t), ValueError, r"source tokens of shape \(B, Ts\)"),
    (lambda s, t, m: (s + 6, t), ValueError, "vocabulary of size 6"),
    (lambda s, t, m: (s, t + 7), ValueError, "vocabulary of size 7"),
    (lambda s, t, m: (s, t[:1]), ValueError, r"target tokens of shape \(B, Tt\) with the source's B = 2"),
    (lambda s, t, m: (np.concatenate([s, s], 1), t), ValueError, "max_src_len=5"),
    (lambda s, t, m: (s, np.concatenate([t, t], 1)), ValueError, "max_tgt_len=4"),
    (lambda s, t, m: (s.astype(float), t), TypeError, "integer"),
    (lambda s, t, m: (s, t, m[:, :4]), ValueError, r"src_key_padding_mask .* must have shape \(2, 5\)"),
    (lambda s, t, m: (s, t, m.astype(int)), TypeError, "src_key_padding_mask .* must be boolean"),
]


@pytest.mark.parametrize("make, error, message", BAD_CALLS)
def test_a_bad_input_is_refused_and_changes_nothing(make, error, message):
    model = small_model("pre", dropout=0.2)
    src, tgt, padding = small_batch()
    logits = model(src, tgt, padding)
    ref = copy.deepcopy(model)
    with pytest.raises(error, match=message):
        model(*make(src, tgt, padding))
    dlogits = np.random.default_rng(6).standard_normal(logits.shape)
    model.backward(dlogits)
    ref.backward(dlogits)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        np.testing.assert_array_equal(p.grad, q.grad, err_msg=name)
    np.testing.assert_array_equal(model(src, tgt, padding), ref(src, tgt, padding))  # same Dropout draws


@pytest.mark.parametrize("src_shape, tgt_shape", [((0, 5), (0, 4)), ((2, 5), (2, 0)), ((2, 0), (2, 3))])
def test_empty_batch_or_sequences(src_shape, tgt_shape):
    model = small_model("pre")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "empty slice" or "invalid value" RuntimeWarning either
        logits = model(np.zeros(src_shape, dtype=np.int64), np.zeros(tgt_shape, dtype=np.int64))
        assert logits.shape == tgt_shape + (7,)
        assert model.backward(np.zeros(logits.shape)) is None
    assert all(np.all(p.grad == 0) for p in model.parameters())


def test_non_contiguous_token_arrays():
    model = small_model("post")
    src, tgt, padding = small_batch()
    want = model(src, tgt, padding)
    got = model(np.asfortranarray(src), np.repeat(tgt, 2, axis=1)[:, ::2], np.asfortranarray(padding))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("position", ["pre", "post"])
def test_the_fast_norm_tier_gives_the_same_model(position):
    models = {tier: small_model(position, norm_tier=tier) for tier in ("reference", "fast")}
    assert any(type(m).__module__.startswith("normcore.fast") for _, m in models["fast"].named_modules())
    src, tgt, padding = small_batch()
    logits = {tier: m(src, tgt, padding) for tier, m in models.items()}
    np.testing.assert_allclose(logits["fast"], logits["reference"], rtol=1e-12, atol=1e-12)
    dlogits = np.random.default_rng(3).standard_normal(logits["fast"].shape)
    for m in models.values():
        m.backward(dlogits)
    fast = dict(models["fast"].named_parameters())
    for name, p in models["reference"].named_parameters():
        np.testing.assert_allclose(fast[name].grad, p.grad, rtol=1e-10, atol=1e-12, err_msg=name)


def test_float32_model_stays_float32():
    model = nc.TinySeq2Seq(6, 7, 8, 1, 2, 5, 4, dtype=np.float32, rng=0)
    src, tgt, padding = small_batch()
    logits = model(src, tgt, padding)
    assert logits.dtype == np.float32
    model.backward(np.ones_like(logits))
    assert all(p.grad.dtype == np.float32 for p in model.parameters())


def test_readme_encoder_decoder_example_runs_in_a_few_steps():
    """The README's encoder-decoder example, shortened to 3 steps, runs and decodes."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = re.search(r"\n```python\n(task = nc.tasks.SourceReversalTask.*?)```", readme, flags=re.S).group(1)
    code = code.replace("steps=200", "steps=3").replace("batch_size=64)", "batch_size=4, progress=False)")
    code = code.replace("print(", "decoded = (")
    namespace = {"nc": nc}
    exec(compile(code, "README encoder-decoder example", "exec"), namespace)
    assert namespace["history"]["loss"].shape == (3,)
    assert namespace["decoded"].shape == (4, 9)


# --- learning ------------------------------------------------------------------------------------

def train_source_reversal(position, steps=200):
    """Train 2 encoder and 2 decoder blocks to reverse sources of 3 to 8 symbols; return the
    model, the task and the training history."""
    task = tasks.SourceReversalTask(n_tokens=8, n_symbols=10, min_tokens=3)
    model = nc.TinySeq2Seq(task.src_vocab_size, task.vocab_size, d_model=32, n_layers=2, n_heads=4,
                           max_src_len=task.n_tokens, max_tgt_len=task.seq_len, position=position, rng=0)
    opt = nc.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    with single_thread():  # small matrices: BLAS threads only add synchronisation
        hist = nc.fit(model, task, opt, steps, schedule=optim.warmup_cosine(3e-3, 30, steps), clip=1.0,
                      batch_size=64, seed=0, progress=False)
    return model.eval(), task, hist


@pytest.mark.slow
@pytest.mark.parametrize("position", ["pre", "post"])
def test_encoder_decoder_learns_to_reverse_its_source(position):
    """THE LEARNING TEST (slow, about 15 s alone): 200 steps of AdamW. Measured held-out token
    accuracy: pre 0.9988, post 0.9924; greedy decoding gets the whole sequence right for 98.5%
    (pre) and 94.5% (post) of 200 fresh sources. With the cross-attention's output zeroed the
    decoder is blind to the source: the accuracy falls to 0.14 (pre) and 0.15 (post), about
    chance among 10 symbols (the end token's place is partly guessable from the length so far)."""
    model, task, hist = train_source_reversal(position)
    (src, tgt_in, padding), tgt_out = task.batch(1000, seed=12345)  # fresh problems, never trained on
    with single_thread():
        accuracy = tasks.token_accuracy(model(src, tgt_in, padding), tgt_out)
        greedy = model.greedy_decode(src[:200], task.bos, task.seq_len, padding[:200])
    whole = tasks.sequence_accuracy(greedy, tgt_out[:200])
    print(f"{position}: held-out token accuracy {accuracy:.4f}, greedy whole-sequence accuracy {whole:.3f}")
    assert accuracy > 0.95
    assert whole > 0.8
    assert hist["loss"][-10:].mean() < 0.05 * hist["loss"][:10].mean()
    for block in model.decoder:  # cut the decoder off from the source
        block.cross_attn.o.weight.data[...] = 0
        block.cross_attn.o.bias.data[...] = 0
    blind = tasks.token_accuracy(model(src, tgt_in, padding), tgt_out)
    assert blind < 0.3, blind
