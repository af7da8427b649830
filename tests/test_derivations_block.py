"""The residual sub-layer's step-through (every norm position), explain's --position, --groups
and --p, and the one abbreviation rule for the arrays a step-through prints."""

import contextlib
import io
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as hs

import normcore as nc
from normcore.cli import main
from normcore.derivations import step_through
from normcore.derivations.blocks import POSITIONS, identity_share
from normcore.i18n.width import display_width
from norm_tiers import suite_settings

SHAPES = hs.sampled_from([(3, 4), (2, 5), (1, 3), (2, 3, 4), (2, 2, 3), (1, 4, 2)])
PARAMETERS = {"pre": ["gamma", "beta", "W", "b"], "post": ["gamma", "beta", "W", "b"],
              "deepnorm": ["gamma", "beta", "W", "b"], "none": ["W", "b"],
              "peri": ["gamma", "beta", "W", "b", "gamma_f", "beta_f"], "reordered": ["W", "b", "gamma_f", "beta_f"]}


def _layernorm(st, gamma, beta):
    ln = nc.LayerNorm(st.tape["x"].value.shape[-1])
    ln.weight.data[...], ln.bias.data[...] = st.tape[gamma].value, st.tape[beta].value
    return ln


def _by_hand(position, st, layer_index=1):
    """The sub-layer's gradients, written out here from the formulas (y = x + f(LN(x)) and the
    others; Pre-Norm at depth l: y = x + f(LN(x) / sqrt(l))) with normcore's LayerNorm and plain
    matrix products, for the tape's parameters."""
    x, dy, W, b = st.tape["x"].value, st.dy, st.tape["W"].value, st.tape["b"].value
    rows = (-1, x.shape[-1])
    alpha = 2.0 if position == "deepnorm" else 1.0  # DeepNorm for N = 8 blocks: (2 * 8)**(1/4)
    s = 1.0 / np.sqrt(layer_index)
    ln = _layernorm(st, "gamma", "beta") if position not in ("none", "reordered") else None
    grads = {}
    if position in ("post", "deepnorm"):
        ln.forward(alpha * x + x @ W + b)
        dz = ln.backward(dy)
        h, df, grads["x"] = x, dz, alpha * dz + dz @ W.T
    else:
        h = s * ln.forward(x) if ln else x
        df = dy
        if position in ("peri", "reordered"):
            out = _layernorm(st, "gamma_f", "beta_f")
            out.forward(h @ W + b)
            df = out.backward(dy)
            grads.update(gamma_f=out.weight.grad, beta_f=out.bias.grad)
        dh = df @ W.T
        grads["x"] = dy + (ln.backward(s * dh) if ln else dh)
    grads.update(W=h.reshape(rows).T @ df.reshape(rows), b=df.reshape(rows).sum(axis=0))
    if ln:
        grads.update(gamma=ln.weight.grad, beta=ln.bias.grad)
    return grads


@suite_settings(max_examples=30)
@given(position=hs.sampled_from(list(POSITIONS)), shape=SHAPES, seed=hs.integers(0, 2 ** 16))
def test_every_position_matches_its_compact_backward_and_central_differences(position, shape, seed):
    st = step_through("residual", shape=shape, seed=seed, position=position)
    assert st.passed, [c for c in st.checks if c.verdict == "DIFFERS"]
    assert {c.node for c in st.checks if c.against == "numerical"} == {n.name for n in st.tape}
    assert {c.node for c in st.checks if c.against == "compact"} == {"x", "y", *PARAMETERS[position]}
    expected = _by_hand(position, st)
    assert set(expected) == {"x", *PARAMETERS[position]}
    for name, grad in expected.items():  # rounding only (D = 2 makes dx about 0 in Post-Norm)
        diff = np.abs(st.tape[name].grad - grad).max()
        assert nc.rel_error(st.tape[name].grad, grad) < 1e-10 or diff < 1e-13, name
    for description, value in st.properties:
        assert value < 1e-12, description


