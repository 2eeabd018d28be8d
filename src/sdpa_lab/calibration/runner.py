"""Running the calibration study: the seeded experiments over many seeds, every claim decided on each run.

Run i of a study (sdpa_lab.calibration.studies) has the root seed
seeding.calibration_seed(sweep seed, i); every arm makes runs 0, 1, ... with the same seeds, so
a broken arm sees exactly the draws of the correct arm's first runs.

One run, in process: every experiment of the pipeline that depends on the seed, at that seed and
measuring the arm's attention (attention_of: the correct arm, the shipped one; a broken arm, the shipped
one broken in one place, BREAKS), handed to each experiment that takes the attention, its tables kept in
memory; then every claim decided on them by the claims registry
(`sdpa_lab.claims.decide`, on a `Results` built from the tables), exactly as `sdpa-lab check`
decides a pipeline run. The study is generic over the checks: it records, for every check that
reads a seeded table, what the check itself says (relation, expected, measured, SE, tolerance,
verdict, its claim's k), and z = deviation / SE for the statistical ones.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np

from sdpa_lab.attention import SHIPPED, Attention
from sdpa_lab.calibration.check_table import as_rows, check_cells, check_text
from sdpa_lab.calibration.draws import Drawn, RunDraws, stacked_parts, write_draws
from sdpa_lab.calibration.stacked import STACKED, group_size
from sdpa_lab.calibration.studies import ARMS, CORRECT_ARM, Study, check_study, is_seeded
from sdpa_lab.claims.expectation_table import read_expectations, read_unit_variance_means, sweep_expectations
from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of, trial_scores_files
from sdpa_lab.experiments.trial_scores import TrialScores, fits_in_memory, hold_trial_scores, write_trial_scores
from sdpa_lab.joblog import job_log
from sdpa_lab.pipeline import run_experiment
from sdpa_lab.seeding import calibration_seed
from sdpa_lab.tables import Rows


def seeded_experiments() -> tuple[str, ...]:
    """The pipeline's experiments whose tables depend on the config's seed (not the lesson replications,
    which use the lesson's own fixed seeds)."""
    return tuple(name for name in EXPERIMENTS if is_seeded(name))


def fixed_experiments() -> tuple[str, ...]:
    """The experiments whose tables are the same in every run (the lesson replications)."""
    return tuple(name for name in EXPERIMENTS if name not in seeded_experiments())


def table_file(experiment: str, key: str) -> str:
    """The result CSV's file name (what the claims read) of output `key` of `experiment`."""
    return EXPERIMENTS[experiment].outputs[key].file


def no_scale(d_k: int) -> float:
    """A broken default scale: none (1)."""
    return 1.0


def inv_dk(d_k: int) -> float:
    """A broken default scale: 1 / d_k."""
    return 1.0 / d_k


def jacobian_without_pp_term(p: np.ndarray, g: np.ndarray) -> np.ndarray:
    """A broken softmax backward: J g with J = diag(p), its -p p^T term dropped -> (..., T)."""
    return p * g


# What each broken arm replaces in the shipped attention (a field of sdpa_lab.attention.Attention), and with
# what: its scale, which its forward, scaled scores and weights take, or its softmax's Jacobian product (backward),
# which every experiment's gradient takes.
BREAKS = {"none": ("scale", no_scale), "inv_dk": ("scale", inv_dk),
          "no_pp_term": ("backward", jacobian_without_pp_term)}


def attention_of(arm: str) -> Attention:
    """Arm `arm`'s attention: the shipped one for the correct arm, else the shipped one broken where BREAKS says."""
    if arm == CORRECT_ARM:
        return SHIPPED
    if arm not in BREAKS:
        raise ValueError(f"unknown arm {arm!r}; expected one of {ARMS}")
    field, broken = BREAKS[arm]
    return dataclasses.replace(SHIPPED, **{field: broken})


def run_config(sweep: Mapping, index: int) -> dict:
    """The sweep config of run `index`: the sweep with its root seed replaced by the run's."""
    return {**sweep, "seed": calibration_seed(sweep["seed"], index)}


def fixed_tables(sweep: Mapping, fixed_dir: str | Path | None = None) -> dict:
    """The tables of the experiments that do not depend on the seed, by file name: read from the
    result CSVs in `fixed_dir` if given (the pipeline's own, as the workflow passes them), else made here."""
    if fixed_dir is not None:
        from sdpa_lab.results import read_table

        return {table_file(name, key): read_table(fixed_dir, table_file(name, key))
                for name in fixed_experiments() for key in EXPERIMENTS[name].outputs}
    import pandas as pd

    return {table_file(name, key): pd.DataFrame(rows) for name in fixed_experiments()
            for key, rows in run_experiment(name, settings_of(sweep, name)).items()}


def share_trial_scores(settings: Mapping, d_k: int, scratch_file: str | Path) -> TrialScores:
    """The trial scores at `d_k` of an experiment's `settings`, drawn once for the run's experiments that share
    them: held in memory if they fit (trial_scores.fits_in_memory), else written to `scratch_file` (as the
    workflow's trial_scores rule writes them) and read back in chunks, so that memory stays bounded."""
    seed, T, trials = settings["seed"], settings["T"], settings["trials"]
    if fits_in_memory(T, trials):
        return hold_trial_scores(seed, d_k, T, trials)
    write_trial_scores(seed, d_k, T, trials, scratch_file)
    return str(scratch_file)


def run_rows(config: Mapping, arm: str, scratch: str | Path) -> dict[str, Rows]:
    """The seeded experiments' tables under `config` measuring arm `arm`'s attention (attention_of), by file name,
    as rows (as Results takes them: only the columns the claims read are converted): the experiments'
    kernels, as the pipeline runs them.

    The trial scores that several experiments share are drawn once (share_trial_scores), as the
    workflow's trial_scores rule draws them; the tables are the same as the pipeline's own.
    """
    shared: dict[str, TrialScores] = {}  # by the pipeline's trial-score file
    tables = {}
    attention = attention_of(arm)
    for name in seeded_experiments():
        settings = settings_of(config, name)
        sources = {}
        for d_k, path in trial_scores_files(name, settings).items():
            if path not in shared:
                shared[path] = share_trial_scores(settings, d_k, Path(scratch) / Path(path).name)
            sources[d_k] = shared[path]
        for key, rows in run_experiment(name, settings, trial_scores=sources, attention=attention).items():
            tables[table_file(name, key)] = rows
    for source in shared.values():
        if not isinstance(source, np.ndarray):
            Path(source).unlink()
    return tables


class Decider:
    """Decides the claims of a run that read a seeded table, as `sdpa-lab check` decides them: the other claims
    read only the fixed tables (the same in every run), and no claim's k depends on another's (each claim's own
    share of the run's false-fail budget, split over its own statistical checks), so each check decided here is
    the one deciding the run whole gives, k and all."""

    def __init__(self, seeded_files: set[str]):
        from sdpa_lab.claims import registry

        self.seeded = [c for c in registry().values() if set(c.reads) & seeded_files]

    def __call__(self, results):
        from sdpa_lab.claims import decide

        return decide(results, self.seeded)


def batch_runs(study: Study, arm: str, batch: int, timing: dict | None = None,
               fixed_dir: str | Path | None = None, expectations: Mapping | None = None,
               sweeps: list | None = None, unit_means: Mapping | None = None) -> Iterator[Rows]:
    """Every check of each run of batch `batch` of arm `arm` (COLUMNS), as rows, a run at a time (batch_cells)."""
    for cells in batch_cells(study, arm, batch, timing, fixed_dir, expectations, sweeps, unit_means):
        yield as_rows(cells)


def batch_cells(study: Study, arm: str, batch: int, timing: dict | None = None,
                fixed_dir: str | Path | None = None, expectations: Mapping | None = None,
                sweeps: list | None = None, unit_means: Mapping | None = None,
                draws_file: str | Path | None = None) -> Iterator[list[tuple]]:
    """Every check of each run of batch `batch` of arm `arm` (check_table.check_cells, in COLUMNS' order), a run at
    a time, in run order: a batch job writes each run's rows as they come, so that its memory does not grow with
    its runs.

    The lesson replications' tables are read from `fixed_dir` if given, else made here (fixed_tables);
    the claims' finite-d_k expectations are `expectations` if given (the study's, read_expectations), else
    computed here (sweep_expectations, per sweep, on the unit-variance means `unit_means` where given: a space
    study's, read_unit_variance_means); the study's sweeps are `sweeps` if given (a space study's,
    as rule calibration_sweeps wrote them), else the study's own (Study.sweeps); what its runs make the same in every
    arm is read from `draws_file` if given (calibration.draws: rule calibration_draws's), else made here.
    `timing`, if given, receives the CPU seconds spent in the experiments ("experiments": run_rows,
    their draws and kernels), in computing the expectations here ("expectations": a space study's, per sweep),
    in deciding the claims ("decide": the columns they read converted included) and in all of it ("total", the
    consumer's work between runs included), once the last run is given: the benchmark's share of CPU outside the
    experiments' kernels.
    """
    from sdpa_lab.results import Results, RowIndexes  # pandas: the claims registry reads tables

    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; expected one of {ARMS}")
    clock = time.process_time
    spent = {"experiments": 0.0, "expectations": 0.0, "decide": 0.0}
    start = clock()
    # the lesson tables as columns, once per job: no pandas access per run
    sweeps = study.sweeps() if sweeps is None else sweeps
    fixed = {name: {column: table[column].to_numpy() for column in table}
             for name, table in fixed_tables(sweeps[0], fixed_dir).items()}
    seeded_files = {table_file(name, key) for name in seeded_experiments() for key in EXPERIMENTS[name].outputs}
    decider = Decider(seeded_files)
    indexes = RowIndexes()  # the runs of one sweep have the same sweep points: their row indexes are built once
    known: dict[int, Mapping] = {}
    drawn = Drawn(draws_file) if draws_file is not None else None
    closing = contextlib.closing(drawn) if drawn is not None else contextlib.nullcontext()  # closed however it ends
    with tempfile.TemporaryDirectory(prefix="sdpa-lab-calibration-") as scratch, closing:
        for group in run_groups(study, arm, batch, sweeps):  # runs of one sweep, stacked (calibration.stacked)
            sweep = group[0][1]
            configs = [run_config(sweeps[sweep], seed_index) for _, _, seed_index in group]
            t0 = clock()
            if sweep not in known:  # a space study's runs of one sweep are consecutive: computed once for them
                known = {sweep: sweep_expectations(sweeps[sweep], unit_means) if expectations is None
                         else expectations}
            t1 = clock()
            spent["expectations"] += t1 - t0
            t0 = t1
            runs = None if drawn is None else [drawn.run(seed_index, config)
                                               for (_, _, seed_index), config in zip(group, configs, strict=True)]
            made = stacked_tables(configs, arm, scratch, runs)
            spent["experiments"] += clock() - t0
            for run, config, tables in zip(group, configs, made, strict=True):
                t1 = clock()
                decision = decider(Results(f"<calibration {study.name} {arm} run {run[0]}>", {**fixed, **tables},
                                           known[sweep], indexes))
                spent["decide"] += clock() - t1
                yield check_cells(study.name, arm, run, config["seed"], decision, seeded_files)
    if timing is not None:
        timing.update(spent, total=clock() - start, runs=len(study.indices(arm, batch)))


def run_groups(study: Study, arm: str, batch: int, sweeps: list) -> Iterator[list[tuple[int, int, int]]]:
    """The runs of batch `batch` of arm `arm` as (run, sweep, seed index), in run order, in groups of consecutive runs
    of one sweep, each at most stacked.group_size of that sweep."""
    group: list[tuple[int, int, int]] = []
    for index in study.indices(arm, batch):
        sweep, seed_index = study.run_key(arm, index)
        if group and (group[0][1] != sweep or len(group) >= group_size(sweeps[sweep])):
            yield group
            group = []
        group.append((index, sweep, seed_index))
    if group:
        yield group


def run_batch(study: Study, arm: str, batch: int, timing: dict | None = None,
              fixed_dir: str | Path | None = None, expectations: Mapping | None = None,
              sweeps: list | None = None) -> Rows:
    """Every check of every run of batch `batch` of arm `arm` (batch_runs), as one table."""
    return [row for rows in batch_runs(study, arm, batch, timing, fixed_dir, expectations, sweeps) for row in rows]


def sweeps_job(settings: Mapping, name: str, out: str | Path, log_path: str | None = None) -> None:
    """What rule calibration_sweeps runs: a study's sweep configs (Study.sweeps: those a space study draws from
    the schema) written to `out` as JSON, for its batches and tables."""
    import json

    from sdpa_lab.io import write_text

    with job_log("calibration_sweeps", log_path) as logger:
        sweeps = check_study(dict(settings), name).sweeps()
        write_text(json.dumps(sweeps, indent=None, separators=(",", ":")) + "\n", out)
        logger.info("calibration %s: %d sweep configs written to %s", name, len(sweeps), out)


def read_sweeps(path: str | Path) -> list[dict]:
    """The sweep configs sweeps_job wrote (JSON: floats read back exactly)."""
    import json

    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def draws_job(name: str, settings: Mapping, batch: int, out: str | Path, log_path: str | None = None) -> None:
    """What rule calibration_draws runs: the parts of the runs of batch `batch` of study `name` (`settings` as
    batch_job's) that every arm makes the same (calibration.draws), written to `out` for the arms' batch jobs: the
    correct arm's runs of that batch, whose first ones the broken arms' batch holds (Study.draws_batches)."""
    import resource

    with job_log("calibration_draws", log_path) as logger:
        study = check_study(dict(settings), name)
        if int(batch) not in study.draws_batches():
            raise ValueError(f"calibration study {name}: batch {batch} is not one whose draws the arms share "
                             f"(Study.draws_batches: {list(study.draws_batches())})")
        sweep = study.sweeps()[0]
        written = write_draws(((i, run_config(sweep, i)) for i in study.indices(CORRECT_ARM, int(batch))), out)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        logger.info("calibration %s, batch %s: the draws of %d runs written to %s; CPU s: process %.2f; "
                    "peak RSS %.0f MiB", study.name, batch, written, out, usage.ru_utime + usage.ru_stime,
                    usage.ru_maxrss / 1024)


def batch_job(name: str, settings: Mapping, arm: str, batch: int, out: str | Path,
              expectations_file: str | Path | None, fixed_dir: str | Path | None = None, log_path: str | None = None,
              sweeps_file: str | Path | None = None, share_out: str | Path | None = None,
              draws_file: str | Path | None = None) -> None:
    """What rule calibration_batch runs: batch_runs of study `name` with `settings` (Study.settings, the
    rule's params; checked again here), the expectations read from `expectations_file` (expectations_job's),
    the lesson tables from `fixed_dir`, written to `out` (CSV) a run at a time, then the batch's share of the
    tables to `share_out` if given (calibration.shares, made from `out` as the tables job would read it). A space
    study's `expectations_file` holds the unit-variance means of all its sweeps (expectation_table.unit_variance_means,
    made once for the study), on which each of its sweeps' expectations are computed here; it reads its sweeps
    from `sweeps_file` (sweeps_job's). What its runs make the same in every arm is read from `draws_file` if given
    (draws_job's).
    Logs its CPU split: in the experiments, deciding the claims, the batch, its share, and the whole process since
    it started (interpreter and imports included), and its peak memory, for benchmarks/calibration.py."""
    import resource

    from sdpa_lab.io import atomic_writer

    with job_log("calibration_batch", log_path) as logger:
        study = check_study(dict(settings), name)
        timing: dict = {}
        checks = 0
        with atomic_writer(out) as fh:  # the file appears once every run is written
            given = read_expectations(expectations_file) if expectations_file and not study.space else None
            unit_means = read_unit_variance_means(expectations_file) if expectations_file and study.space else None
            sweeps = read_sweeps(sweeps_file) if sweeps_file else None
            runs = batch_cells(study, arm, int(batch), timing, fixed_dir, given, sweeps, unit_means, draws_file)
            for i, rows in enumerate(runs):
                fh.write(check_text(rows, header=i == 0).encode("utf-8"))  # the bytes of csv_text of all the rows
                checks += len(rows)
        shared = time.process_time()
        if share_out is not None:
            from sdpa_lab.calibration.shares import write_share

            write_share(out, share_out)
        shared = time.process_time() - shared
        usage = resource.getrusage(resource.RUSAGE_SELF)
        logger.info("calibration %s, arm %s, batch %s: %d runs, %d checks; CPU s: experiments %.2f, "
                    "decide %.2f, total %.2f, process %.2f; peak RSS %.0f MiB; expectations computed %.2f; share %.2f",
                    study.name, arm, batch, timing["runs"], checks, timing["experiments"], timing["decide"],
                    timing["total"], usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                    timing["expectations"], shared)


def stacked_tables(configs: Sequence[Mapping], arm: str, scratch,
                   drawn: Sequence[RunDraws] | None = None) -> list[dict[str, Rows]]:
    """run_rows of each config (one sweep, their seeds differing) measuring arm `arm`'s attention, the
    experiments that STACKED stacks stacked: each run's tables, by file name, the same as run_rows makes alone.
    `drawn`: each run's parts that do not depend on the attention, made already (calibration.draws), or None."""
    attention = attention_of(arm)
    seeds = [config["seed"] for config in configs]
    tables: list[dict[str, Rows]] = [{} for _ in configs]
    shared: dict[str, object] = {}  # by the pipeline's trial-score file, per run: as run_rows shares them
    # what calibration.draws made: the runs' trial scores by file stem, and the stacked experiments' own parts
    held = {stem: scores for run in drawn or () for stem, scores in run.trial_scores.items()}
    given = {} if drawn is None else stacked_parts(drawn)
    for name in seeded_experiments():
        settings = [settings_of(config, name) for config in configs]
        sources = []
        for s in settings:
            files = trial_scores_files(name, s)
            for d_k, path in files.items():
                if path not in shared:
                    shared[path] = (held[Path(path).stem] if Path(path).stem in held
                                    else share_trial_scores(s, d_k, Path(scratch) / Path(path).name))
            sources.append({d_k: shared[path] for d_k, path in files.items()})
        made = None
        if name in STACKED:
            function, reads_scores = STACKED[name]
            if not reads_scores:
                made = function(seeds, settings[0], attention, **given.get(name, {}))
            elif all(isinstance(x, np.ndarray) for source in sources for x in source.values()):
                made = function(seeds, settings[0], sources, attention, **given.get(name, {}))
        if made is None:  # alone, as run_rows runs it
            made = [run_experiment(name, s, trial_scores=source, attention=attention)
                    for s, source in zip(settings, sources, strict=True)]
        for table, run in zip(tables, made, strict=True):
            table.update({table_file(name, key): rows for key, rows in run.items()})
    for source in shared.values():
        if not isinstance(source, np.ndarray):
            Path(source).unlink()
    return tables
