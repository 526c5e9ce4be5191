"""The two ways a regrade stops early: bad input (:class:`RegradeError`, one line naming the
file and the field, nothing graded) and an interrupt (:class:`RegradeInterrupted`).
"""

from __future__ import annotations

import signal


class RegradeError(ValueError):
    """Bad input: ``str(err)`` is one line naming the file and the field."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))


class RegradeInterrupted(Exception):
    """Ctrl-C or a kill stopped the regrade; every grading child is gone.

    Attributes:
        signum: the signal.
        kept: submissions finished and recorded in the output folder (this run and earlier).
        remaining: submissions a rerun of the same command will grade.
        outdir: where they are.
    """

    def __init__(self, signum: int, kept: int, remaining: int, outdir: str,
                 stopped: int) -> None:
        self.signum, self.kept, self.remaining, self.outdir = signum, kept, remaining, outdir
        self.stopped = stopped
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = str(signum)
        if outdir:
            kept_text = (f"kept {kept} finished submission(s) in {outdir}; run the same "
                         f"command again to grade the other {remaining}")
        else:
            kept_text = ("nothing was kept (a dry run without -o works in a temporary folder; "
                         "give -o DIR to make it resumable)")
        super().__init__(f"interrupted ({name}): stopped {stopped} running grading(s) and "
                         f"every child process; {kept_text}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum
