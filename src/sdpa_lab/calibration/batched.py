"""The calibration tables from the batches one batch at a time (rule calibration_tables).

Memory is bounded by the largest batch and the tables themselves, not by the study: each batch's share of every
table (batch_share, of its CSV read alone, only the columns a summary needs: a run's checks are all in one batch) is
merged into what the batches before it gave: counts summed, maxima taken, means and sds of z from mergeable
moments (n, mean, M2). A batch job writes its share beside its CSV (calibration.shares), so the tables job merges
those rather than reading the batches again. checks.csv is the batches' text copied in (config, arm, run) order,
never parsed.

The tables equal summary.summaries of all the checks at once: the same rows, columns and order, integers and
strings exactly, means and sds to floating-point rounding (tests/calibration/test_batched.py).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from sdpa_lab.calibration import summary as s
from sdpa_lab.calibration.qq_rows import TEXT as QQ_TEXT
from sdpa_lab.calibration.qq_rows import plotted
from sdpa_lab.calibration.studies import ARMS, COLUMNS, CORRECT_ARM
from sdpa_lab.calibration.tails import LAW, OVER
from sdpa_lab.claims import FAILS, INCONCLUSIVE
from sdpa_lab.io import atomic_writer

# The columns some summary reads (expected and se: a ratio's law, calibration.tails); the others (measured, tolerance,
# deviation) only checks.csv and false_fail_checks.csv show, which copy them as text or read the few failing rows
# again.
NEEDED = tuple(c for c in COLUMNS if c not in ("measured", "tolerance", "deviation"))
HEADER = ",".join(COLUMNS)
CHUNK_BYTES = 1 << 24  # what checks.csv is copied through at a time
# A run's seed is 64-bit unsigned (seeding.calibration_seed): read as such, not as int64 where a batch's seeds
# happen to be below 2^63, since int64 and uint64 parts make a float64 column when put together.
DTYPES = {"seed": "uint64"}


def checks_key(config: str, arm: str, run: int) -> tuple[str, int, int]:
    """Where a batch whose first run is `run` of `config` and `arm` comes in checks.csv: by config, arm (in ARMS
    order), run."""
    return str(config), ARMS.index(arm), int(run)


def batch_order(paths) -> list[str]:
    """The non-empty batch CSVs in the checks' (config, arm, run) order (arms in ARMS order), each checked to
    have the checks table's columns; ValueError naming a batch that has not."""
    paths, keyed = [str(p) for p in paths], []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            header = fh.readline().rstrip("\r\n")
        if header != HEADER:
            raise ValueError(f"calibration batch {path}: its columns are not the checks table's {list(COLUMNS)}")
        first = pd.read_csv(path, nrows=1, usecols=["config", "arm", "run"])
        if len(first):
            arm = first.arm.iloc[0]
            if arm not in ARMS:
                raise ValueError(f"calibration batch {path}: unknown arm {arm!r} (one of {list(ARMS)})")
            keyed.append((checks_key(first.config.iloc[0], arm, first.run.iloc[0]), path))
    if not keyed:
        raise ValueError("no calibration batches to aggregate" + (" (every one is empty)" if paths else ""))
    return [path for _, path in sorted(keyed)]


def read_batch(path: str) -> pd.DataFrame:
    """The NEEDED columns of one batch; ValueError unless it is one config and arm with its runs in order, as the
    merge assumes."""
    c = pd.read_csv(path, usecols=list(NEEDED), dtype=DTYPES, keep_default_na=True)[list(NEEDED)]
    if c.config.nunique() != 1 or c.arm.nunique() != 1 or not c.run.is_monotonic_increasing:
        raise ValueError(f"calibration batch {path}: not one config and arm with its runs in order")
    return c


def _fold(acc: pd.DataFrame | None, part: pd.DataFrame, keys: list[str], how: dict) -> pd.DataFrame:
    """acc and part merged per group of `keys` by `how` (column -> "sum", "max", "first"), groups in order of
    first appearance (acc's, then part's new ones)."""
    both = part if acc is None else pd.concat([acc, part], ignore_index=True)
    return both.groupby(keys, sort=False).agg(how).reset_index()


