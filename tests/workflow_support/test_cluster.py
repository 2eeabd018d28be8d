"""sdpa_lab.workflow_support.cluster: the out-of-memory report, on text shaped like real logs (on a cluster:
tests/pipeline/test_slurm.py)."""

from __future__ import annotations

from pathlib import Path

from sdpa_lab.workflow_support.cluster import (
    OutOfMemory,
    failed_jobs,
    kills_in_slurm_log,
    out_of_memory_report,
)

MIB = 1024 * 1024

# A group job's SLURM log: the job's Snakemake started rule lesson_variance, then SLURM killed the job.
GROUP_SLURM_LOG = f"""
Building DAG of jobs...
Provided remote nodes: 1
Select jobs to execute...
Execute 1 jobs...

[Mon Nov 30 22:52:29 2026]
rule lesson_variance:
    output: results/lesson_variance.csv
    resources: tmpdir=<TBD>, mem_mb=130, mem=130 MB, mem_mib=124, disk_mb=1000, runtime=30
srun: cluster configuration lacks support for cpu binding
slurmstepd-localhost: error: StepId=12.batch exceeded memory limit ({152674304} > {130 * MIB}), being killed
slurmstepd-localhost: error: Exceeded job memory limit
slurmstepd-localhost: error: *** JOB 12 ON localhost CANCELLED AT 2026-11-30T22:52:30 ***
slurmstepd-localhost: error: StepId=12.batch exceeded memory limit ({152674304} > {130 * MIB}), being killed
slurmstepd-localhost: error: Exceeded job memory limit
"""

# Killed while the job's own Snakemake was starting: no rule had begun.
EARLY_SLURM_LOG = f"""\
slurmstepd-localhost: error: StepId=11.batch exceeded memory limit ({58630144} > {20 * MIB}), being killed
slurmstepd-localhost: error: Exceeded job memory limit
slurmstepd-localhost: error: *** JOB 11 ON localhost CANCELLED AT 2026-11-30T22:51:31 ***
"""

# The main Snakemake log of a run with a failed group job and a failed single-rule job.
MAIN_LOG = """\
Job 73194daa submitted with SLURM jobid 10 (log: {work}/.snakemake/slurm_logs/group_sweeps_forward_shape_.../10.log).
Job 0 has been submitted with SLURM jobid 11 (log: {work}/.snakemake/slurm_logs/rule_variance/11.log).
[Mon Nov 30 22:50:47 2026]
    message: Error in group sweeps
    log: {work}/.snakemake/slurm_logs/group_sweeps_forward_shape_.../10.log (check log file(s) for error details)
    jobs:
        rule forward_shape:
            jobid: 0
            output: results/forward_shape.csv
        rule lesson_forward:
            jobid: 1
            output: results/lesson_forward.csv
            log: logs/lesson_forward.log (check log file(s) for error details)
    [Mon Nov 30 22:50:47 2026]
    Error in rule lesson_forward:
        message: None
        log: logs/lesson_forward.log (check log file(s) for error details)
[Mon Nov 30 22:51:42 2026]
Error in rule variance:
    message: SLURM-job '11' failed, SLURM status is: 'FAILED'. Detailed failure reason unavailable.
    jobid: 0
    output: results/variance.csv
    log: logs/variance.log, {work}/.snakemake/slurm_logs/rule_variance/11.log (check log file(s) for error details)
    external_jobid: 11
Shutting down, this might take some time.
rule report:
    log: {work}/.snakemake/slurm_logs/rule_report/99.log
"""


