# The report: the figures (sdpa_lab.report.figures, one job, beside the claims job),
# then the self-contained reports/report.html (sdpa_lab.report.html), built after every
# other rule because it shows their runtimes (their benchmark files are inputs).


rule figures:
    input:
        # Every result CSV: figures with k-SE intervals use the run's k, decided from all of them as the
        # checks do. Not results/claims.csv: the figure job runs beside the claims job, not after it.
        results=experiment_outputs(),
        code=code_of("sdpa_lab.report.jobs", "sdpa_lab.report.figures"),
    output:
        **figure_outputs(),
    log:
        log_of("figures"),
    benchmark:
        benchmark_of("figures")
    threads: 1
    resources:
        mem_mb=job_mem_mb(300),
        runtime=2,
    params:
        captions={name: spec.caption_generic() for name, spec in FIGURES.items()},  # for Snakemake's report
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
    output:
        html=report(REPORT_HTML, caption="../report/report_html.rst", category="Report"),
    log:
        log_of("report"),
    benchmark:
        benchmark_of("report")
    threads: 1
    resources:
        mem_mb=job_mem_mb(200),
        runtime=2,
    params:
        config=config,
    script:
        "../scripts/make_report.py"
