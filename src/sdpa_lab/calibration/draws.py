"""What every arm of a calibration run makes the same: made once for a batch's runs, read by each arm's batch job.

A broken arm's run i has the seed of the correct arm's run i (calibration.runner): it draws the same numbers. Of a
run's work, what the attention plays no part in is most of a large run's CPU (benchmarks/README.md measures it):
the variance experiment's raw score moments, the trial scores the entropy, ranking and gradient experiments share,
and Exercise 2's falls. In the batches broken arms run too (Study.draws_batches), rule calibration_draws makes these
once for the batch's runs (write_draws, an .npz written a run at a time), and each arm's batch job reads them
(Drawn) rather than drawing them again. They are the same numbers, so each run's rows are still those it makes
alone (tests/calibration/test_draws.py). What the attention shapes (weights, gradients, the descent) each arm makes.
"""

from __future__ import annotations

import zipfile
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sdpa_lab.experiments import entropy_sweep, variance
from sdpa_lab.experiments.registry import EXPERIMENTS, settings_of, trial_scores_files
from sdpa_lab.experiments.trial_scores import fits_in_memory, hold_trial_scores
from sdpa_lab.io import atomic_writer
from sdpa_lab.moments import Moments


def run_draws(config: Mapping) -> dict[str, np.ndarray]:
    """The parts of the run under `config` (runner.run_config) the attention plays no part in, by name: "seed";
    "variance", the raw scores' moments (count, mean, M2) at each d_k of the variance sweep (len(d_k), 3);
    "exercise2", Exercise 2's falls; "trial_scores/<file stem>", each trial-score array the run's experiments share
    and hold in memory (trial_scores.fits_in_memory; larger ones go through a scratch file, and each arm draws them)."""
    v, e = settings_of(config, "variance"), settings_of(config, "entropy_sweep")
    moments = [variance.raw_moments(v["seed"], d_k, v["n_pairs"]) for d_k in v["d_k"]]
    made = {"seed": np.array(config["seed"], dtype=np.uint64),
            "variance": np.array([(m.count, m.mean, m.m2) for m in moments], dtype=np.float64),
            "exercise2": np.array(entropy_sweep.exercise2_falls(e["seed"], e["trials"]), dtype=np.int64)}
    for name, experiment in EXPERIMENTS.items():
        if not experiment.shares_trial_scores:
            continue
        s = settings_of(config, name)
        for d_k, path in trial_scores_files(name, s).items():
            key = f"trial_scores/{Path(path).stem}"
            if key not in made and fits_in_memory(s["T"], s["trials"]):
                made[key] = hold_trial_scores(s["seed"], d_k, s["T"], s["trials"])
    return made


def write_draws(runs: Iterable[tuple[int, Mapping]], out: str | Path) -> int:
    """run_draws of each (seed index, config) of `runs`, written to the .npz `out` (one .npy member per part,
    "<seed index>/<name>") a run at a time, so that memory holds one run's; atomically. Returns the runs written."""
    written = 0
    with atomic_writer(out) as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for seed_index, config in runs:
            for name, array in run_draws(config).items():
                with archive.open(f"{int(seed_index)}/{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)
            written += 1
    return written


@dataclass(frozen=True)
class RunDraws:
    """One run's parts of run_draws, as the stacked experiments take them (calibration.stacked)."""

    moments: dict[int, Moments]  # variance_stacked's: the raw scores' moments by d_k
    falls: int  # entropy_stacked's: Exercise 2's falls
    trial_scores: dict[str, np.ndarray]  # by the pipeline's trial-score file stem (held arrays)


def stacked_parts(runs: Sequence[RunDraws]) -> dict[str, dict[str, list]]:
    """What each stacked experiment (calibration.stacked.STACKED) takes of `runs`' draws, as its keyword arguments,
    by experiment: the variance its raw moments, the entropy sweep Exercise 2's falls (the trial scores go through
    the experiments' shared sources)."""
    return {"variance": {"moments": [run.moments for run in runs]},
            "entropy_sweep": {"falls": [run.falls for run in runs]}}


class Drawn:
    """The draws write_draws wrote to `path`, read a run at a time."""

    def __init__(self, path: str | Path):
        self.path = path
        self._npz = np.load(path, allow_pickle=False)
        self._members: dict[int, list[str]] = defaultdict(list)
        for member in self._npz.files:
            index, _, name = member.partition("/")
            self._members[int(index)].append(name)

    def run(self, seed_index: int, config: Mapping) -> RunDraws:
        """Seed index `seed_index`'s draws, for its run under `config`; ValueError unless they are that run's (its
        seed and its variance sweep's size)."""
        if "seed" not in self._members.get(seed_index, ()):
            raise ValueError(f"{self.path}: holds no draws of seed index {seed_index}")
        part = {name: self._npz[f"{seed_index}/{name}"] for name in self._members[seed_index]}
        v = settings_of(config, "variance")
        if int(part["seed"]) != config["seed"] or len(part["variance"]) != len(v["d_k"]):
            raise ValueError(f"{self.path}: the draws of seed index {seed_index} are not of seed {config['seed']} "
                             f"and its {len(v['d_k'])} variance head sizes: remake them (rule calibration_draws)")
        moments = {d_k: Moments(int(count), float(mean), float(m2))
                   for d_k, (count, mean, m2) in zip(v["d_k"], part["variance"].tolist(), strict=True)}
        trial_scores = {name.removeprefix("trial_scores/"): array for name, array in part.items()
                        if name.startswith("trial_scores/")}
        return RunDraws(moments, int(part["exercise2"]), trial_scores)

    def close(self) -> None:
        self._npz.close()