@suite_settings(max_examples=10)
@given(shape=SHAPES, seed=hs.integers(0, 2 ** 16), layer_index=hs.integers(1, 16))
def test_layernorm_scaling_matches_its_compact_backward_and_central_differences(shape, seed, layer_index):
    st = step_through("residual", shape=shape, seed=seed, layer_index=layer_index)
    assert st.passed, [c for c in st.checks if c.verdict == "DIFFERS"]
    assert st.tape["hs"].value == pytest.approx(st.tape["h"].value / np.sqrt(layer_index), rel=1e-15)
    for name, grad in _by_hand("pre", st, layer_index).items():
        diff = np.abs(st.tape[name].grad - grad).max()
        assert nc.rel_error(st.tape[name].grad, grad) < 1e-10 or diff < 1e-13, name
    for description, value in st.properties:
        assert value < 1e-12, description


def test_layernorm_scaling_needs_pre_norm_and_explain_takes_it():
    with pytest.raises(ValueError, match="position pre"):
        step_through("residual", position="post", layer_index=2)
    with pytest.raises(ValueError, match="layer_index"):
        step_through("residual", layer_index=0)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["explain", "residual", "--layer-index", "4", "--summary"]) == 0
        assert main(["explain", "residual", "--position", "peri", "--layer-index", "4"]) == 2
    assert "LayerNorm Scaling" in out.getvalue() and "sqrt(l)" in out.getvalue()
    assert "--layer-index" in err.getvalue() and "position pre" in err.getvalue()
    assert all(display_width(line) <= 80 for line in (out.getvalue() + err.getvalue()).splitlines())


def test_the_reordered_norm_sits_on_the_branchs_output_only():
    st = step_through("residual", position="reordered", shape=(2, 3, 4), seed=1)
    names = [n.name for n in st.tape]
    assert "gamma" not in names and names.index("f") < names.index("mean_f") < names.index("y")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["explain", "residual", "--position", "reordered", "--summary"]) == 0
    assert "y = x + LN_f(f(x))" in out.getvalue()


@suite_settings(max_examples=12)
@given(shape=SHAPES, seed=hs.integers(0, 2 ** 16))
def test_the_identity_share_is_dy_itself_unless_the_norm_sits_on_the_identity_path(shape, seed):
    for position in POSITIONS:
        st = step_through("residual", shape=shape, seed=seed, position=position)
        share = identity_share(st.tape, position)
        if position in ("pre", "peri", "reordered", "none"):
            assert np.array_equal(share, st.dy), position  # bit for bit: the add's share is dy
        else:  # dz = LN'(dy) (times alpha): its mean over D is gone, so it is not dy
            dz = st.tape["z"].grad
            assert np.array_equal(share, dz if position == "post" else 2.0 * dz), position
            assert np.abs(share.sum(axis=-1)).max() < 1e-12
            assert np.abs(share - st.dy).max() > 1e-3
        # x fans out: its gradient is the identity share plus the share through the sub-layer
        shares = [c.share("x") for c in st.tape.consumers(st.tape["x"])]
        np.testing.assert_allclose(sum(shares), st.tape["x"].grad, rtol=1e-12, atol=1e-15)


def test_the_reference_is_normcores_own_residual_and_a_wrong_one_is_caught(monkeypatch):
    from normcore.nn.transformer import ResidualSublayers

    st = step_through("residual", position="deepnorm")
    assert st.reference == "ResidualSublayers._residual_backward"
    assert "alpha = (2N)**(1/4) = 2 for a stack of N = 8 blocks" in " ".join(map(str, st.notes))
    assert st.tape["ax"].value == pytest.approx(2.0 * st.tape["x"].value)

    def without_identity(self, dy, f_backward, norm, drop, out_norm=None):  # forgets "dy +"
        return norm.backward(f_backward(drop.backward(dy)))

    monkeypatch.setattr(ResidualSublayers, "_residual_backward", without_identity)
    st = step_through("residual", position="pre")
    assert not st.passed and st.check("x", "compact").verdict == "DIFFERS"
    assert st.check("x", "numerical").verdict in ("exact", "close")  # the tape itself is right


