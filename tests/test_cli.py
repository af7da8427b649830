"""The ``normcore`` command line."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import normcore as nc
from normcore import cli, layer_cases


def test_gradcheck_command_lists_every_layer_and_passes(monkeypatch, capsys):
    # The command checks layer_cases.all_cases(): every norm case and every Transformer case,
    # each of which test_norm_gradients.py and test_nn_layers.py gradcheck on its own. Here the
    # command runs the norm cases and the smallest model (checking all the models a third time
    # would cost a minute and test nothing new): its table, its verdicts and its width.
    from normcore.commands import gradcheck as command
    assert command.all_cases is layer_cases.all_cases
    labels = [c.label for c in layer_cases.all_cases(0)]
    assert labels == [c.label for c in layer_cases.norm_cases(0) + layer_cases.transformer_cases(0)
                      + layer_cases.weight_cases(0)]
    monkeypatch.setattr(command, "all_cases", lambda seed=0: [
        *layer_cases.norm_cases(seed),
        *[c for c in layer_cases.transformer_cases(seed) if c.label == "TinyTransformer 2 blocks pre"]])
    assert cli.main(["gradcheck"]) == 0
    out = capsys.readouterr().out
    for name in ["LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
                 "InstanceNorm2d", "InstanceNorm3d", "Dropout", "BatchNorm1d no bias",
                 "GroupNorm (N,C,D,H,W) G=2 no bias", "TinyTransformer"]:
        assert name in out
    rows = [line for line in out.splitlines() if line.rstrip().endswith(("pass", "FAIL"))]
    assert len(rows) >= 3 * 15 and all(line.endswith("pass") for line in rows)
    errors = [float(line.split()[-2]) for line in rows]
    assert max(errors) <= 1e-7
    assert max(map(len, out.splitlines())) <= 80


def test_gradcheck_command_fails_with_exit_status_1_on_a_wrong_backward(monkeypatch, capsys):
    class Wrong(nc.LayerNorm):
        def backward(self, dy):
            super().backward(dy)  # dgamma and dbeta are right
            x_hat, rstd, _ = self._cached()
            return rstd * dy * self.gamma.data  # dx forgets both mean terms

    def cases(seed=0):
        x = np.random.default_rng(seed).standard_normal((3, 4))
        return [layer_cases.Case("Wrong LayerNorm", Wrong(4), (x,))]

    monkeypatch.setattr("normcore.commands.gradcheck.all_cases", cases)
    assert cli.main(["gradcheck"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "1 gradient(s) FAIL" in out


def test_console_entry_point_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "normcore", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "gradcheck" in done.stdout


# --- every help and every table within 80 columns; help with a description and an example ----
HELPS = ([[]] + [[name] for name in cli.COMMANDS]
         + [["practice", action] for action in ("list", "new", "check", "solution")])


def _help(argv, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps to the terminal; a test has none
    with pytest.raises(SystemExit) as done:
        cli.main(argv + ["--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", HELPS, ids=lambda argv: " ".join(argv) or "normcore")
def test_every_help_fits_80_columns_with_a_description_and_an_example(argv, monkeypatch, capsys):
    out = _help(argv, monkeypatch, capsys)
    assert max(map(len, out.splitlines())) <= 80, out
    description = out.split("\n\n")[1]  # after the usage
    assert len(description.split()) >= 8, description
    example = out[out.index("example"):]  # "example:" or "examples:", after the options
    assert f"normcore {' '.join(argv)}".rstrip() in example, out


def _wide(text):
    return [line for line in text.splitlines() if len(line) > 80]


def test_gradcheck_counts_one_layer_in_the_singular(capsys):
    assert cli.main(["gradcheck", "--only", "TinyTransformer 2 blocks pre"]) == 0
    out = capsys.readouterr().out
    assert "1 layer checked in float64" in out and "1 layers" not in out


def test_gradcheck_table_fits_80_columns_with_long_tensor_names(capsys):
    assert cli.main(["gradcheck", "--only", "transformerblock pre layernorm"]) == 0
    out = capsys.readouterr().out
    assert not _wide(out)
    rows = [line.split() for line in out.splitlines() if line.endswith(("pass", "FAIL"))]
    assert ["attn.q.weight", "(4,", "4)"] == rows[3][:3]
    columns = {line.index(line.split()[-2]) for line in out.splitlines() if line.endswith("pass")}
    assert len(columns) == 1  # every rel error in one column, whatever the tensor's name
    assert "weight is gamma and bias is beta" in out  # said once, under the table
    assert out.count("gamma") == 1


@pytest.mark.slow  # gradchecks a whole TinyTransformer
def test_the_gradcheck_report_table_sizes_its_columns_to_the_names():
    model = nc.TinyTransformer(5, 4, 2, 2, 3, d_ff=4, rng=0)  # the names of a model, few numbers
    table = nc.gradcheck(model, np.random.default_rng(0).integers(0, 5, (2, 3))).table()
    lines = table.splitlines()
    assert not _wide(table) and len({line.index("e-") for line in lines[1:]}) == 1
    assert any("blocks.1.ffn.fc2.weight" in line for line in lines)


def test_figures_prints_within_80_columns(tmp_path, capsys):
    assert cli.main(["figures", "invariance", "--quick", "--outdir", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert not _wide(captured.out + captured.err) and "wrote 1 figure(s)" in captured.err


def test_long_progress_labels_and_file_lists_stay_within_80_columns(monkeypatch, tmp_path, capsys):
    def run_and_plot(name, quick, outdir, seed, progress):
        for done in range(5):
            progress(done, 4, "layernorm, batch 128, seed 2, and a label longer than the line")
        return None, [tmp_path / f"{name}_figure_number_{i}.png" for i in range(5)]

    monkeypatch.setattr("normcore.experiments.run_and_plot", run_and_plot)
    assert cli.main(["figures", "pre_post_gradients", "--outdir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert not _wide(err) and "pre_post_gradients_figure_number_4.png" in err


# --- options that select nothing, and bad values, are errors that name the option -------------
@pytest.mark.parametrize("argv, option", [
    (["gradcheck", "--only", "nothing"], "--only"),
    (["gradcheck", "--tol", "0"], "--tol"),
    (["gradcheck", "--seed", "-1"], "--seed"),
    (["explain", "layernorm", "--seed", "-1"], "--seed"),
    (["explain", "layernorm", "--shape", "2y4"], "--shape"),
    (["explain", "batchnorm", "--shape", "1x4"], "--shape"),
    (["explain", "layernorm", "--causal"], "--causal"),
    (["tour", "--seed", "-1"], "--seed"),
    (["compare", "layernorm", "--seed", "-1"], "--seed"),
    (["compare", "no-such-model"], "MODEL"),
    (["figures", "--seed", "x"], "--seed"),
    (["figures", "no_such_experiment"], "NAME"),
    (["practice", "new", "no_such_exercise"], "NAME"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_bad_or_empty_selection_exits_2_naming_the_option(argv, option, capsys):
    try:
        status = cli.main(argv)
    except SystemExit as done:  # argparse's own check
        status = done.code
    captured = capsys.readouterr()
    assert status == 2
    assert f"argument {option}" in captured.err and not _wide(captured.err), captured.err
    assert "all gradients pass" not in captured.out


# --- the clone in a folder named normcore, run from its parent ------------------------------
def test_a_clone_named_normcore_imports_from_its_parent_folder(tmp_path):
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "normcore").symlink_to(root, target_is_directory=True)  # the clone, as named
    script = tmp_path / "script.py"
    script.write_text("import numpy as np, normcore as nc\n"
                      "print(nc.__file__)\n"
                      "x = np.arange(6.0).reshape(2, 3) ** 2\n"
                      "print(nc.gradcheck(nc.LayerNorm(3), x).passed)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    package, passed = done.stdout.split()
    assert package == str(tmp_path / "normcore" / "normcore" / "__init__.py") and passed == "True"
    done = subprocess.run([sys.executable, "-m", "normcore", "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "gradcheck" in done.stdout, done.stderr


# --- an argument the command does not take: that command's usage, and the option meant ---------
@pytest.mark.parametrize("argv, usage, unknown, meant", [
    (["bench", "--quik"], "usage: normcore bench", "--quik", "(the closest option: --quick)"),
    (["figures", "warmup", "--quick", "--sed", "1"], "usage: normcore figures", "--sed 1",
     "(the closest option: --seed)"),
    (["explain", "layernorm", "extra"], "usage: normcore explain", "extra", None),
    (["--bogus"], "usage: normcore [-h]", "--bogus", None),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_an_unknown_argument_shows_the_commands_usage(argv, usage, unknown, meant, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith(usage), err
    said = " ".join(err.split())  # the message is wrapped at 80 columns
    assert "unrecognized arguments: " + unknown in said
    assert (meant is None) == ("closest option" not in said) and (meant is None or meant in said), err
    assert not _wide(err)
