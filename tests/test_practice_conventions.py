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