def test_kill_names_the_rule_that_was_running_and_the_limit():
    (kill,) = kills_in_slurm_log(GROUP_SLURM_LOG)  # the repeated line counts once
    assert kill == OutOfMemory(("lesson_variance",), limit_mb=130, used_mb=152674304 // MIB)


def test_kill_before_any_rule_names_none():
    (kill,) = kills_in_slurm_log(EARLY_SLURM_LOG)
    assert kill.rules == () and kill.limit_mb == 20


def test_kill_after_the_last_rule_finished_names_none():
    finished = GROUP_SLURM_LOG.replace("srun: cluster", "Finished jobid: 0 (Rule: lesson_variance)\nsrun: cluster")
    (kill,) = kills_in_slurm_log(finished)
    assert kill.rules == ()


def test_a_log_without_kills_has_none():
    assert kills_in_slurm_log(GROUP_SLURM_LOG.split("slurmstepd")[0]) == []


def test_failed_jobs_pairs_each_slurm_log_with_its_rules():
    jobs = failed_jobs(MAIN_LOG.format(work="/w"))
    assert jobs == {
        "/w/.snakemake/slurm_logs/group_sweeps_forward_shape_.../10.log": ("forward_shape", "lesson_forward"),
        "/w/.snakemake/slurm_logs/rule_variance/11.log": ("variance",),
    }  # rule_report/99.log is in no error block: that job did not fail


def test_suggestion_doubles_the_limit_or_more():
    assert OutOfMemory(("a",), limit_mb=1000, used_mb=1100).suggested_mb() == 2000
    assert OutOfMemory(("a",), limit_mb=1000, used_mb=1500).suggested_mb() == 2300  # 1.5 x 1500, in 100s
    assert OutOfMemory(("a",), limit_mb=20, used_mb=55).suggested_mb() == 500  # the in-job Snakemake's floor


def test_report_reads_the_failed_jobs_slurm_logs(tmp_path: Path):
    slurm = tmp_path / ".snakemake" / "slurm_logs"
    (slurm / "group_sweeps_forward_shape_...").mkdir(parents=True)
    (slurm / "group_sweeps_forward_shape_..." / "10.log").write_text(
        GROUP_SLURM_LOG.replace("lesson_variance", "lesson_forward"))
    (slurm / "rule_variance").mkdir()
    (slurm / "rule_variance" / "11.log").write_text(EARLY_SLURM_LOG)
    (slurm / "rule_report").mkdir()  # an old kill, not in this run's errors: not reported
    (slurm / "rule_report" / "99.log").write_text(EARLY_SLURM_LOG)
    main = tmp_path / "run.log"
    main.write_text(MAIN_LOG.format(work=tmp_path))
    assert out_of_memory_report(main) == [
        "rule lesson_forward ran out of memory (mem_mb=130); rerun with --set-resources lesson_forward:mem_mb=500",
        "rule variance ran out of memory (mem_mb=20); rerun with --set-resources variance:mem_mb=500",
    ]


def test_report_names_every_rule_of_a_job_killed_before_its_rules(tmp_path: Path):
    log_dir = tmp_path / ".snakemake" / "slurm_logs" / "group_sweeps_forward_shape_..."
    log_dir.mkdir(parents=True)
    (log_dir / "10.log").write_text(EARLY_SLURM_LOG)
    main = tmp_path / "run.log"
    main.write_text(MAIN_LOG.format(work=tmp_path))
    assert out_of_memory_report(main) == [
        ("the job of rules forward_shape, lesson_forward ran out of memory (mem_mb=20); "
         "rerun with --set-resources forward_shape:mem_mb=500 lesson_forward:mem_mb=500"),
    ]


def test_relative_slurm_log_paths_are_read_from_the_workdir(tmp_path: Path):
    (tmp_path / ".snakemake" / "slurm_logs" / "rule_variance").mkdir(parents=True)
    (tmp_path / ".snakemake" / "slurm_logs" / "rule_variance" / "11.log").write_text(EARLY_SLURM_LOG)
    main = tmp_path / "run.log"
    main.write_text(MAIN_LOG.format(work=".").split("[Mon Nov 30 22:51:42 2026]\n")[1])
    assert out_of_memory_report(main, workdir=tmp_path) == [
        "rule variance ran out of memory (mem_mb=20); rerun with --set-resources variance:mem_mb=500"]


def test_report_takes_the_list_of_logs_an_onerror_hook_gets(tmp_path: Path):
    (tmp_path / ".snakemake" / "slurm_logs" / "rule_variance").mkdir(parents=True)
    (tmp_path / ".snakemake" / "slurm_logs" / "rule_variance" / "11.log").write_text(EARLY_SLURM_LOG)
    main = tmp_path / "run.log"
    main.write_text(MAIN_LOG.format(work=tmp_path).split("[Mon Nov 30 22:51:42 2026]\n")[1])
    assert out_of_memory_report([str(main)]) == out_of_memory_report(main) != []


def test_no_failed_job_no_report(tmp_path: Path):
    main = tmp_path / "run.log"
    main.write_text("Building DAG of jobs...\n17 of 17 steps (100%) done\n")
    assert out_of_memory_report(main) == []
    assert out_of_memory_report([tmp_path / "never-written.log"]) == []
