# A class (config `submissions`, a folder: e.g. --config submissions=class/), graded by
# sdpa_lab.grading.classroom: one job per learner's file, each in its own bubblewrap
# sandbox (all its processes within grading_memory_mib together, each call within the time
# limit), so a class spreads over cores and over SLURM; a submission that breaks,
# hangs, forges replies or blows up is recorded as such and never stops the others.
# Then the gradebook, the scores for an LMS, the class overview (reports/class.html, the
# instructor's first page) and one feedback page per learner; the report links the overview.

from sdpa_lab.grading.classroom import SAFE_ID


# Each learner's id (classroom.learner_ids): the file's stem, or a slug and a hash of its name.
wildcard_constraints:
    learner=SAFE_ID,


rule grade_submission:
    input:
        submission=submission_input,
        code=code_of(
            "sdpa_lab.grading.classroom",
            "sdpa_lab.grading.child",
            "sdpa_lab.grading.files",
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
        path=lambda w: str(CLASS[w.learner]),
        digest=submission_digest,
        seed=GRADING_SEED,
        time_limit=GRADING_TIME_LIMIT,
        memory_mib=GRADING_MEMORY_MIB,
        n_samples=GRADING_N_SAMPLES,
        modules=learner_modules,  # the job reads the whole list from the config
        shown=submission_shown,
    script:
        "../scripts/grade_submission.py"


rule gradebook:
    input:
        grades=class_grades(),
        code=code_of("sdpa_lab.grading.gradebook", "sdpa_lab.grading.instructor"),
        templates=templates(),
        lms=lms_inputs(),
    output:
        **lms_outputs(),
        csv=GRADEBOOK_CSV,
        scores=SCORES_CSV,
        overview=CLASS_HTML,
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
    params:
        points=config.get("grading_points"),  # the rubric: new points redo the tables, not the grades
        lms=lms_settings(),  # the roster, overrides and files: a change redoes the tables, not the grades
    script:
        "../scripts/gradebook.py"
