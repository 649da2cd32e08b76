"""The progress line and the harness log.

On a terminal the status is one line rewritten in place (`\\r`); in a log (CI) a status line
is printed when the phase changes and otherwise at most every 30 seconds. Every message also
goes to `harness.log` in the output directory.
"""

import os
import sys
import time

from .config import fmt_duration


class Progress:
    def __init__(self, log_path=None):
        self.t0 = time.time()
        self.tty = sys.stdout.isatty()
        self.log_file = None
        self.set_log(log_path)
        self.phase_text = ""
        self.status_text = ""
        self.run_index = 0
        self.run_total = 0
        self.remaining = None  # estimated seconds left, set by the runner
        self.remaining_at = time.time()
        self._last_print = 0.0
        self._shown = False

    def set_log(self, path):
        if path:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.log_file = open(path, "a", buffering=1)

    def close(self):
        self._clear()
        if self.log_file:
            self.log_file.close()
            self.log_file = None

    def _stamp(self):
        return fmt_duration(time.time() - self.t0).rjust(6)

    def _clear(self):
        if self.tty and self._shown:
            sys.stdout.write("\r\033[K")
            sys.stdout.flush()
            self._shown = False

    def log(self, msg):
        """A message on its own line (the status line is redrawn after it)."""
        self._clear()
        line = "[%s] %s" % (self._stamp(), msg)
        print(line, flush=True)
        if self.log_file:
            self.log_file.write(line + "\n")
        if self.tty:
            self._draw(force=True)

    def warn(self, msg):
        self.log("WARNING: " + msg)

    def phase(self, text):
        self.phase_text = text
        self.status_text = ""
        if self.log_file:
            self.log_file.write("[%s] phase: %s\n" % (self._stamp(), text))
        self._draw(force=True)

    def status(self, text):
        self.status_text = text
        self._draw()

    def set_remaining(self, seconds):
        self.remaining = seconds
        self.remaining_at = time.time()

    def _line(self):
        parts = [self._stamp()]
        if self.run_total:
            parts.append("run %d/%d" % (self.run_index, self.run_total))
        parts.append(self.phase_text)
        if self.status_text:
            parts.append(self.status_text)
        if self.remaining is not None:
            left = max(0, self.remaining - (time.time() - self.remaining_at))
            parts.append("ETA " + fmt_duration(left))
        return " | ".join(p for p in parts if p)

    def _draw(self, force=False):
        now = time.time()
        line = self._line()
        if self.tty:
            width = 160
            try:
                width = os.get_terminal_size().columns - 1
            except OSError:
                pass
            sys.stdout.write("\r\033[K" + line[:width])
            sys.stdout.flush()
            self._shown = True
        elif force or now - self._last_print >= 30:
            print("  .. " + line, flush=True)
            self._last_print = now
