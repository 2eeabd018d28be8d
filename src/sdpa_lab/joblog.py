"""Logging for a pipeline job: its time, or its traceback, in the rule's log file.

The last line of a job that succeeded gives its wall time and its process's CPU time, split into the
start-up before the job's work (the interpreter, Snakemake's script preamble, the imports) and the work
itself: benchmarks/run.py reads it (Snakemake's benchmark files sample the CPU too seldom for short jobs).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def job_log(what: str, log_path: str | None, name: str = "sdpa_lab") -> Iterator[logging.Logger]:
    """A logger writing to `log_path` (if given) for the body's duration; logs the time taken or the failure."""
    logger = logging.getLogger(name)
    handler = None
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(log_path, mode="w")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        yield logger
        logger.info("%s: done in %.2f s; CPU s: start-up %.2f, work %.2f", what, time.perf_counter() - start,
                    cpu_start, time.process_time() - cpu_start)
    except Exception:
        logger.exception("%s failed", what)
        raise
    finally:
        if handler:
            logger.removeHandler(handler)
            handler.close()
