"""Exiting quickly: the end-of-run handlers cancel the wake-up timers Snakemake leaves behind,
and a process can skip the interpreter's last garbage collection."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

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


EXIT_PROBE = textwrap.dedent("""
    import gc
    import sys
    from pathlib import Path

    from sdpa_lab.shutdown import skip_final_collection

    if sys.argv[1] == "skip":
        skip_final_collection()
        skip_final_collection()  # a second call changes nothing

    class Node:
        def __del__(self, mark=Path(sys.argv[2])):
            mark.write_text("collected")

    node = Node()
    node.self = node  # a cycle: garbage only the collector frees
    del node
    gc.disable()  # nothing but the interpreter's exit may collect it
    """)


@pytest.mark.parametrize("mode", ["skip", "keep"])
def test_skip_final_collection_leaves_cyclic_garbage_to_the_os(tmp_path, mode):
    mark = tmp_path / "collected"
    done = subprocess.run([sys.executable, "-c", EXIT_PROBE, mode, str(mark)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # Without the skip, the exit's collection finalizes the cycle; with it, the process just ends.
    assert mark.exists() == (mode == "keep")