def test_a_tape_without_the_identity_edge_is_caught(monkeypatch):
    from normcore.derivations.tape import Tape

    add = Tape.add

    def add_losing_the_first_share(self, a, b, name, step, tex, over_b=None):
        node = add(self, a, b, name, step, tex, over_b)
        if name == "y":  # the residual add sends nothing back along the identity path
            node.edges[0].vjp = lambda g, out, u, v: np.zeros_like(u)
        return node

    monkeypatch.setattr(Tape, "add", add_losing_the_first_share)
    st = step_through("residual", position="pre", shape=(2, 3))
    assert not st.passed
    assert st.check("x", "compact").verdict == st.check("x", "numerical").verdict == "DIFFERS"


def test_node_names_follow_the_norm_they_belong_to():
    names = {pos: [n.name for n in step_through("residual", position=pos).tape] for pos in POSITIONS}
    assert names["pre"] == ["x", "gamma", "beta", "W", "b", "mean", "xc", "xc2", "var", "var_eps", "rstd",
                            "x_hat", "scaled", "h", "u", "f", "y"]
    assert names["post"][5:] == ["u", "f", "z", "mean_z", "xc_z", "xc2_z", "var_z", "var_eps_z", "rstd_z",
                                 "z_hat", "scaled_z", "y"]
    assert names["deepnorm"][5:8] == ["ax", "u", "f"]
    assert names["none"] == ["x", "W", "b", "u", "f", "y"]
    assert names["peri"][5:7] == ["gamma_f", "beta_f"]
    assert names["peri"][-12:] == ["u", "f", "mean_f", "xc_f", "xc2_f", "var_f", "var_eps_f", "rstd_f", "f_hat",
                                   "scaled_f", "o", "y"]
    assert all(len(set(n)) == len(n) for n in names.values())  # no name twice on a tape


