"""The one progress display (``normcore.progress``) that ``fit`` and ``normcore figures`` share."""

import io

from normcore.progress import Progress


def test_on_a_terminal_the_line_is_redrawn_in_place():
    out = io.StringIO()
    bar = Progress(total=4, stream=out, width=8, interval=0.0, interactive=True)
    for i in range(1, 5):
        bar.update(i, label="loss 1.0")
    bar.finish()
    text = out.getvalue()
    assert text.count("\r") == 4 and "|########| 100%" in text and text.endswith("\n")
    assert "loss 1.0" in text and text.count("\n") == 1


def test_on_a_terminal_redraws_are_rate_limited_but_the_end_is_always_drawn():
    out = io.StringIO()
    bar = Progress(total=100, stream=out, width=8, interval=3600.0, interactive=True)
    for i in range(1, 101):
        bar.update(i)
    assert out.getvalue().count("\r") == 1 and "100%" in out.getvalue()


def test_in_a_log_one_line_per_quarter_and_a_final_message():
    out = io.StringIO()
    show = Progress("[1/2] name ", stream=out, width=4)   # StringIO is not a terminal
    for i in range(101):
        show(i, 100, "label")                           # the experiments' calling convention
    show.finish("done")
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) == 6
    assert [line.split("|")[2].split()[0] for line in lines[:5]] == ["0%", "25%", "50%", "75%", "100%"]
    assert all(line.startswith("[1/2] name ") and len(line) <= 80 for line in lines)
    assert lines[-1] == "[1/2] name done"
