# One rule per experiment, each declared once in sdpa_lab.experiments.registry (its
# outputs, the settings it reads, the function it runs). A job reruns when its settings
# (params), its trial scores or its code (the experiment's modules) change.
#
# resources (for a cluster profile; a local run does not limit them): each job's peak
# memory at the default config (the max RSS of the job's process: logs/benchmarks/<rule>.tsv's
# max_rss samples too seldom to catch jobs this short) with a margin of at least half, plus
# what its SLURM job's own Snakemake processes take (job_mem_mb in common.smk); runtime in
# minutes, with room. The experiments stream their draws in chunks, so their memory does not
# grow with the sweep; B9's forward grows with its shapes (mem_mb_forward in common.smk).


# The (query, T keys) trial scores that entropy_sweep, ranking_invariance and gradient
# share, one job per (seed, T, trials, d_k): drawing the keys is nearly all their cost,
# so it is paid once. Kept, not temporary: a redrawn file would rerun all three.
rule trial_scores:
    input:
        code=code_of(registry.TRIAL_SCORES_MODULE),
    output:
        registry.TRIAL_SCORES,
    log:
        f"logs/trial_scores/{registry.TRIAL_SCORES_JOB}.log",
    benchmark:
        benchmark_of(f"trial_scores/{registry.TRIAL_SCORES_JOB}")
    wildcard_constraints:
        seed=r"\d+",
        T=r"\d+",
        trials=r"\d+",
        d_k=r"\d+",
    priority: 2  # the longest chain: drawing the keys, then three experiments that wait for them
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(150),
        runtime=2,
    script:
        "../scripts/draw_trial_scores.py"


rule variance:
    input:
        code=experiment_code("variance"),
    output:
        **outputs_of("variance"),
    log:
        log_of("variance"),
    benchmark:
        benchmark_of("variance")
    priority: 2  # one of the longest jobs: started first, it does not end the run late
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(150),
        runtime=2,
    params:
        settings=settings_of("variance"),
        module=EXPERIMENTS["variance"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule entropy_sweep:
    input:
        code=experiment_code("entropy_sweep"),
        scores=trial_scores_of("entropy_sweep"),
    output:
        **outputs_of("entropy_sweep"),
    log:
        log_of("entropy_sweep"),
    benchmark:
        benchmark_of("entropy_sweep")
    priority: 1  # the claims wait for it; the figures without intervals (priority 0) do not
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(100),
        runtime=2,
    params:
        settings=settings_of("entropy_sweep"),
        module=EXPERIMENTS["entropy_sweep"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule ranking_invariance:
    input:
        code=experiment_code("ranking_invariance"),
        scores=trial_scores_of("ranking_invariance"),
    output:
        **outputs_of("ranking_invariance"),
    log:
        log_of("ranking_invariance"),
    benchmark:
        benchmark_of("ranking_invariance")
    priority: 1  # the claims wait for it; the figures without intervals (priority 0) do not
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(100),
        runtime=2,
    params:
        settings=settings_of("ranking_invariance"),
        module=EXPERIMENTS["ranking_invariance"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule forward_shape:
    input:
        code=experiment_code("forward_shape"),
    output:
        **outputs_of("forward_shape"),
    log:
        log_of("forward_shape"),
    benchmark:
        benchmark_of("forward_shape")
    priority: 1  # the claims wait for it; the figures without intervals (priority 0) do not
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(mem_mb_forward(settings_of("forward_shape"))),
        runtime=2,
    params:
        settings=settings_of("forward_shape"),
        module=EXPERIMENTS["forward_shape"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule gradient:
    input:
        code=experiment_code("gradient"),
        scores=trial_scores_of("gradient"),
    output:
        **outputs_of("gradient"),
    log:
        log_of("gradient"),
    benchmark:
        benchmark_of("gradient")
    priority: 1  # the claims wait for it; the figures without intervals (priority 0) do not
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(150),
        runtime=2,
    params:
        settings=settings_of("gradient"),
        module=EXPERIMENTS["gradient"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule learning:
    input:
        code=experiment_code("learning"),
    output:
        **outputs_of("learning"),
    log:
        log_of("learning"),
    benchmark:
        benchmark_of("learning")
    priority: 2  # one of the longest jobs: started first, it does not end the run late
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(150),
        runtime=2,
    params:
        settings=settings_of("learning"),
        module=EXPERIMENTS["learning"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule lesson_variance:
    input:
        code=experiment_code("lesson_variance"),
    output:
        **outputs_of("lesson_variance"),
    log:
        log_of("lesson_variance"),
    benchmark:
        benchmark_of("lesson_variance")
    # The longest job (the lesson's Exercise 1, its stream to d_k = 1024), which the claims wait for:
    # started before any other, it does not end the run late.
    priority: 3
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(150),
        runtime=2,
    params:
        settings=settings_of("lesson_variance"),
        module=EXPERIMENTS["lesson_variance"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule lesson_softmax_collapse:
    input:
        code=experiment_code("lesson_softmax_collapse"),
    output:
        **outputs_of("lesson_softmax_collapse"),
    log:
        log_of("lesson_softmax_collapse"),
    benchmark:
        benchmark_of("lesson_softmax_collapse")
    priority: 1  # the claims wait for it; the figures without intervals (priority 0) do not
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(100),
        runtime=2,
    params:
        settings=settings_of("lesson_softmax_collapse"),
        module=EXPERIMENTS["lesson_softmax_collapse"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"


rule lesson_forward:
    input:
        code=experiment_code("lesson_forward"),
    output:
        **outputs_of("lesson_forward"),
    log:
        log_of("lesson_forward"),
    benchmark:
        benchmark_of("lesson_forward")
    priority: 1  # the claims wait for it; the figures without intervals (priority 0) do not
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(100),
        runtime=2,
    params:
        settings=settings_of("lesson_forward"),
        module=EXPERIMENTS["lesson_forward"].module,  # the one experiment module its job imports
    script:
        "../scripts/run_experiment.py"
