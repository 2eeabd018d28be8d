# Decide every claim (sdpa_lab.claims) from the experiment CSVs.

from sdpa_lab.expectation_inputs import expectation_sweep


# The finite-d_k expectations the claims compare with (theory, no experiment's output): computed
# beside the experiments, so the claims job that waits for them all only reads them.
rule expectations:
    input:
        code=code_of("sdpa_lab.claims.expectation_table"),
    output:
        EXPECTATIONS_CSV,
    log:
        log_of("expectations"),
    benchmark:
        benchmark_of("expectations")
    # Seconds of Monte Carlo that the claims wait for and that wait for nothing: started with the first jobs,
    # beside the lesson's, not last.
    priority: 2
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(150),
        runtime=2,
    params:
        # only the settings the expectations read: a change elsewhere does not rerun them
        sweep=expectation_sweep(config),
    script:
        "../scripts/compute_expectations.py"


rule claims:
    input:
        results=experiment_outputs(),
        expectations=EXPECTATIONS_CSV,
        code=code_of(
            "sdpa_lab.claims.deciding",
            "sdpa_lab.claims.expectation_table",
            "sdpa_lab.claims.verdicts",
        ),
    output:
        claims=report(
            "results/claims.csv", caption="../report/claims.rst", category="Claims"
        ),
    log:
        log_of("claims"),
    benchmark:
        benchmark_of("claims")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(200),
        runtime=2,
    params:
        config=sweep_config(),
    script:
        "../scripts/decide_claims.py"
