# A learner's own solutions (config `solutions`, e.g. --config solutions=my_solutions.py),
# graded by sdpa_lab.grading: their code runs in a separate process with a time limit per
# call and a memory limit. Included only when the config names a file; no experiment reads
# it, so giving one reruns nothing but this rule and the report. A file that cannot be
# used (missing, a syntax error, a hang, a memory blow-up) is recorded in
# results/solutions.csv like any verdict: this job does not fail.


rule solutions:
    input:
        solutions=solutions_file(),
        code=code_of("sdpa_lab.grading.grade", "sdpa_lab.grading.child"),
    output:
        csv=report(SOLUTIONS_CSV, caption="../report/solutions.rst", category="Results"),
    log:
        log_of("solutions"),
    benchmark:
        benchmark_of("solutions")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        **grading_resources(),
    params:
        solutions=config["solutions"],
        found=Path(config["solutions"]).is_file(),  # a file created later reruns the rule
        seed=GRADING_SEED,
        time_limit=GRADING_TIME_LIMIT,
        memory_mib=GRADING_MEMORY_MIB,
        n_samples=GRADING_N_SAMPLES,
        modules=GRADING_MODULES,
        points=config.get("grading_points"),  # the rubric: the same points as the class's
    script:
        "../scripts/grade_solutions.py"
