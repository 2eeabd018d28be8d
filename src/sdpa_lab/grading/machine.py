"""Whether a call lost to time or memory was lost to the machine rather than to the learner's code.

A call's time limit is first wall-clock time, so on a loaded machine a correct call could run
out of it while it waits for a CPU. The kernel counts, per process, the time it ran and the time
it waited runnable on a run queue (/proc/PID/schedstat). At the deadline, a call whose processes
waited for a CPU for at least STARVED of its time and have not yet run `limit` seconds of CPU
gets more time, up to WALL_FACTOR times the limit: the limit becomes CPU time. A learner's
endless loop runs its CPU time away and hangs as before; a learner's sleep neither runs nor
waits and hangs too. A call still starved at WALL_FACTOR times the limit, and a start (Python
and NumPy, before any of the learner's code runs) that runs out of its time, are the machine's:
made again, and never failed. Likewise a
process killed by the kernel for memory the whole machine lacked (/proc/vmstat's oom_kill grew,
the grade's own cgroup counted no kill of its limit) is the machine's, not the learner's.
"""

from __future__ import annotations

from pathlib import Path

STARVED = 0.5  # of a call's time spent waiting for a CPU: the machine's doing, not the code's
WALL_FACTOR = 3  # a call starved by the machine may take this many times its limit of wall-clock time
RETRIES = 2  # times a call lost to the machine is made again (in a fresh process) before its part is left ungraded


def group(pgid: int) -> list[int]:
    """The processes of a process group (a plain learner's process and all it started)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            if int(stat.rsplit(")", 1)[1].split()[2]) == pgid:  # field 5, after the name in parentheses
                pids.append(int(entry.name))
    return pids


def snapshot(pids) -> dict[int, tuple[int, int]]:
    """{pid: (nanoseconds run, nanoseconds waited for a CPU)} of the processes still there."""
    out = {}
    for pid in pids:
        try:
            run, wait, _ = (int(x) for x in Path(f"/proc/{pid}/schedstat").read_text().split())
        except (OSError, ValueError):  # ended meanwhile, or no schedstat in this kernel
            continue
        out[pid] = (run, wait)
    return out


def since(before: dict, now: dict) -> tuple[float, float]:
    """(seconds run, seconds waited for a CPU) by the processes of `now` since `before`."""
    run = wait = 0
    for pid, (r, w) in now.items():
        r0, w0 = before.get(pid, (0, 0))
        run, wait = run + r - r0, wait + w - w0
    return run / 1e9, wait / 1e9


def starved(waited: float, elapsed: float) -> bool:
    """Whether a call spent enough of its `elapsed` seconds waiting for a CPU to be starved by the machine."""
    return waited >= STARVED * elapsed


def more_time(run: float, waited: float, elapsed: float, limit: float) -> float:
    """Seconds more a call gets at its deadline: where the machine starved it, until its processes have run `limit`
    seconds of CPU, within WALL_FACTOR times the limit in all; 0 where it ran (or slept) its time away."""
    if run >= limit or not starved(waited, elapsed):
        return 0.0
    return max(0.0, min(limit - run, WALL_FACTOR * limit - elapsed))


def lost_to_load(run: float, waited: float, elapsed: float, limit: float) -> bool:
    """Whether a call stopped at its deadline was the machine's: starved, and short of `limit` seconds of CPU."""
    return run < limit and starved(waited, elapsed)


def machine_oom_kills() -> int:
    """How many processes the kernel has killed for the machine's memory since it started (0 where unknown)."""
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def starved_message(limit: float, run: float, waited: float, doing: str) -> str:
    """What a part left ungraded for the machine's load says."""
    return (f"could not be graded: the machine is overloaded: while {doing}, within {WALL_FACTOR} times the time "
            f"limit of {limit:g} s, the code ran {run:.1f} s of CPU and waited {waited:.1f} s for one (tried "
            f"{RETRIES + 1} times); not a fail, grade it again when the machine is quieter")


def memory_message(doing: str) -> str:
    """What a part left ungraded for the machine's memory says."""
    return (f"could not be graded: the machine ran out of memory while {doing} (the kernel stopped a process for "
            f"memory the whole machine lacked, not for the grade's limit; tried {RETRIES + 1} times); not a fail, "
            "grade it again when the machine has memory to spare")
