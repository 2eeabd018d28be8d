"""The limits on a learner's code: one set for `sdpa-lab grade`, the `solutions` rule and a class (one file, one grade).

The grader runs no top-level call of the learner's (sdpa_lab.grading.source); what it runs is
its own calls, and the largest is Exercise 1 at QUICK_N_SAMPLES pairs (10,000 x 1024: about
250 MB), or at grading_n_samples where an instructor sets it (the lesson's 100,000 x 1024 holds
2.4 GB: the memory limit admits it). What a grade costs is measured in benchmarks/grading.csv.
Parse-time light: the Snakefile reads these.
"""

TIME_LIMIT = 120.0  # seconds of wall-clock time per call (and for loading the file)
MEMORY_MIB = 4096  # all of a learner's processes together
UNUSABLE = 2  # the exit status (and a record's) of a file that could not be used
N_SAMPLES = None  # Exercise 1's pairs at each call: None draws QUICK_N_SAMPLES
QUICK_N_SAMPLES = 10_000  # Exercise 1's pairs by default (SE of the raw variance at d_k = 1024: 14.5)


def grading_problems(config: dict) -> list[str]:
    """The grading settings of a config that cannot work: modules not installed (or the project's own), and
    Exercise 1's pairs beyond the memory limit (three arrays of n x 1024 float64, and 200 MiB for Python)."""
    from sdpa_lab.grading.modules import ModulesError, site_entries

    lines = []
    if "grading_modules" in config:
        try:
            site_entries(tuple(config["grading_modules"]))
        except ModulesError as exc:
            lines.append(str(exc))
    n = config.get("grading_n_samples") or QUICK_N_SAMPLES
    memory = config.get("grading_memory_mib", MEMORY_MIB)
    needs = 3 * n * 1024 * 8 // 2**20 + 200
    if memory < needs:
        which = f"grading_n_samples = {n}" if config.get("grading_n_samples") else \
            f"grading_n_samples unset: {QUICK_N_SAMPLES:,}"
        lines.append(f"config setting grading_memory_mib: got {memory}: Exercise 1 ({which}) needs about {needs} "
                     "MiB; raise it, or set a smaller grading_n_samples")
    return lines
