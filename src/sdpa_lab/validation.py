"""Argument checks shared by the experiment functions, and the memory bounds of one draw.

Each `*_rows` function checks its arguments first, so a direct call with a bad
argument fails with a ValueError naming it, not with a NumPy traceback from deep
inside a draw. The checks ask only what the computation needs (integers, sizes
of at least one, a variance needs two samples, NumPy seeds are non-negative);
what makes a sweep meaningful (n_pairs >= 1000, distinct d_k, the seed's upper
bound, ...) is the config schema's (src/sdpa_lab/config.schema.yaml), checked
once before any job. The memory bounds below involve several settings at once,
which the schema cannot say: sdpa_lab.config applies them to the config.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

# No NumPy import here: the config checks (sdpa_lab.config) run when the Snakefile is
# parsed, on every snakemake call, and NumPy registers its integers as numbers.Integral.

# The largest forward B9 runs: its (B, T, T) weights and (B, T, d_k) arrays hold at most this many
# floats each (64 MiB in float64), so the job stays in bounded memory.
MAX_FORWARD_ELEMENTS = 1 << 23


def trial_size_problem(T: int, d_k: int) -> str | None:
    """Why one trial's T keys of length d_k are too many to draw in bounded memory, or None."""
    if T * d_k <= MAX_FORWARD_ELEMENTS:
        return None
    return (f"one trial's keys (T x d_k = {T} x {d_k}) would hold {T * d_k:,} floats; at most "
            f"{MAX_FORWARD_ELEMENTS:,} (64 MiB in float64) keep the job in bounded memory")


def forward_size_problem(shape: Sequence[int]) -> str | None:
    """Why a forward of (B, T, d_k) = `shape` is too large to run in bounded memory, or None."""
    B, T, d_k = shape
    largest = max(B * T * T, B * T * d_k)
    if largest <= MAX_FORWARD_ELEMENTS:
        return None
    return (f"its largest array would hold {largest:,} floats (B*T*T = {B * T * T:,}, B*T*d_k = {B * T * d_k:,}); "
            f"at most {MAX_FORWARD_ELEMENTS:,} (64 MiB in float64) keep the job in bounded memory")


def other_dimensions(T: int, d_k: int) -> tuple[int, int, int]:
    """(T_q, T_k, d_v) of B9's forward beside the lesson's shape (B, T, d_k): T_q, T_k, d_k and d_v all different
    from one another, so that each scale a forward could take by mistake (1/sqrt of T_q, T_k or d_v) differs from
    1/sqrt(d_k), and Q's axes from K's. T_q = T, or T + 1 where T = d_k; T_k = T_q - 1 (from T_q = 3, where a softmax
    still has two keys) or the next above; d_v about a half of d_k, so 1/sqrt(d_v) is near sqrt(2) times
    1/sqrt(d_k). Its arrays are about the lesson-shaped forward's, except K (B, T_k, d_k) at T <= 3, at most three
    times its Q: the forward's memory and cost (workflow_support.cost) count it."""
    T_q = T + 1 if T == d_k else T
    T_k = next(t for t in (T_q - 1, T_q + 1, T_q + 2) if t >= 2 and t != d_k)
    half = max(d_k // 2, 1)
    d_v = next(d for d in (half, half + 1, half + 2, d_k + 1, d_k + 2, d_k + 3) if d not in (d_k, T_q, T_k))
    return T_q, T_k, d_v


def _is_sequence(value: Any) -> bool:
    """A list, tuple or NumPy array (not a string)."""
    import numpy as np  # only experiment code passes arrays, and it has NumPy loaded already

    return isinstance(value, (Sequence, np.ndarray))


def is_int(value: Any) -> bool:
    """Whether `value` is an integer (Python or NumPy), excluding booleans and floats like 2.0."""
    return isinstance(value, Integral) and not isinstance(value, bool)  # NumPy's bool_ is not Integral


def check_int(value: Any, name: str, minimum: int = 1, maximum: int | None = None) -> int:
    """`value` as an int if it is an integer in [minimum, maximum]; else ValueError naming `name`."""
    if not is_int(value):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < minimum or (maximum is not None and value > maximum):
        allowed = f">= {minimum}" if maximum is None else f"between {minimum} and {maximum}"
        raise ValueError(f"{name} must be an integer {allowed}, got {value!r}")
    return int(value)


def check_seed(seed: Any, name: str = "seed") -> int:
    """`seed` as an int if it is a non-negative integer (NumPy's SeedSequence refuses others); else ValueError."""
    return check_int(seed, name, minimum=0)


def check_int_list(values: Any, name: str, minimum: int = 1) -> list[int]:
    """A non-empty sequence of integers >= minimum as a list; else ValueError."""
    if isinstance(values, (str, bytes)) or not _is_sequence(values):
        raise ValueError(f"{name} must be a list of integers, got {values!r}")
    if len(values) == 0:
        raise ValueError(f"{name} must not be empty")
    return [check_int(v, f"{name}[{i}]", minimum) for i, v in enumerate(values)]


def check_shapes(shapes: Any, name: str = "shapes", ndim: int = 3) -> list[tuple[int, ...]]:
    """A non-empty sequence of `ndim`-tuples of positive integers; else ValueError naming the entry."""
    if isinstance(shapes, (str, bytes)) or not _is_sequence(shapes):
        raise ValueError(f"{name} must be a list of {ndim}-element shapes, got {shapes!r}")
    if len(shapes) == 0:
        raise ValueError(f"{name} must not be empty")
    out = []
    for i, shape in enumerate(shapes):
        if isinstance(shape, (str, bytes)) or not _is_sequence(shape) or len(shape) != ndim:
            raise ValueError(f"{name}[{i}] must be {ndim} positive integers, got {shape!r}")
        out.append(tuple(check_int(v, f"{name}[{i}][{j}]") for j, v in enumerate(shape)))
    return out
