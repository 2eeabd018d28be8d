"""Every random stream of the project, in one place.

The lesson's replications use the lesson's own seeding (a global legacy
stream, or default_rng(42)). Everything else draws from a stream keyed by
the configured seed, the experiment's name and the job's own parameters, so
a result never depends on which jobs ran before it or on --cores.
"""

from __future__ import annotations

import zlib

import numpy as np

LESSON_SEED = 42


def experiment_key(name: str) -> int:
    """A stable 32-bit integer for an experiment's name (CRC-32, not Python's salted hash)."""
    return zlib.crc32(name.encode("utf-8"))


def stream(seed: int, experiment: str, *params: int) -> np.random.Generator:
    """An independent Generator for (seed, experiment, params).

    Two calls with the same arguments give the same draws; different
    experiments or parameters give statistically independent streams.
    The bit generator is SFC64 rather than default_rng's PCG64: NumPy's fastest
    (about a fifth less time per normal here, and drawing normals is most of
    the pipeline's work), with the same SeedSequence seeding and spawning.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    key = (experiment_key(experiment),) + tuple(int(p) for p in params)
    if any(k < 0 for k in key):
        raise ValueError(f"stream parameters must be non-negative integers, got {params!r}")
    return np.random.Generator(np.random.SFC64(np.random.SeedSequence(int(seed), spawn_key=key)))


def lesson_legacy_stream() -> np.random.RandomState:
    """The lesson's `np.random.seed(42)` global stream, as a private RandomState."""
    return np.random.RandomState(LESSON_SEED)


def lesson_default_rng() -> np.random.Generator:
    """The lesson's `np.random.default_rng(42)`."""
    return np.random.default_rng(LESSON_SEED)


def calibration_seed(seed: int, index: int) -> int:
    """The root seed of run `index` of a calibration study of a config whose root seed is `seed`.

    A 64-bit integer from the SeedSequence keyed by (seed, "calibration", index), as every other
    stream is keyed: runs with different indices are independent of each other and of the
    config's own run, and run `index` is the same whichever other runs are made.
    """
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise ValueError(f"calibration run index must be a non-negative integer, got {index!r}")
    sequence = np.random.SeedSequence(int(seed), spawn_key=(experiment_key("calibration"), int(index)))
    return int(sequence.generate_state(1, dtype=np.uint64)[0])
