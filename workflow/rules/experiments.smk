# One rule per experiment. Each writes its CSV(s) to results/ through the
# package (sdpa_lab.pipeline.run_job, for the experiment the rule is named
# after). An experiment reruns when its code or its settings change: its
# settings file (settings_file in common.smk) is rewritten only when they do.
# The lesson replications (lesson_*) ignore the sweep config and use the
# lesson's own parameters and seeds.


# The (query, T keys) trial scores that entropy_sweep, ranking_invariance and
# gradient share, one job per (seed, T, trials, d_k): drawing the keys is
# nearly all their cost, so it is paid once. Kept (a few hundred kB each), not
# temporary: redrawing a shared file would rerun every experiment that reads it.
rule trial_scores:
    priority: 2  # the longest chain: drawing the keys, then three experiments that wait for them
    input:
        code=TRIAL_SCORES_CODE,
    output:
        TRIAL_SCORES,
    wildcard_constraints:
        seed=r"\d+",
        T=r"\d+",
        trials=r"\d+",
        d_k=r"\d+",
    log:
        f"logs/trial_scores/{TRIAL_SCORES_JOB}.log",
    benchmark:
        f"benchmarks/rules/trial_scores/{TRIAL_SCORES_JOB}.tsv"
    script:
        "../scripts/draw_trial_scores.py"


rule variance:
    priority: 1  # one of the longest jobs: started first, it does not end the run late
    input:
        code=EXPERIMENT_CODE,
        settings=settings_file("variance"),
    output:
        **outputs_of("variance"),
    log:
        "logs/variance.log",
    benchmark:
        "benchmarks/rules/variance.tsv"
    script:
        "../scripts/run_experiment.py"


rule entropy_sweep:
    input:
        code=EXPERIMENT_CODE,
        settings=settings_file("entropy_sweep"),
        scores=trial_scores_inputs("entropy_sweep"),
    output:
        **outputs_of("entropy_sweep"),
    log:
        "logs/entropy_sweep.log",
    benchmark:
        "benchmarks/rules/entropy_sweep.tsv"
    script:
        "../scripts/run_experiment.py"


rule ranking_invariance:
    input:
        code=EXPERIMENT_CODE,
        settings=settings_file("ranking_invariance"),
        scores=trial_scores_inputs("ranking_invariance"),
    output:
        **outputs_of("ranking_invariance"),
    log:
        "logs/ranking_invariance.log",
    benchmark:
        "benchmarks/rules/ranking_invariance.tsv"
    script:
        "../scripts/run_experiment.py"


rule forward_shape:
    input:
        code=EXPERIMENT_CODE,
        settings=settings_file("forward_shape"),
    output:
        **outputs_of("forward_shape"),
    log:
        "logs/forward_shape.log",
    benchmark:
        "benchmarks/rules/forward_shape.tsv"
    script:
        "../scripts/run_experiment.py"


rule gradient:
    input:
        code=EXPERIMENT_CODE,
        settings=settings_file("gradient"),
        scores=trial_scores_inputs("gradient"),
    output:
        **outputs_of("gradient"),
    log:
        "logs/gradient.log",
    benchmark:
        "benchmarks/rules/gradient.tsv"
    script:
        "../scripts/run_experiment.py"


rule learning:
    priority: 1  # one of the longest jobs: started first, it does not end the run late
    input:
        code=EXPERIMENT_CODE,
        settings=settings_file("learning"),
    output:
        **outputs_of("learning"),
    log:
        "logs/learning.log",
    benchmark:
        "benchmarks/rules/learning.tsv"
    script:
        "../scripts/run_experiment.py"


rule lesson_variance:
    priority: 1  # one of the longest jobs: started first, it does not end the run late
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("lesson_variance"),
    log:
        "logs/lesson_variance.log",
    benchmark:
        "benchmarks/rules/lesson_variance.tsv"
    script:
        "../scripts/run_experiment.py"


rule lesson_softmax_collapse:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("lesson_softmax_collapse"),
    log:
        "logs/lesson_softmax_collapse.log",
    benchmark:
        "benchmarks/rules/lesson_softmax_collapse.tsv"
    script:
        "../scripts/run_experiment.py"


rule lesson_forward:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("lesson_forward"),
    log:
        "logs/lesson_forward.log",
    benchmark:
        "benchmarks/rules/lesson_forward.tsv"
    script:
        "../scripts/run_experiment.py"