def z_moments(c: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group of `by` of one batch's checks with a z: what z_summary needs, mergeable (n, mean, M2 of z)."""
    st = c[c.z.notna()]
    st = st.assign(abs_z=st.z.abs(), is_fail=st.verdict == FAILS, is_inconclusive=st.verdict == INCONCLUSIVE)
    g = st.groupby(by, sort=False)
    out = g.agg(basis=("basis", "first"), n=("z", "size"), runs=("run", "nunique"), mean=("z", "mean"),
                k_check_sum=("k_check", "sum"), k_check_n=("k_check", "count"), k_sum=("k", "sum"),
                k_n=("k", "count"), max_abs_z=("abs_z", "max"), fails=("is_fail", "sum"),
                inconclusive=("is_inconclusive", "sum"))
    out["m2"] = ((st.z - g.z.transform("mean")) ** 2).groupby([st[b] for b in by], sort=False).sum()
    return out.reset_index()


Z_HOW = {"basis": "first", "n": "sum", "runs": "sum", "mean": "first", "m2": "sum", "k_check_sum": "sum",
         "k_check_n": "sum", "k_sum": "sum", "k_n": "sum", "max_abs_z": "max", "fails": "sum",
         "inconclusive": "sum"}


def fold_moments(acc: pd.DataFrame | None, part: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Two z_moments tables merged (Chan et al.: M2 = sum of M2 + n (mean - pooled mean)^2 per part)."""
    if acc is None:
        return part
    both = pd.concat([acc, part], ignore_index=True)
    g = both.groupby(by, sort=False)
    pooled = (both.n * both["mean"]).groupby([both[b] for b in by], sort=False).transform("sum") / g.n.transform(
        "sum")
    both = both.assign(m2=both.m2 + both.n * (both["mean"] - pooled) ** 2, mean=pooled)
    return both.groupby(by, sort=False).agg(Z_HOW).reset_index()


def z_table(moments: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """summary.z_summary's table from merged z_moments."""
    m = moments
    out = m[by].assign(basis=m.basis, n=m.n.astype("int64"), runs=m.runs.astype("int64"), mean_z=m["mean"],
                       sd_z=np.sqrt(m.m2 / (m.n - 1)).where(m.n > 1), k_check=m.k_check_sum / m.k_check_n,
                       max_abs_z=m.max_abs_z.astype(float), k=m.k_sum / m.k_n, fails=m.fails.astype("int64"),
                       inconclusive=m.inconclusive.astype("int64"))
    return s.z_verdicts(out, by)


def failing_rows(path: str, c: pd.DataFrame) -> pd.DataFrame:
    """Every column of the batch's correct-arm failing checks (false_fail_checks), read again for those rows alone."""
    wanted = set((np.flatnonzero(((c.arm == CORRECT_ARM) & (c.verdict == FAILS)).to_numpy()) + 1).tolist())
    if not wanted:
        return pd.read_csv(path, nrows=1, dtype=DTYPES).iloc[:0]
    return pd.read_csv(path, skiprows=lambda i: i and i not in wanted, dtype=DTYPES, keep_default_na=True)


def batch_share(path: str, c: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Batch `path`'s share of every table (its NEEDED columns `c`, read_batch's), mergeable with the other batches'
    (merge_shares): its runs, its failing rows, its z moments and counts, and the rows the report plots."""
    families, every = s.tail_counts(c)
    return {"runs": s.runs_table(c), "bad": failing_rows(path, c), "z": z_moments(c, s.FAMILY),
            "zp": z_moments(c, [*s.FAMILY, "parameters"]), "d": s.directional_counts(c), "p": s.power_counts(c),
            "tf": families, "ta": every,
            "qq": plotted(c).reset_index(drop=True).astype(dict.fromkeys(QQ_TEXT, "category"))}


def csv_shares(paths: Sequence[str]) -> Iterator[tuple[str, dict[str, pd.DataFrame]]]:
    """(path, batch_share) of each batch CSV in `paths`, read one at a time."""
    for path in paths:
        yield path, batch_share(path, read_batch(path))


def merge_shares(shares: Iterable[tuple[str, dict[str, pd.DataFrame]]], alpha_family: float,
                 sweeps: dict[str, list] | None = None, preregistered: Collection[str] = ()) -> dict[str, pd.DataFrame]:
    """summary.summaries' tables (not checks) from the batches' shares, (batch, batch_share) in batch_order, merged
    one at a time; ValueError if a batch's runs are not after those of the batch before it."""
    runs, bad, acc, after = [], [], {}, None
    for path, share in shares:
        r = share["runs"]  # one config and arm, its runs in order (read_batch)
        if after is not None and after[:2] == (r.config.iloc[0], r.arm.iloc[0]) and r.run.iloc[0] <= after[2]:
            raise ValueError(f"calibration batch {path}: its runs overlap another batch's (run {r.run.iloc[0]})")
        after = (r.config.iloc[0], r.arm.iloc[0], r.run.iloc[-1])
        runs.append(share["runs"])
        bad.append(share["bad"])
        for name, by in (("z", s.FAMILY), ("zp", [*s.FAMILY, "parameters"])):
            acc[name] = fold_moments(acc.get(name), share[name], by)
        acc["d"] = _fold(acc.get("d"), share["d"], s.FAMILY, dict.fromkeys(
            ("n", "runs", "holds", "inconclusive", "fails", "other"), "sum"))
        acc["p"] = _fold(acc.get("p"), share["p"], ["config", "arm", "claim"],
                         dict.fromkeys(("runs", "fails", "not_holds"), "sum"))
        how = dict.fromkeys(("n", *OVER), "sum")
        acc["tf"] = _fold(acc.get("tf"), share["tf"], [*s.FAMILY, *LAW], how)
        acc["ta"] = _fold(acc.get("ta"), share["ta"], ["config", "arm", *LAW], how)
    runs = s._order(pd.concat(runs, ignore_index=True), s.RUN)
    configs = s.configs_table(sweeps or {})
    if configs.empty:
        configs = pd.DataFrame(columns=["config", "sweep", "settings"])
    return {
        "configs": configs,
        "false_fail_checks": s.false_fail_checks(pd.concat(bad, ignore_index=True), configs),
        "runs": runs,
        "z_summary": z_table(acc["z"], s.FAMILY),
        "z_by_point": z_table(acc["zp"], [*s.FAMILY, "parameters"]),
        "false_fails": s.false_fails(runs, alpha_family, preregistered),
        "directional": s.directional_table(acc["d"]),
        "power": s.power_table(acc["p"]),
        "tails": s.tails_table(acc["tf"], acc["ta"]),
    }


def write_checks(paths: Sequence[str], out: str | Path) -> None:
    """checks.csv: the header, then each batch's rows as they are written (batch_order), copied as bytes a chunk
    at a time."""
    with atomic_writer(out) as fh:
        fh.write((HEADER + "\n").encode())
        for path in paths:
            with open(path, "rb") as src:
                src.readline()  # its header, the same as every batch's (batch_order)
                shutil.copyfileobj(src, fh, CHUNK_BYTES)
                src.seek(-1, os.SEEK_END)
                if src.read(1) != b"\n":  # a batch without a final line end (batch_order: it has a row)
                    fh.write(b"\n")
