"""Logging for a pipeline job: its time, or its traceback, in the rule's log file."""

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
    start = time.perf_counter()
    try:
        yield logger
        logger.info("%s: done in %.2f s", what, time.perf_counter() - start)
    except Exception:
        logger.exception("%s failed", what)
        raise
    finally:
        if handler:
            logger.removeHandler(handler)
            handler.close()
