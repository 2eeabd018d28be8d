# The report: one rule per figure (sdpa_lab.report.specs.FIGURES), then the
# self-contained reports/report.html (sdpa_lab.report.html), built after every
# other rule because it shows their runtimes (their benchmark files are inputs).


from pathlib import Path

import sdpa_lab.report

# The package's report code: the rules rerun when it changes, like they do when their script changes.
REPORT_CODE = Path(sdpa_lab.report.__file__).parent
FIGURE_CODE = [str(REPORT_CODE / f) for f in ("figures.py", "specs.py")]
HTML_CODE = [str(REPORT_CODE / f) for f in ("html.py", "provenance.py")] + sorted(
    str(p) for p in (REPORT_CODE / "templates").iterdir() if p.is_file())


def figure_inputs(spec):
    """The CSVs a figure reads; figures with k-SE intervals also wait for the claims (k is the run's)."""
    return [f"results/{name}" for name in spec.reads] + (["results/claims.csv"] if spec.uses_k else [])


def benchmark_of(rule_name):
    return f"benchmarks/rules/{rule_name}.tsv"


def report_benchmarks():
    """The benchmark file of every rule the report comes after (not the report's own)."""
    rules = [*OUTPUTS, "claims", *(f"figure_{name}" for name in FIGURES)]
    return [benchmark_of(r) for r in rules]


for _fig in FIGURES.values():

    rule:
        name:
            f"figure_{_fig.name}"
        input:
            results=figure_inputs(_fig),
            code=FIGURE_CODE,
        output:
            png=for_report(figure_files(_fig.name)["png"], caption="../report/figure.rst", category="Figures",
                           subcategory=", ".join(_fig.claims)),
            svg=figure_files(_fig.name)["svg"],
        params:
            figure=_fig.name,
            caption=_fig.caption_generic(),
        log:
            f"logs/figure_{_fig.name}.log",
        benchmark:
            benchmark_of(f"figure_{_fig.name}")
        script:
            "../scripts/make_figure.py"


rule report:
    input:
        results=experiment_outputs(),
        claims="results/claims.csv",
        figures=[figure_files(name)["png"] for name in FIGURES],
        benchmarks=report_benchmarks(),
        code=HTML_CODE,
    output:
        html=for_report(REPORT_HTML, caption="../report/report_html.rst", category="Report"),
    log:
        "logs/report.log",
    benchmark:
        benchmark_of("report")
    script:
        "../scripts/make_report.py"
