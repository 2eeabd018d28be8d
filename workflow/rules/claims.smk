# Decide every claim (sdpa_lab.claims registry) from the experiment CSVs.


rule claims:
    input:
        experiment_outputs(),
        code=CLAIMS_CODE,
    output:
        claims=for_report("results/claims.csv", caption="../report/claims.rst", category="Claims"),
    log:
        "logs/claims.log",
    benchmark:
        "benchmarks/rules/claims.tsv"
    script:
        "../scripts/decide_claims.py"
