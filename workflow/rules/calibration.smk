# The calibration study (sdpa_lab.calibration), not part of `all`:
#   snakemake --cores 4 calibration
# For each study file in config/calibration/ and each arm (the correct attention scale and two
# deliberately wrong ones), batches of seeded runs, each deciding every claim; then tidy tables
# under results/calibration/ and reports/calibration.html. The study files are read only when a
# calibration target is asked for (input functions), so other targets do not pay for them.
# Helpers (calibration_study, the paths) live in common.smk.

from sdpa_lab.calibration.studies import DRAWS, draws_input

# Above every batch's priority (its expected seconds): the jobs the batches wait for run first.
UPSTREAM_PRIORITY = 10**9


rule calibration_sweeps:
    input:
        code=code_of(
            "sdpa_lab.calibration.space",
            "sdpa_lab.calibration.studies",
            "sdpa_lab.workflow_support.cost",
        ),
        schema=schema_file(),
    output:
        SWEEPS,
    log:
        "logs/calibration/{study}/sweeps.log",
    benchmark:
        benchmark_of("calibration/{study}/sweeps")
    # before any batch (the batches run longest first, by priority): a study's batches wait for it
    priority: UPSTREAM_PRIORITY
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(100),  # measured peak 45 MiB
        runtime=5,
    params:
        settings=lambda wildcards: calibration_study(wildcards).settings(),
    script:
        "../scripts/calibrate_sweeps.py"


rule calibration_expectations:
    input:
        code=code_of("sdpa_lab.claims.expectation_table"),
        # a space study's drawn sweeps: its unit-variance means, made once for all its batches
        sweeps=lambda wildcards: (
            SWEEPS.format(**wildcards) if calibration_study(wildcards).space else []
        ),
    output:
        EXPECTATIONS,
    log:
        "logs/calibration/{study}/expectations.log",
    benchmark:
        benchmark_of("calibration/{study}/expectations")
    # before any batch (the batches run longest first, by priority): a study's batches wait for it
    priority: UPSTREAM_PRIORITY
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(150),  # measured peak 113 MiB (smallest; its benchmark file)
        runtime=5,
    params:
        # The expectations depend on the sweep alone: editing a study's counts does not recompute them.
        sweep=lambda wildcards: calibration_study(wildcards).sweep,
    script:
        "../scripts/calibrate_expectations.py"


# What every arm of a batch makes the same (calibration.draws: the draws the attention plays no part in), made
# once for the batches the broken arms run too: each arm's batch job reads them.
rule calibration_draws:
    input:
        code=code_of("sdpa_lab.calibration.runner"),
    output:
        temp(DRAWS),
    log:
        "logs/calibration/{study}/draws{batch}.log",
    benchmark:
        benchmark_of("calibration/{study}/draws{batch}")
    wildcard_constraints:
        batch=r"\d+",
    # before any batch (the batches run longest first, by priority): four batch jobs, one per arm, wait for it
    priority: UPSTREAM_PRIORITY
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(200),
        runtime=lambda wildcards: calibration_study(wildcards).runtime_minutes(),
    params:
        settings=lambda wildcards: calibration_study(wildcards).settings(),
    script:
        "../scripts/calibrate_draws.py"


