# A class (config `submissions`, a folder: e.g. --config submissions=class/), graded by
# sdpa_lab.grading.classroom: one job per learner's file, each in its own bubblewrap
# sandbox (all its processes within grading_memory_mib together, each call within the time
# limit), so a class spreads over cores and over SLURM; a submission that breaks,
# hangs, forges replies or blows up is recorded as such and never stops the others.
# Then the gradebook and one feedback page per learner; the report adds the overview.


wildcard_constraints:
    learner="[A-Za-z0-9][A-Za-z0-9_.-]*",


rule grade_submission:
    input:
        submission=lambda w: str(CLASS[w.learner]),
        code=code_of(
            "sdpa_lab.grading.classroom",
            "sdpa_lab.grading.child",
            "sdpa_lab.grading.sandbox",
        ),
    output:
        json="results/class/grades/{learner}.json",
    log:
        "logs/grade_submission/{learner}.log",
    benchmark:
        "logs/benchmarks/grade_submission/{learner}.tsv"
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        **grading_resources(),
    params:
        learner=lambda w: w.learner,
        seed=GRADING_SEED,
        time_limit=GRADING_TIME_LIMIT,
        memory_mib=GRADING_MEMORY_MIB,
        n_samples=GRADING_N_SAMPLES,
        modules=GRADING_MODULES,
    script:
        "../scripts/grade_submission.py"


rule gradebook:
    input:
        grades=class_grades(),
        code=code_of("sdpa_lab.grading.classroom"),
        templates=templates(),
    output:
        csv=GRADEBOOK_CSV,
        pages=class_pages(),
    log:
        log_of("gradebook"),
    localrule: True
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(200),
        runtime=2,
    script:
        "../scripts/gradebook.py"
