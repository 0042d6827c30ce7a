"""Training progress the trainers share: a tqdm bar on a terminal, plain timestamped lines anywhere else.

A pipeline sends a job's stderr to its log file, where a tqdm bar is one line of carriage-return-joined updates. So
when the stream is not a terminal, progress is a line per LOG_INTERVAL_S (and one after the first and the last step):

    2026-12-05T10:00:00Z run 2 of 8, step 300 of 1000, loss 0.1234
"""
import sys
import time
from datetime import UTC, datetime

from tqdm import tqdm

LOG_INTERVAL_S = 60.0  # seconds between two plain lines


class Progress:
    """Iterate `range(total)`, reporting progress under `label` ("run 2 of 8", "sae"); `set_loss` after a step
    gives the loss to show. `enabled=False`: nothing is written at all."""

    def __init__(self, total, label, unit="step", enabled=True, file=None, interval_s=None):
        self.total, self.label, self.unit, self.enabled = total, label, unit, enabled
        self.file = file if file is not None else sys.stderr
        self.interval_s = LOG_INTERVAL_S if interval_s is None else interval_s
        self.loss, self._bar = None, None

    def __iter__(self):
        if not self.enabled:
            yield from range(self.total)
        elif is_terminal(self.file):
            with tqdm(range(self.total), desc=self.label, file=self.file, mininterval=10) as self._bar:
                yield from self._bar
        else:
            last = None
            for i in range(self.total):
                yield i
                now = time.monotonic()
                if last is None or now - last >= self.interval_s or i == self.total - 1:
                    self.log_line(i + 1)
                    last = now

    def set_loss(self, value):
        self.loss = float(value)
        if self._bar is not None:
            self._bar.set_postfix(loss=f"{self.loss:.4f}", refresh=False)

    def log_line(self, done):
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        loss = "" if self.loss is None else f", loss {self.loss:.4f}"
        print(f"{stamp} {self.label}, {self.unit} {done} of {self.total}{loss}", file=self.file, flush=True)


def is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