rule calibration_batch:
    input:
        fixed=fixed_tables_files(),  # the lesson replications' tables, the same in every run
        # the claims' finite-d_k expectations, computed once per study of one sweep (a space study's batches
        # compute those of their own sweeps, on the unit-variance means made once for the study), and a space
        # study's drawn sweeps
        expectations=EXPECTATIONS,
        sweeps=lambda wildcards: (
            SWEEPS.format(**wildcards) if calibration_study(wildcards).space else []
        ),
        # where the broken arms run the batch too, what every arm makes the same, made once
        draws=lambda wildcards: draws_input(
            wildcards.study, calibration_study(wildcards), int(wildcards.batch)
        ),
        code=code_of(
            "sdpa_lab.calibration.runner", *(e.module for e in EXPERIMENTS.values())
        ),
    output:
        BATCH,
        # its share of the tables (calibration.shares): what calibration_tables merges
        share=SHARE,
    log:
        "logs/calibration/{study}/{arm}/batch{batch}.log",
    benchmark:
        benchmark_of("calibration/{study}/{arm}/batch{batch}")
    wildcard_constraints:
        arm="|".join(ARMS),
        batch=r"\d+",
    # The longest batches first: the study's last jobs are then its shortest, and neither core idles long at its
    # end while the other finishes a long one.
    priority: lambda w: calibration_study(w).batch_seconds(w.arm, int(w.batch))
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        # measured peak 131-139 MiB at the fixed studies, whatever the runs per job (benchmarks/README.md), 159
        # MiB with a smallest batch's share (its 45 MB CSV read back); 327-1786 MiB at config_space's drawn
        # configs (its first 8 batches: a forward of up to 2^23 weights)
        mem_mb=lambda wildcards: job_mem_mb(
            2048 if calibration_study(wildcards).space else 200
        ),
        runtime=lambda wildcards: calibration_study(wildcards).runtime_minutes(),
    params:
        # What the rows depend on (Snakemake's params trigger): editing a study's counts or sweep reruns
        # its batches; its comments and seconds_per_run (a resource) do not.
        settings=lambda wildcards: calibration_study(wildcards).settings(),
    script:
        "../scripts/calibrate_batch.py"


rule calibration_tables:
    input:
        batches=lambda wildcards: batch_files(load_studies()),
        shares=lambda wildcards: share_files(load_studies()),
        sweeps=lambda wildcards: [SWEEPS.format(study=name) for name in load_studies()],
        code=code_of("sdpa_lab.calibration.tables_jobs"),
    output:
        **{table: f"{CALIBRATION_DIR}/{table}.csv" for table in SUMMARIES},
    log:
        "logs/calibration/tables.log",
    benchmark:
        benchmark_of("calibration/tables")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        # A share at a time and the tables (calibration.batched): measured peak 96-101 MB over 162 MB of batches
        # (21 batches; 150-155 MB reading the batches themselves, 186 MB over the shipped studies' 1,474 MB). The
        # runs table grows with the study: a tenth of the inputs' size on top (Snakemake sizes it again when
        # scheduled).
        mem_mb=lambda wildcards, input: job_mem_mb(int(0.1 * input.size_mb) + 256),
        runtime=5,
    script:
        "../scripts/calibrate_tables.py"


# checks.csv, every batch's rows copied, in a job of its own: it runs beside the tables and the report.
rule calibration_checks:
    input:
        batches=lambda wildcards: batch_files(load_studies()),
        code=code_of("sdpa_lab.calibration.tables_jobs"),
    output:
        f"{CALIBRATION_DIR}/checks.csv",
    log:
        "logs/calibration/checks.log",
    benchmark:
        benchmark_of("calibration/checks")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        # the batches copied a chunk at a time (batched.write_checks): its memory does not grow with the study
        mem_mb=job_mem_mb(256),
        runtime=5,
    script:
        "../scripts/calibrate_checks.py"


rule calibration_report:
    input:
        # every table but checks.csv: the z's its QQ figure plots come from the batches' shares
        **{table: f"{CALIBRATION_DIR}/{table}.csv" for table in SUMMARIES},
        shares=lambda wildcards: share_files(load_studies()),
        code=code_of("sdpa_lab.calibration.report"),
        templates=templates(),
    output:
        CALIBRATION_REPORT,
    log:
        "logs/calibration/report.log",
    benchmark:
        benchmark_of("calibration/report")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        # The tables but checks.csv, and the correct arm's two-sided z's from the shares, one share at a time:
        # measured peak 160 MB (21 batches; as much as reading those z's of checks.csv in chunks, 340 MB over the
        # shipped studies' 1,546 MB of tables); those z's grow with the study, so a quarter of the size on top.
        mem_mb=lambda wildcards, input: job_mem_mb(int(0.25 * input.size_mb) + 256),
        runtime=5,
    script:
        "../scripts/calibrate_report.py"
