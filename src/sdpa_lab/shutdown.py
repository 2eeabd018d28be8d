"""Let Snakemake exit as soon as its work is done.

Snakemake 9's job scheduler re-arms a one-second `threading.Timer` after every
scheduling round (the wake-up of its job-rate limiter, `--max-jobs-per-timespan`,
default 100/1s). The timer is not a daemon thread, so once the last job is done
the interpreter still waits for it: up to a second on every run that ran jobs,
a tenth of our whole pipeline. When the workflow's `onsuccess`/`onerror` handler
runs, every job is over and those wake-ups have nothing left to wake, so the
handlers in workflow/rules/common.smk cancel them.
"""

from __future__ import annotations

import threading


def cancel_pending_timers() -> int:
    """Cancel every `threading.Timer` still waiting in this process; returns how many."""
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer) and t.is_alive()]
    for timer in timers:
        timer.cancel()
    return len(timers)
