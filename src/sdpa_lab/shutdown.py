"""Let Snakemake, and each job, exit as soon as its work is done.

Snakemake 9's job scheduler re-arms a one-second `threading.Timer` after every
scheduling round (the wake-up of its job-rate limiter, `--max-jobs-per-timespan`,
default 100/1s). The timer is not a daemon thread, so once the last job is done
the interpreter still waits for it: up to a second on every run that ran jobs,
a tenth of our whole pipeline. When the workflow's `onsuccess`/`onerror` handler
runs, every job is over and those wake-ups have nothing left to wake, so the
handlers in workflow/rules/common.smk cancel them.

Then the interpreter itself: at exit CPython runs a last garbage collection
over every object still alive. Snakemake's process holds about 10^5 of them,
a third of a second of CPU at the end of every call (a no-op's third); each
job's process, with NumPy and Snakemake's script preamble loaded, a twentieth.
`skip_final_collection` spares them that.
"""

from __future__ import annotations

import atexit
import gc
import threading


def cancel_pending_timers() -> int:
    """Cancel every `threading.Timer` still waiting in this process; returns how many."""
    timers = [t for t in threading.enumerate() if isinstance(t, threading.Timer) and t.is_alive()]
    for timer in timers:
        timer.cancel()
    return len(timers)


_final_collection_skipped = False


def skip_final_collection() -> None:
    """Let this process exit without the interpreter's last garbage collection.

    At exit, `gc.freeze` puts every object still alive out of the collector's
    reach. Reference counting still closes the files and frees the memory it
    owns, and exit handlers registered before this call (logging's flush, for
    one) still run after it; only objects that nothing but a reference cycle
    keeps alive are left to the operating system with the process, their
    finalizers not run, which CPython already allows at exit. Called once per
    process: by the Snakefile (common.smk) and by each job script.
    """
    global _final_collection_skipped
    if not _final_collection_skipped:
        atexit.register(gc.freeze)
        _final_collection_skipped = True
