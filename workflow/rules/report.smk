# The report: the figures (sdpa_lab.report.figures, in two jobs, specs.FIGURE_JOBS), then the
# self-contained reports/report.html (sdpa_lab.report.html), built after every other rule
# because it shows their runtimes (their benchmark files are inputs).


# The figures without intervals: only the CSVs they draw, so the job runs beside the experiments still going.
# Nothing waits for it but the report: it goes after every job the claims wait for (priority 0, theirs 1 to 3)
# and fills a core while the claims and the figures with intervals run.
rule figures_plain:
    input:
        results=figure_inputs("figures_plain"),
        code=code_of("sdpa_lab.report.jobs", "sdpa_lab.report.figures"),
    output:
        **figure_outputs("figures_plain"),
    log:
        log_of("figures_plain"),
    benchmark:
        benchmark_of("figures_plain")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(300),
        runtime=2,
    params:
        captions=figure_captions("figures_plain"),  # for Snakemake's report
    script:
        "../scripts/make_figures.py"


# The figures with intervals of k standard errors: k is the run's, from results/claims.csv.
rule figures_intervals:
    input:
        results=figure_inputs("figures_intervals"),
        claims="results/claims.csv",
        code=code_of("sdpa_lab.report.jobs", "sdpa_lab.report.figures"),
    output:
        **figure_outputs("figures_intervals"),
    log:
        log_of("figures_intervals"),
    benchmark:
        benchmark_of("figures_intervals")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(300),
        runtime=2,
    params:
        captions=figure_captions("figures_intervals"),  # for Snakemake's report
    script:
        "../scripts/make_figures.py"


rule report:
    input:
        results=experiment_outputs(),
        claims="results/claims.csv",
        figures=figure_pngs(),
        benchmarks=benchmarks_before_report(),
        code=code_of("sdpa_lab.report.jobs", "sdpa_lab.report.html"),
        templates=templates(),
        solutions=solutions_outputs(),
        grades=class_grades(),
    output:
        html=report(REPORT_HTML, caption="../report/report_html.rst", category="Report"),
    log:
        log_of("report"),
    benchmark:
        benchmark_of("report")
    conda:
        ENVIRONMENT
    threads: 1
    resources:
        mem_mb=job_mem_mb(200),
        runtime=2,
    params:
        config=config,
    script:
        "../scripts/make_report.py"
