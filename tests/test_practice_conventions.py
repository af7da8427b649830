"""The write-ups' conventions, named as conventions: momentum as the decay of the old value
(Keras' 0.9), eps added to sigma, eps added to the RMS. When the grader names one, its hint
says that some Chinese material writes it so, what PyTorch's convention is and what changes
in the numbers, in English and in Chinese.
"""

import importlib.util
from pathlib import Path

import pytest

from normcore import i18n
from normcore.practice import format_report, grade_file
from normcore.practice.catalog import BY_ID

HERE = Path(__file__).parent
CONVENTIONS = [("bn-momentum-flipped", "batchnorm"), ("eps-outside-sqrt", "batchnorm"),
               ("eps-outside-sqrt", "layernorm"), ("eps-outside-sqrt", "rmsnorm")]
# what each hint says, in English and in Chinese: the material, PyTorch's convention, the numbers
SAYS = {"en": ("Some Chinese material writes", "PyTorch"), "zh": ("有些中文资料", "PyTorch")}
NUMBERS = {"bn-momentum-flipped": ("0.9", "90%", "10%"), "eps-outside-sqrt": ("eps / 2", "5e-6")}


def _bug(tmp_path, mistake, exercise):
    spec = importlib.util.spec_from_file_location("practice_bugs_generate_conventions",
                                                  HERE / "practice_bugs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp_path / f"my_{exercise}.py"
    path.write_text(module.bug_source(BY_ID[mistake], exercise, 0))
    return path


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("mistake", "exercise"), CONVENTIONS)
def test_a_convention_is_named_with_the_material_that_writes_it_and_pytorchs(mistake, exercise,
                                                                             lang, tmp_path):
    report = grade_file(_bug(tmp_path, mistake, exercise))
    assert report.diagnosis_ids == [mistake]
    i18n.set_language(lang)
    try:
        text = format_report(report)
    finally:
        i18n.set_language("en")
    flat = "".join(text.split())  # wrapped lines joined again (Chinese wraps between characters)
    for words in SAYS[lang] + NUMBERS[mistake]:
        assert "".join(words.split()) in flat, (words, text)


# momentum as Keras writes it, with its own default: a layer built without a momentum keeps
# 0.9 of the running value (PyTorch's default, reached the other way), any other is flipped
KERAS_DEFAULT = """import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.9):
        self.eps, self.momentum, self.training = eps, momentum, True
        self.gamma = Parameter(np.ones(num_features))
        self.beta = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)

    def train(self, mode=True):
        self.training = mode

    def eval(self):
        self.training = False

    def forward(self, x):
        axes = (0,) + tuple(range(2, x.ndim))
        view = (1, -1) + (1,) * (x.ndim - 2)
        if self.training:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes)
            n = x.size // x.shape[1]
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mean
            self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        self.rstd = 1 / np.sqrt(var.reshape(view) + self.eps)
        self.x_hat = (x - mean.reshape(view)) * self.rstd
        self.axes, self.view, self.batch = axes, view, self.training
        return self.gamma.data.reshape(view) * self.x_hat + self.beta.data.reshape(view)

    def backward(self, dy):
        axes = self.axes
        self.gamma.grad += (dy * self.x_hat).sum(axis=axes)
        self.beta.grad += dy.sum(axis=axes)
        d = dy * self.gamma.data.reshape(self.view)
        if not self.batch:
            return self.rstd * d
        return self.rstd * (d - d.mean(axis=axes, keepdims=True)
                            - self.x_hat * (d * self.x_hat).mean(axis=axes, keepdims=True))
"""


def test_the_decay_convention_with_its_own_default_is_named_as_keras(tmp_path):
    path = tmp_path / "my_batchnorm.py"
    path.write_text(KERAS_DEFAULT)
    report = grade_file(path)
    assert report.diagnosis_ids == ["bn-momentum-flipped"] and report.variants == ["bn-momentum-flipped"]
    default = [c for c in report.checks if c.probe == "running stats (16, 3)"]
    assert default and all(c.status == "pass" for c in default)  # the default is PyTorch's 0.1
    assert "Some Chinese material writes" in " ".join(format_report(report).split())
