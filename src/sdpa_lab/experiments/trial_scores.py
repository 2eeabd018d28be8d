"""The draws B5, B6 and B7 share: raw scores K q of one query against T keys, many trials.

Each trial draws a query q ~ N(0, I_dk) and T keys K ~ N(0, I) of shape (T, d_k),
and keeps the raw scores K q (T,) and the query norm |q|. Drawing (q, K) is nearly
all the cost of the entropy, ranking and gradient experiments (trials * (T + 1) * d_k
normals against trials * T scores kept), so the workflow draws them once per
(seed, d_k, T, trials), in a job of their own, into an .npy file that each of those
experiments reads back in chunks. Without a file, the same scores are drawn in process, or
held in memory when several experiments of one process share them (hold_trial_scores, as the
calibration study's runs do): the numbers are the same every way.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import numpy as np

from sdpa_lab.chunks import CHUNK_ELEMENTS, chunk_rows
from sdpa_lab.io import atomic_writer
from sdpa_lab.joblog import job_log
from sdpa_lab.scales import scale_arg
from sdpa_lab.seeding import stream
from sdpa_lab.validation import check_int, check_seed

# Besides the scales of the lesson, the scores divided by |q|: given q, K q / |q| is exactly
# T independent N(0, 1) draws, the d_k -> infinity limit of the scaled scores. The
# experiments compare the scaled head with it (B5, B7).
REFERENCE_SCALE = "unit_variance_reference"

# Where the shared trial scores come from: an .npy file (write_trial_scores), or an array held in memory
# (hold_trial_scores); None draws them in process.
TrialScores = str | os.PathLike | np.ndarray


def draw_trial_scores(seed: int, d_k: int, T: int, trials: int) -> Iterator[np.ndarray]:
    """Raw scores and query norms of `trials` independent (query, T keys) draws, in chunks (m, T + 1).

    Column j < T of a chunk is the score K[j] . q of each trial; column T is |q|.
    q and K come from separate streams keyed by (seed, d_k, T), each drawn in order,
    so the first n trials are the same whatever `trials` is.
    """
    seed = check_seed(seed)
    d_k, T, trials = check_int(d_k, "d_k"), check_int(T, "T"), check_int(trials, "trials")
    rows = chunk_rows(T * d_k)  # keys (m, T, d_k) per chunk
    rng_q, rng_k = stream(seed, "trial_scores", d_k, T).spawn(2)
    for start in range(0, trials, rows):
        m = min(rows, trials - start)
        q = rng_q.standard_normal((m, d_k))  # (m, d_k)
        K = rng_k.standard_normal((m, T, d_k))  # (m, T, d_k)
        chunk = np.empty((m, T + 1))  # (m, T + 1)
        chunk[:, :T] = np.einsum("mtd,md->mt", K, q)  # scores K q, without a (m, T, d_k) temporary
        chunk[:, T] = np.linalg.norm(q, axis=-1)
        yield chunk


def write_trial_scores(seed: int, d_k: int, T: int, trials: int, path: str | os.PathLike) -> None:
    """Draw the trial scores (draw_trial_scores) into the .npy file `path`, shape (trials, T + 1), atomically.

    The file is written chunk by chunk, as np.save would write the whole array: memory stays bounded.
    """
    chunks = draw_trial_scores(seed, d_k, T, trials)
    first = next(chunks)  # checks the arguments before any file is made
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float64)), "fortran_order": False,
              "shape": (int(trials), int(T) + 1)}
    with atomic_writer(path) as fh:
        np.lib.format.write_array_header_1_0(fh, header)
        for chunk in itertools.chain([first], chunks):  # one chunk in memory at a time
            fh.write(np.ascontiguousarray(chunk, dtype=np.float64).tobytes())


def fits_in_memory(T: int, trials: int) -> bool:
    """Whether the trial scores (trials, T + 1) are at most one chunk (chunks.CHUNK_ELEMENTS): small enough to
    hold in memory (hold_trial_scores) rather than share through a file."""
    return trials * (T + 1) <= CHUNK_ELEMENTS


def hold_trial_scores(seed: int, d_k: int, T: int, trials: int) -> np.ndarray:
    """The trial scores (draw_trial_scores) as one read-only array (trials, T + 1), for several experiments
    of one process to read (trial_scores) instead of drawing them each; read-only, so that none can change
    what the others read. For trial scores that fits_in_memory allows: larger ones go through a file."""
    if not fits_in_memory(T, trials):
        raise ValueError(f"{trials} trials of T = {T} keys are over {CHUNK_ELEMENTS} floats: write them to a file")
    scores = np.concatenate(list(draw_trial_scores(seed, d_k, T, trials)))  # (trials, T + 1)
    scores.flags.writeable = False
    return scores


def read_trial_scores(path: str | os.PathLike, T: int, trials: int, rows: int) -> Iterator[np.ndarray]:
    """The trial scores written by write_trial_scores, in chunks (m, T + 1) of `rows` trials.

    Raises ValueError if the file holds another number of trials or keys.
    """
    scores = np.load(path, mmap_mode="r")  # read chunk by chunk, never whole
    for chunk in held_chunks(scores, T, trials, rows, source=str(path)):
        yield np.array(chunk)  # a copy: one chunk of the file in memory at a time


def trial_scale(scale: str, d_k: int, q_norm: np.ndarray) -> float | np.ndarray | None:
    """The `scale` argument of attention.attention_weights for the raw scores of trials with query norms
    `q_norm` (m,) under `scale`: 1 / |q| per trial (m,) for REFERENCE_SCALE, else scales.scale_arg (None,
    the attention's own, for "inv_sqrt_dk")."""
    return 1.0 / q_norm if scale == REFERENCE_SCALE else scale_arg(scale, d_k)


def rechunk(chunks: Iterator[np.ndarray], rows: int) -> Iterator[np.ndarray]:
    """The rows of `chunks` (each (m, ...)), regrouped into chunks of `rows` (the last may be shorter)."""
    pending: list[np.ndarray] = []
    held = 0
    for chunk in chunks:
        pending.append(chunk)
        held += len(chunk)
        while held >= rows:
            block = np.concatenate(pending)
            yield block[:rows]
            pending, held = [block[rows:]], held - rows
    if held:
        yield np.concatenate(pending)


def held_chunks(scores: np.ndarray, T: int, trials: int, rows: int,
                source: str = "the held trial scores") -> Iterator[np.ndarray]:
    """Trial scores (trials, T + 1) held in memory (hold_trial_scores) or mapped from a file (read_trial_scores)
    in chunks (m, T + 1) of `rows` trials: views, not copies.

    Raises ValueError, naming `source`, if they hold another number of trials or keys.
    """
    if scores.shape != (trials, T + 1) or scores.dtype != np.float64:
        raise ValueError(f"{source}: holds trial scores of shape {scores.shape} ({scores.dtype}); "
                         f"expected ({trials}, {T + 1}) float64 for T = {T}, trials = {trials}")
    for start in range(0, trials, rows):
        yield scores[start:start + rows]


def trial_scores(seed: int, d_k: int, T: int, trials: int, rows: int,
                 path: TrialScores | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Raw scores (m, T) and query norms (m,) of the trials, `rows` per chunk: from `path` if given (a file, or
    an array held in memory), else drawn.

    Every way gives the same numbers: the file and the array hold exactly what draw_trial_scores yields.
    """
    rows = check_int(rows, "rows")
    if isinstance(path, np.ndarray):
        chunks = held_chunks(path, T, trials, rows)
    elif path is not None:
        chunks = read_trial_scores(path, T, trials, rows)
    else:
        chunks = rechunk(draw_trial_scores(seed, d_k, T, trials), rows)
    for chunk in chunks:
        yield chunk[:, :T], chunk[:, T]


def draw_job(seed: int, d_k: int, T: int, trials: int, path: str | os.PathLike, log_path: str | None = None) -> None:
    """What rule trial_scores runs: write_trial_scores, logged to `log_path`."""
    with job_log("trial_scores", log_path) as logger:
        write_trial_scores(seed, d_k, T, trials, path)
        logger.info("trial_scores: wrote %d trials (seed %d, d_k %d, T %d) to %s", trials, seed, d_k, T, path)
