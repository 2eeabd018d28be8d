"""Thin Snakemake entry point: one learner's submission, graded in its sandbox, into its grade record (JSON)."""

from sdpa_lab.grading.classroom import submission_job
from sdpa_lab.grading.modules import COURSE_MODULES

submission_job(
    snakemake.params.path,  # noqa: F821 (injected by Snakemake; the input too, unless a link: graded unread)
    snakemake.params.learner,  # noqa: F821
    snakemake.output.json,  # noqa: F821
    seed=snakemake.params.seed,  # noqa: F821
    time_limit=snakemake.params.time_limit,  # noqa: F821
    memory_mib=snakemake.params.memory_mib,  # noqa: F821
    n_samples=snakemake.params.n_samples,  # noqa: F821
    log_path=snakemake.log[0],  # noqa: F821
    # the whole list: params.modules (what of it the file names) only decides which grades rerun when it changes
    modules=tuple(snakemake.config.get("grading_modules", COURSE_MODULES)),  # noqa: F821
    shown=snakemake.params.shown or None,  # noqa: F821 (with a roster: the file's path in the class folder)
)