def _run(argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exc:
            status = exc.code
    return status, out.getvalue(), " ".join(err.getvalue().split())


def _fits(text):
    return max(display_width(line) for line in text.splitlines()) <= 80


FAN_OUT = {"pre": "dL/dx = share from mean + share from xc + share from y",
           "post": "dL/dx = share from u + share from z",
           "deepnorm": "dL/dx = share from ax + share from u",
           "peri": "dL/dx = share from mean + share from xc + share from y",
           "reordered": "dL/dx = share from u + share from y",
           "none": "dL/dx = share from u + share from y"}


@pytest.mark.parametrize("position", list(POSITIONS))
def test_explain_residual_shows_where_the_identity_gradient_enters(position):
    status, text, _ = _run(["explain", "residual", "--position", position, "--shape", "2x2x3"])
    assert status == 0 and _fits(text)
    lines = text.splitlines()
    assert lines[0].startswith(f"{POSITIONS[position][0]} residual step by step: x of shape (2, 2, 3)")
    assert FAN_OUT[position] in text
    words = " ".join(text.split())
    st = step_through("residual", shape=(2, 2, 3), position=position)
    assert "The identity path" in words and lines[-1] == f"All {len(st.checks)} checks are exact or close."
    if position in ("post", "deepnorm"):
        assert re.search(r"the identity share differs from dy by up to \d", words)


@pytest.mark.parametrize("position", ["pre", "post"])
def test_explain_residual_summary_step_md_and_svg(position, monkeypatch, tmp_path):
    import xml.etree.ElementTree as ET

    st = step_through("residual", position=position)
    status, summary, _ = _run(["explain", "residual", "--position", position, "--summary"])
    assert status == 0 and _fits(summary) and not re.search(r"\d\.\d{4}", summary)
    assert summary.splitlines()[-1] == f"All {len(st.checks)} checks are exact or close."

    status, stepped, _ = _run(["explain", "residual", "--position", position, "--step"], "\n\nb\nq\n",
                              monkeypatch)
    order = [n.index for n in reversed(st.tape.nodes)]
    shown = [int(line[1:3]) for line in stepped.splitlines() if line[:1] == "[" and line[3:4] == "]"]
    assert status == 0 and shown == [order[0], order[1], order[2], order[1]] and _fits(stepped)

    status, md, _ = _run(["explain", "residual", "--position", position, "--format", "md"])
    assert status == 0 and all(f"### [{n.index}] `{n.name}`" in md for n in st.tape)
    assert md.count("$$") % 2 == 0

    path = tmp_path / "residual.svg"
    status, text, _ = _run(["explain", "residual", "--position", position, "--graph", str(path)])
    assert status == 0 and ET.parse(path).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    direct = {"pre": "direct: x -> y", "post": "direct: x -> z -> xc_z -> z_hat -> scaled_z -> y"}
    first, rest = text.split("\n", 1)
    assert first == f"wrote {path}" and direct[position] in rest and _fits(rest)


def test_post_norm_graph_puts_the_norm_on_the_identity_route_and_no_boxes_overlap():
    graph = step_through("residual", position="post").graph()
    labels = [label.split(":")[0] for label in graph.routes]
    assert labels == ["direct", "through the mean", "through the sub-layer f", "through the variance"]
    assert graph.positions["b"][1] == -1 and graph.positions["W"][1] == 1  # b: below, where u is free
    for position in POSITIONS:
        slots = list(step_through("residual", position=position).graph().positions.values())
        assert len(slots) == len(set(slots)), position  # one node per place
    pre = step_through("residual", position="pre").graph()
    assert [label.split(":")[0] for label in pre.routes] == ["direct", "through the LayerNorm and f"]


def test_residual_bad_requests_raise_clear_errors():
    with pytest.raises(ValueError, match="position must be one of pre, post, deepnorm, peri, reordered, none"):
        step_through("residual", position="middle")
    with pytest.raises(ValueError, match="position applies to the residual block step-through only, got "
                                         "LayerNorm"):
        step_through("layernorm", position="pre")
    with pytest.raises(ValueError, match="rank 2 or 3"):
        step_through("residual", shape=(4,))
    with pytest.raises(ValueError, match="takes no gamma or beta"):
        step_through("residual", gamma=np.ones(4))
    with pytest.raises(ValueError, match=r"dy must have the input's shape \(3, 4\)"):
        step_through("residual", dy=np.ones((4, 3)))
    with pytest.raises(ValueError, match="p applies to the Dropout step-through only, got GroupNorm"):
        step_through("groupnorm", p=0.5)
    with pytest.raises(ValueError, match="alpha applies to the DyT step-through only"):
        step_through("layernorm", alpha=0.5)


@pytest.mark.parametrize("argv,message", [
    (["layernorm", "--position", "post"], "argument --position: position applies to the residual block "
                                          "step-through only, got LayerNorm"),
    (["residual", "--position", "middle"], "argument --position: invalid choice: 'middle'"),
    (["layernorm", "--groups", "2"], "argument --groups: groups applies to the GroupNorm step-through only, "
                                     "got LayerNorm"),
    (["instancenorm", "--groups", "2"], "argument --groups: groups applies to the GroupNorm step-through only, "
                                        "got InstanceNorm"),
    (["groupnorm", "--shape", "2x4x3", "--groups", "3"],
     "argument --groups: G = 3 must divide the C = 4 channels of --shape 2x4x3"),
    (["groupnorm", "--groups", "0"], "argument --groups: expected a positive integer, got '0'"),
    (["groupnorm", "--groups", "two"], "argument --groups: expected a positive integer, got 'two'"),
    (["dropout", "--p", "1"], "argument --p: expected a number with 0 <= p < 1"),
    (["dropout", "--p", "-0.1"], "argument --p: expected a number with 0 <= p < 1"),
    (["dropout", "--p", "half"], "argument --p: expected a number with 0 <= p < 1"),
    (["softmax", "--p", "0.5"], "argument --p: p applies to the Dropout step-through only, got softmax"),
    (["residual", "--shape", "2x2x2x2"], "argument --shape: the residual block step-through takes an input "
                                         "of rank 2 or 3"),
])
def test_explain_options_refuse_what_they_cannot_do(argv, message):
    status, text, err = _run(["explain", *argv])
    assert status == 2 and message in err and not text
    assert "Traceback" not in err


def test_explain_groups_and_p_reach_the_step_through():
    status, text, _ = _run(["explain", "groupnorm", "--shape", "2x6x2", "--groups", "3"])
    assert status == 0 and "reshaped to (2, 3, 4)" in text and _fits(text)
    status, text, _ = _run(["explain", "dropout", "--shape", "4x5", "--p", "0.25"])
    assert status == 0 and "p = 0.25" in text and "1/(1-p) = 1.333" in text
    st = step_through("dropout", shape=(4, 5), p=0.25)
    assert f"keeps {int(st.mask.sum())} of 20" in " ".join(text.split())


def test_explain_help_shows_the_new_options_and_examples(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["explain", "--help"])
    out = capsys.readouterr().out
    for option in ("--position POS", "--groups G", "--p P"):
        assert option in out
    examples = out[out.index("examples:"):]
    assert "--position post" in examples and "--groups 3" in examples and "--p 0.25" in examples
    assert _fits(out)


# --- one abbreviation rule for every array printed ---------------------------------------------
NOTE = "Arrays abbreviated: the tape holds arrays of more than 60 values"


def _array_rows(text):
    """The printed rows of numbers: lines that are only numbers, brackets and '...'."""
    return [line for line in text.splitlines()
            if re.fullmatch(r"\s*\[*\s*(-?\d+\.?\d*\s*|\.\.\.\s*)+\]*", line) and re.search(r"\d", line)]


@pytest.mark.parametrize("argv", [["layernorm", "--shape", "16x16"], ["dropout", "--shape", "16x16"],
                                  ["residual", "--shape", "2x4x8"], ["batchnorm", "--shape", "16x16"]])
def test_a_large_tape_prints_every_array_by_its_corners_and_says_so_once(argv):
    status, text, _ = _run(["explain", *argv, "--no-latex"])
    assert status == 0 and _fits(text)
    assert " ".join(text.split()).count(NOTE) == 1
    rows = _array_rows(text)
    assert rows and all(len(re.findall(r"-?\d+\.\d+|(?<![.\d])\d+(?![.\d])", row)) <= 4 for row in rows)
    # every node's value is cut, the small ones too: at least one '...' per node of the tape
    st = step_through(argv[0], shape=tuple(map(int, argv[2].split("x"))))
    assert text.count("...") >= len(st.tape.nodes)


def test_a_statistic_is_cut_like_its_input():
    text = step_through("layernorm", shape=(16, 16)).text(latex=False, parts=("forward",))
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("[ 3] mean "))
    mean = [line.strip() for line in lines[at + 1:at + 6]]  # (16, 1): first 2, ..., last 2
    assert mean[2] == "..." and lines[at + 6].startswith("[ 4] xc ")
    gamma = lines[lines.index(next(line for line in lines if line.startswith("[ 1] gamma"))) + 1]
    assert gamma.count("...") == 1 and len(gamma.split()) == 5  # (16,): 2 values, ..., 2 values


def test_a_small_tape_prints_every_array_whole_and_no_note():
    status, text, _ = _run(["explain", "layernorm", "--shape", "3x4"])
    assert status == 0 and NOTE not in " ".join(text.split()) and "..." not in text
    status, text, _ = _run(["explain", "batchnorm", "--shape", "2x12"])  # 24 values: still whole
    assert status == 0 and "..." not in text


def test_the_note_comes_with_every_part_that_prints_arrays(monkeypatch):
    st = step_through("layernorm", shape=(16, 16))
    for parts in (("forward",), ("backward",), ("forward", "backward")):
        assert " ".join(st.text(parts=parts).split()).count(NOTE) == 1, parts
    assert NOTE not in " ".join(st.text(parts=("checks",)).split())
    status, stepped, _ = _run(["explain", "layernorm", "--shape", "16x16", "--step"], "q\n", monkeypatch)
    assert status == 0 and NOTE in " ".join(stepped.split())
    status, summary, _ = _run(["explain", "layernorm", "--shape", "16x16", "--summary"])
    assert status == 0 and NOTE not in " ".join(summary.split())  # no arrays, nothing to say
