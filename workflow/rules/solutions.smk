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
        # The learner's process may use up to the memory limit (the lesson's Exercise 1
        # holds about 2.5 GB), the grader about 300 MiB; each of the five parts may run
        # into the time limit once.
        mem_mb=GRADING_MEMORY_MIB + 300,
        runtime=int(5 * GRADING_TIME_LIMIT / 60) + 5,
    params:
        solutions=config["solutions"],
        found=Path(config["solutions"]).is_file(),  # a file created later reruns the rule
        time_limit=GRADING_TIME_LIMIT,
        memory_mib=GRADING_MEMORY_MIB,
    script:
        "../scripts/grade_solutions.py"
