"""Snakemake, imported once, run many times: the tests' Snakemake runs are forks of this process.

Importing Snakemake and collecting its plugins takes most of a short run's time (about 2 of its 3 s
on a 2-core machine), and the pipeline tests start Snakemake dozens of times. This process does that
once, then reads one request per line on stdin (JSON: argv, cwd, env, stdout and stderr file paths)
and forks a child per request. The child takes the request's folder, environment and output files,
and runs `snakemake.cli.main()`, the entry point of the `snakemake` command, with the request's
arguments; it exits as that command would, and this process writes its exit code as one line.

What the fork shares with a fresh `python -m snakemake`: everything but the time to import. What it
does not: the interpreter's start-up, so the client (tests/pipeline/conftest.py) starts a fresh
process instead when the environment's PYTHONPATH differs from this one's; and the string-hash seed
(one per server), while every job, which writes the results, still starts as a fresh process.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import snakemake.cli
from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry
from snakemake_interface_logger_plugins.registry import LoggerPluginRegistry
from snakemake_interface_report_plugins.registry import ReportPluginRegistry
from snakemake_interface_storage_plugins.registry import StoragePluginRegistry

for registry in (ExecutorPluginRegistry, LoggerPluginRegistry, ReportPluginRegistry, StoragePluginRegistry):
    registry()  # each collects (imports) its installed plugins once, here, for every child


def run_child(request: dict) -> None:
    """In the forked child: become the `snakemake` command of `request`; never returns."""
    os.setsid()  # its own process group: a timeout stops it and every job it started
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY | os.O_CREAT),
                            (2, request["stderr"], os.O_WRONLY | os.O_CREAT)):
        os.dup2(os.open(path, flags), fd)
    sys.argv = ["snakemake", *request["argv"]]
    snakemake.cli.main()  # exits with the command's code (SystemExit), as `python -m snakemake` does
    sys.exit(0)


def serve() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            run_child(request)  # the child's SystemExit ends it with the command's code
        deadline = time.monotonic() + request["timeout"]
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if done[0] == 0:  # timed out: stop the run and its jobs, report it as killed
            os.killpg(pid, signal.SIGKILL)
            done = os.waitpid(pid, 0)
        print(json.dumps({"returncode": os.waitstatus_to_exitcode(done[1])}), flush=True)


if __name__ == "__main__":
    serve()
