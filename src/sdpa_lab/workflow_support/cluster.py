"""Say which rule ran out of memory on a SLURM cluster, and with what limit.

When a cluster enforces memory, SLURM kills a job above its `--mem` (Snakemake's
`mem_mb`) and the slurm executor plugin reports only `SLURM status is: 'FAILED'`.
The cause is in the job's SLURM log (.snakemake/slurm_logs/<rule_or_group>/<jobid>.log):

    slurmstepd-node: error: StepId=11.batch exceeded memory limit (58630144 > 20971520), being killed

`out_of_memory_report` reads the run's Snakemake log (the `log` an `onerror` hook
gets), follows it to the SLURM logs of the jobs that failed, and turns each such
line into "rule X ran out of memory (mem_mb=N); rerun with --set-resources
X:mem_mb=M". Plain text parsing of the two logs: nothing here talks to SLURM.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# slurmstepd's line (jobacct_gather's OverMemoryKill); sizes in bytes.
_EXCEEDED = re.compile(r"StepId=(?P<job>\d+)\.(?P<step>\w+) exceeded memory limit \((?P<used>\d+) > (?P<limit>\d+)\)")
# A rule as Snakemake prints it when it starts a job ("rule name:" or "localrule name:").
_RULE = re.compile(r"^\s*(?:local)?rule (?P<rule>\w+):\s*$")
_FINISHED = re.compile(r"^Finished jobid: \S+ \(Rule: \w+\)")
# A SLURM log path as the plugin names it in the Snakemake log.
_SLURM_LOG = re.compile(r"(?P<path>\S*slurm_logs/\S+?/\d+\.log)")
_ERROR_START = re.compile(r"Error in (?:rule \w+:|group \S+)")

MIB = 1024 * 1024
# A job's own two Snakemake processes (batch step and srun step) take a few hundred MB
# before the rule's code runs: never suggest less.
MIN_SUGGESTED_MB = 500


@dataclass(frozen=True)
class OutOfMemory:
    """One SLURM job killed for memory: the rules it ran (the one running first) and its limit."""

    rules: tuple[str, ...]
    limit_mb: int
    used_mb: int

    def suggested_mb(self) -> int:
        """Twice the limit or 1.5x what the job had reached when killed (at least MIN_SUGGESTED_MB), in 100s of MB."""
        return 100 * math.ceil(max(2 * self.limit_mb, 1.5 * self.used_mb, MIN_SUGGESTED_MB) / 100)

    def message(self) -> str:
        new = self.suggested_mb()
        settings = " ".join(f"{rule}:mem_mb={new}" for rule in self.rules)
        who = f"rule {self.rules[0]}" if len(self.rules) == 1 else f"the job of rules {', '.join(self.rules)}"
        return f"{who} ran out of memory (mem_mb={self.limit_mb}); rerun with --set-resources {settings}"


def kills_in_slurm_log(text: str) -> list[OutOfMemory]:
    """The memory kills a SLURM job log records, each with the rule that was running then (if one was).

    The job's Snakemake runs its rules one after another (a group's too), each printing
    "rule X:" when it starts and "Finished jobid: ... (Rule: X)" when it ends: the rule
    started last and not finished is the one running. SLURM may name the batch step
    even when the rule's `srun` step holds the memory (it compares the job's total), so
    the step does not matter. A kill while no rule runs (the job's own Snakemake
    starting up) has empty `rules`. slurmstepd logs each kill twice: counted once.
    """
    kills: list[OutOfMemory] = []
    seen: set[tuple[str, str]] = set()
    running: str | None = None
    for line in text.splitlines():
        if rule := _RULE.match(line):
            running = rule["rule"]
        elif _FINISHED.search(line):
            running = None
        elif (hit := _EXCEEDED.search(line)) and (hit["job"], hit["step"]) not in seen:
            seen.add((hit["job"], hit["step"]))
            kills.append(OutOfMemory((running,) if running else (), int(hit["limit"]) // MIB, int(hit["used"]) // MIB))
    return kills


def _error_blocks(snakemake_log: str) -> list[list[str]]:
    """The 'Error in rule/group ...' blocks of a Snakemake log: each such line and the indented lines after it."""
    blocks: list[list[str]] = []
    inside = False
    for line in snakemake_log.splitlines():
        if _ERROR_START.search(line):
            blocks.append([line])
            inside = True
        elif inside and (line[:1].isspace() or not line.strip()):
            blocks[-1].append(line)
        else:
            inside = False
    return blocks


def failed_jobs(snakemake_log: str) -> dict[str, tuple[str, ...]]:
    """Each failed SLURM job's log path, with the rules Snakemake says the job ran.

    A rule's error block names its rule ("Error in rule X:") and its SLURM log on
    its `log:` line; a group's block names the SLURM log and lists its rules under
    `jobs:` ("rule X:" lines).
    """
    jobs: dict[str, tuple[str, ...]] = {}
    for block in _error_blocks(snakemake_log):
        paths = [m["path"] for line in block for m in _SLURM_LOG.finditer(line)]
        if not paths:
            continue
        head = re.search(r"Error in rule (\w+):", block[0])
        rules = [head[1]] if head else [m["rule"] for line in block if (m := _RULE.match(line))]
        for path in paths:
            jobs[path] = tuple(dict.fromkeys([*jobs.get(path, ()), *rules]))
    return jobs


def out_of_memory_report(snakemake_log: str | Path | Iterable[str | Path], workdir: str | Path = ".") -> list[str]:
    """One line per failed SLURM job of this run that was killed for memory (none if no such job).

    `snakemake_log` is the run's Snakemake log file, or a list of them (an onerror
    hook's `log`); SLURM log paths in it that are relative are taken from `workdir`.
    A job killed before any of its rules started is reported with all its rules.
    """
    logs = [snakemake_log] if isinstance(snakemake_log, (str, Path)) else list(snakemake_log)
    lines = []
    for log in logs:
        if not Path(log).is_file():  # a run stopped before Snakemake opened its log
            continue
        for path, job_rules in failed_jobs(Path(log).read_text(errors="replace")).items():
            slurm_log = Path(workdir, path)
            if not slurm_log.is_file():
                continue
            for kill in kills_in_slurm_log(slurm_log.read_text(errors="replace")):
                rules = kill.rules or job_rules
                if rules:
                    lines.append(OutOfMemory(rules, kill.limit_mb, kill.used_mb).message())
    return lines
