# The report: two rules drawing the figures (sdpa_lab.report.specs.FIGURE_JOBS: half of
# them each, side by side, and beside the claims job), then the self-contained reports/report.html
# (sdpa_lab.report.html), built after every other rule because it shows their runtimes
# (their benchmark files are inputs).


from pathlib import Path

import sdpa_lab.report
from sdpa_lab.report.specs import FIGURE_JOBS

# The package's report code: the rules rerun when it changes, like they do when their script changes.
REPORT_CODE = Path(sdpa_lab.report.__file__).parent
FIGURE_CODE = [str(REPORT_CODE / f) for f in ("figures.py", "specs.py")]
HTML_CODE = [str(REPORT_CODE / f) for f in ("html.py", "provenance.py")] + sorted(
    str(p) for p in (REPORT_CODE / "templates").iterdir() if p.is_file())


def figure_outputs(names):
    """The figures' PNGs (flagged for `snakemake --report`, with their captions) and SVGs, named <name>_png, <name>_svg."""
    outputs = {}
    for name in names:
        spec = FIGURES[name]
        files = figure_files(name)
        outputs[f"{name}_png"] = for_report(files["png"], caption=f"../report/figures/{name}.rst",
                                            category="Figures", subcategory=", ".join(spec.claims))
        outputs[f"{name}_svg"] = files["svg"]
    return outputs


def benchmark_of(rule_name):
    return f"benchmarks/rules/{rule_name}.tsv"


def report_benchmarks():
    """The benchmark file of every job the report comes after (not the report's own), the trial draws' too."""
    draws = sorted({f"benchmarks/rules/trial_scores/{Path(path).stem}.tsv"
                    for experiment in OUTPUTS for path in trial_scores_files(config, experiment).values()})
    return [benchmark_of(r) for r in [*OUTPUTS, "claims", *(f"figures_{job}" for job in FIGURE_JOBS)]] + draws


for job, names in FIGURE_JOBS.items():

    rule:
        name:
            f"figures_{job}"
        input:
            # Every result CSV: figures with k-SE intervals use the run's k, decided from all of them as the
            # checks do. Not results/claims.csv: the figure jobs run beside the claims job, not after it.
            results=experiment_outputs(),
            code=FIGURE_CODE,
        output:
            **figure_outputs(names),
        params:
            # For Snakemake's report. A function of `output`, so Snakemake leaves it out of its params
            # rerun check, which imports pandas on every call (the figure code is an input anyway).
            captions=lambda wildcards, output: {name: spec.caption_generic() for name, spec in FIGURES.items()},
        log:
            f"logs/figures_{job}.log",
        benchmark:
            benchmark_of(f"figures_{job}")
        script:
            "../scripts/make_figures.py"


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
