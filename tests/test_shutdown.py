"""The workflow's end-of-run handlers cancel the wake-up timers Snakemake leaves behind."""

from __future__ import annotations

import threading
import time

from sdpa_lab.shutdown import cancel_pending_timers


def test_pending_timers_are_cancelled_and_never_fire():
    fired = []
    timers = [threading.Timer(30.0, fired.append, args=(i,)) for i in range(2)]
    for timer in timers:
        timer.start()
    other = threading.Thread(target=time.sleep, args=(0.2,))  # not a timer: left alone
    other.start()
    assert cancel_pending_timers() >= 2
    for timer in timers:
        timer.join(timeout=5)
        assert not timer.is_alive()
    assert fired == [] and other.is_alive()
    other.join()
