"""A small study's batch CSVs for the tests of the tables made from them (test_batched, test_shares)."""

from __future__ import annotations

from pathlib import Path

from sdpa_lab.calibration.runner import run_batch
from sdpa_lab.calibration.studies import ARMS, CORRECT_ARM, check_study
from sdpa_lab.io import write_csv

from tests.calibration.sizes import SMALLEST


def study_batches(out: Path, name: str, seeds: int, broken_seeds: int, batch: int, lesson_dir) -> list[Path]:
    """Study `name` at the smallest sweep run batch by batch into `out`/<arm>/batch<b>.csv, the correct arm's batch b
    named batch<10 b> (so that batch10 sorts before batch2 by name); then a copy of the last broken arm's batch
    relabelled as a correct arm of config "zz" (false fails, for the false fails' tables)."""
    s = check_study({"seeds": seeds, "broken_seeds": broken_seeds, "batch": batch, "seconds_per_run": 0.03,
                     "sweep": SMALLEST}, name)
    paths = []
    for arm in ARMS:
        for b in s.batches(arm):
            path = out / arm / f"batch{b * 10 if arm == CORRECT_ARM else b}.csv"
            write_csv(run_batch(s, arm, b, fixed_dir=lesson_dir), path)
            paths.append(path)
    fake = out / "zz.csv"
    fake.write_text(paths[-1].read_text().replace(f"\n{name},{ARMS[-1]},", f"\nzz,{CORRECT_ARM},"))
    return [*paths, fake]
