# One rule per experiment. Each writes its CSV(s) to results/ through the
# package (sdpa_lab.pipeline.run_job); the lesson replications (lesson_*)
# ignore the sweep config and use the lesson's own parameters and seeds.


rule variance:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("variance"),
    params:
        experiment="variance",
        settings=settings_of("variance"),  # a change of these settings reruns the job
    log:
        "logs/variance.log",
    benchmark:
        "benchmarks/rules/variance.tsv"
    script:
        "../scripts/run_experiment.py"


rule entropy_sweep:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("entropy_sweep"),
    params:
        experiment="entropy_sweep",
        settings=settings_of("entropy_sweep"),  # a change of these settings reruns the job
    log:
        "logs/entropy_sweep.log",
    benchmark:
        "benchmarks/rules/entropy_sweep.tsv"
    script:
        "../scripts/run_experiment.py"


rule ranking_invariance:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("ranking_invariance"),
    params:
        experiment="ranking_invariance",
        settings=settings_of("ranking_invariance"),  # a change of these settings reruns the job
    log:
        "logs/ranking_invariance.log",
    benchmark:
        "benchmarks/rules/ranking_invariance.tsv"
    script:
        "../scripts/run_experiment.py"


rule forward_shape:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("forward_shape"),
    params:
        experiment="forward_shape",
        settings=settings_of("forward_shape"),  # a change of these settings reruns the job
    log:
        "logs/forward_shape.log",
    benchmark:
        "benchmarks/rules/forward_shape.tsv"
    script:
        "../scripts/run_experiment.py"


rule gradient:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("gradient"),
    params:
        experiment="gradient",
        settings=settings_of("gradient"),  # a change of these settings reruns the job
    log:
        "logs/gradient.log",
    benchmark:
        "benchmarks/rules/gradient.tsv"
    script:
        "../scripts/run_experiment.py"


rule learning:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("learning"),
    params:
        experiment="learning",
        settings=settings_of("learning"),  # a change of these settings reruns the job
    log:
        "logs/learning.log",
    benchmark:
        "benchmarks/rules/learning.tsv"
    script:
        "../scripts/run_experiment.py"


rule lesson_variance:
    input:
        code=EXPERIMENT_CODE,
    output:
        **outputs_of("lesson_variance"),
    params:
        experiment="lesson_variance",
        settings=settings_of("lesson_variance"),  # a change of these settings reruns the job
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
    params:
        experiment="lesson_softmax_collapse",
        settings=settings_of("lesson_softmax_collapse"),  # a change of these settings reruns the job
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
    params:
        experiment="lesson_forward",
        settings=settings_of("lesson_forward"),  # a change of these settings reruns the job
    log:
        "logs/lesson_forward.log",
    benchmark:
        "benchmarks/rules/lesson_forward.tsv"
    script:
        "../scripts/run_experiment.py"
