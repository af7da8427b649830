"""The README's commands and example stay true."""

import pathlib
import re

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def bash_blocks():
    return re.findall(r"```bash\n(.*?)```", README, flags=re.S)


def test_ci_runs_the_readme_test_command():
    test_command = [line for line in bash_blocks()[1].splitlines() if line and not line.startswith("#")]
    assert len(test_command) == 1 and "pytest" in test_command[0]
    assert test_command[0] in (ROOT / ".ci" / "run").read_text()


def test_the_ten_line_example_runs():
    code = re.search(r"## Ten lines\n\n```python\n(.*?)```", README, flags=re.S).group(1)
    assert len(code.strip().splitlines()) <= 11
    namespace = {}
    exec(compile(code, "README example", "exec"), namespace)
    np.testing.assert_allclose(namespace["dx"].sum(axis=-1), 0, atol=1e-12)


def test_the_notebooks_start_where_the_readme_says():
    sentence = re.search(r"each go from a tiny concrete example \((\w+) of them\s+from a class's test scores",
                         README).group(1)
    listed = ["batchnorm", "layernorm", "rmsnorm", "groupnorm_instancenorm", "dropout", "pre_post_norm",
              "interview_practice"]  # the notebooks the sentence is about, in its order
    sources = [ROOT / "notebooks" / "src" / f"{name}.py" for name in listed]
    intuitions = {p.stem: p.read_text().split("## 2.")[0] for p in sources}  # up to the second section
    with_scores = [name for name, text in intuitions.items() if "scores" in text]
    numbers = {"five": 5, "six": 6, "seven": 7, "four": 4}
    assert len(with_scores) == numbers[sentence], with_scores
    assert "study group" in intuitions["dropout"] and "draft" in intuitions["pre_post_norm"]


def test_readme_says_how_to_open_the_notebooks():
    import configparser

    extras = configparser.ConfigParser()
    extras.read(ROOT / "setup.cfg")
    jupyter = extras["options.extras_require"]["notebooks"].split()
    assert any(req.startswith("notebook>=") for req in jupyter)
    command = [block for block in bash_blocks() if ".[notebooks]" in block]
    assert len(command) == 1 and "jupyter notebook notebooks/" in command[0]
