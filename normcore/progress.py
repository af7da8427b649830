"""The one progress display of normcore (``fit`` and ``normcore figures`` both draw it), and
the one stopwatch (``Stopwatch``: the progress display, the timing loop of ``normcore bench``,
``fit``, ``normcore figures`` and the interview's time box all measure elapsed time with it).

One line on a stream (stderr by default)::

    [2/7] covariate_shift   |############            |  50%    3.1s  label

On a terminal the line is redrawn in place (at most every ``interval`` seconds, and always at
the end); in a log file or a pipe a line is written at each quarter of the way instead, so a
log shows how far a run got without thousands of carriage returns.
"""

import sys
import time

from .i18n.width import clip, display_width, wrap

WIDTH = 80  # every line the display writes fits in 80 display columns
CLOCK = time.perf_counter  # seconds on a monotonic clock: only differences mean anything


class Stopwatch:
    """Seconds since it was made: ``elapsed()``. ``clock`` (default ``CLOCK``) is what it reads;
    a test gives a fake one."""

    def __init__(self, clock=None):
        self.clock = clock or CLOCK
        self.start = self.clock()

    def elapsed(self):
        return self.clock() - self.start


class Progress:
    """A one-line progress display: ``update(done, total, label)``, then ``finish(message)``.

    ``stream`` defaults to ``sys.stderr`` as it is when the display is made (tests replace it);
    ``interactive`` (redraw in place) defaults to whether the stream is a terminal.
    The display is also a callable, ``progress(done, total, label)``, as the experiments'
    ``run(progress=...)`` expects.
    """

    def __init__(self, prefix="", total=None, stream=None, width=24, interval=0.1,
                 interactive=None):
        self.prefix, self.total, self.width, self.interval = prefix, total, width, interval
        self.stream = sys.stderr if stream is None else stream
        if interactive is None:
            interactive = getattr(self.stream, "isatty", lambda: False)()
        self.interactive = interactive
        self.watch = Stopwatch()
        self._drawn_at = self.watch.start
        self._quarter = -1  # the last quarter written, when not interactive

    def update(self, done, total=None, label=""):
        """Show that ``done`` of ``total`` (default: the constructor's) are done."""
        total = self.total if total is None else total
        frac = min(max(done / total if total else 1.0, 0.0), 1.0)
        now = self.watch.clock()
        if self.interactive:
            if done < total and now - self._drawn_at < self.interval:
                return
        elif int(4 * frac) <= self._quarter and done < total:
            return
        self._drawn_at, self._quarter = now, int(4 * frac)
        bar = "#" * int(self.width * frac)
        line = f"{self.prefix}|{bar:<{self.width}}| {int(100 * frac):3d}% {now - self.watch.start:6.1f}s  "
        room = WIDTH - display_width(line)  # a label too long for the line is cut
        line += label if display_width(label) <= room else clip(label, max(0, room - 3)) + "..."
        self._write(line.rstrip())

    __call__ = update

    def finish(self, message=""):
        """End the line (replacing it by ``prefix + message`` when a message is given)."""
        if message:  # a long message goes on in lines aligned under its start
            indent = " " * display_width(self.prefix)
            first, *rest = wrap(message, max(30, WIDTH - len(indent))) or [""]
            self._write(f"{self.prefix}{first}", end="\n")
            if rest:
                self.stream.write("".join(f"{indent}{line}\n" for line in rest))
                self.stream.flush()
        elif self.interactive:
            self.stream.write("\n")
            self.stream.flush()

    def _write(self, line, end=""):
        if self.interactive:
            self.stream.write("\r" + line + "\033[K" + end)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
