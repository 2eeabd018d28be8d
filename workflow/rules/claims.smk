# Decide every claim (sdpa_lab.claims) from the experiment CSVs.


rule claims:
    input:
        results=experiment_outputs(),
        code=code_of("sdpa_lab.claims.deciding", "sdpa_lab.claims.verdicts"),
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
