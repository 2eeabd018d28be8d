# Decide every claim (sdpa_lab.claims registry) from the experiment CSVs.


rule claims:
    input:
        experiment_outputs(),
    output:
        claims="results/claims.csv",
    log:
        "logs/claims.log",
    benchmark:
        "benchmarks/rules/claims.tsv"
    script:
        "../scripts/decide_claims.py"
