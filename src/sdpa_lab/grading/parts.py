"""What a grade is made of, for every part: the inputs one grading draws (`Draw`), a checked statement about
a learner's function (`SolutionCheck`), the verdict on one function or exercise (`Part`), and the helpers
the parts' checks share.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import numpy as np

import sdpa_lab.grading.mistakes as M
from sdpa_lab.grading.runner import Calls, Outcome
from sdpa_lab.seeding import LESSON_SEED, stream

LOST = {"timeout": "hangs", "memory": "runs out of memory", "died": "crashes", "not_written": "not written yet",
        "missing": "missing", "unusable": "unusable",
        "loaded": "could not be graded"}  # lost to the machine's load or memory (machine.py): never a fail


def fresh_seed() -> int:
    """A seed for one grading, from the OS's entropy: a valid np.random.seed, never the lesson's 42."""
    while (seed := secrets.randbelow(2**32)) == LESSON_SEED:
        pass
    return seed


@dataclass(frozen=True)
class Draw:
    """The inputs one grading asks for, chosen at grade time: a fresh seed and sizes derived from it.

    Every exercise is called on the lesson's own values and on these, so an output written into
    the file (a constant, an argsort) fails; the seed is recorded, so the grade can be reproduced.
    """

    seed: int
    n_samples: int | None = None  # Exercise 1's pairs at both calls; None: limits.QUICK_N_SAMPLES

    def _rng(self) -> np.random.Generator:
        return stream(self.seed, "grading-sizes")

    @property
    def exercise_1_d_k(self) -> int:
        """Exercise 1's other d_k: smaller than the lesson's 1024, so it needs no more memory."""
        return int(self._rng().choice([64, 128, 256, 512]))

    @property
    def exercise_2(self) -> tuple[tuple[int, ...], int]:
        """(d_ks, T) of Exercise 2's other call: four increasing d_k and a number of keys."""
        rng = self._rng()
        rng.random(1)
        d_ks = np.sort(rng.choice(np.arange(2, 513), size=4, replace=False))
        return tuple(int(d) for d in d_ks), int(rng.integers(5, 17))

    @property
    def exercise_3(self) -> tuple[int, int]:
        """(d_k, T) of Exercise 3's other call."""
        rng = self._rng()
        rng.random(2)
        return int(rng.integers(16, 1025)), int(rng.integers(5, 17))


@dataclass(frozen=True)
class SolutionCheck:
    """One checked statement about a learner's function's outputs, with what was measured (a claim's decided
    comparison is sdpa_lab.claims.model.Check)."""

    claim: str  # the claim id it is tied to, or ""
    what: str
    passed: bool
    detail: str = ""


@dataclass
class Part:
    """The verdict on one function or exercise of the solutions file."""

    name: str
    signature: str
    checks: list[SolutionCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the verdict rests on, not pass/fail
    lost: Outcome | None = None  # a hang, memory blow-up, crash, or a function not written
    error: str = ""  # the learner's traceback, from the first probe that raised
    diagnosis: list[str] = field(default_factory=list)
    mistakes: list[str] = field(default_factory=list)  # keys of mistakes.MISTAKES, measured

    @property
    def passed(self) -> bool:
        return self.lost is None and all(c.passed for c in self.checks)

    @property
    def verdict(self) -> str:
        if self.lost is not None:
            return LOST[self.lost.status]
        if self.passed:
            return "pass"
        return f"FAIL ({sum(not c.passed for c in self.checks)} of {len(self.checks)} checks)"


def call_probes(call: Calls, probes, part: Part, **helpers) -> list[Outcome] | None:
    """The outcome of each probe (name, args, kwargs), called with `helpers` too (reference_softmax=True: a
    correct softmax in place of the file's); None, with the part's `lost` set, where a call was lost."""
    outcomes = []
    for _, args, kwargs in probes:
        outcomes.append(call(*args, **kwargs, **helpers))
        if call.lost is not None:
            part.lost = call.lost
            return None
    return outcomes


def softmax_note(name: str, failing: list[str], fixed: bool) -> str:
    """What a part graded again with a correct softmax in place of the file's says: the checks the file's softmax
    failed it on, and whether it is then right (it loses nothing for the softmax) or fails on its own."""
    return (f"with your softmax, {len(failing)} check(s) fail ({'; '.join(failing)}); graded here with a correct "
            "softmax in its place, " + (f"every check passes: your {name} is right, fix softmax (above); it loses "
                                        "nothing for it" if fixed else "so only this function's own mistakes count"))


def shape_text(a) -> str:
    """An array's shape as a learner reads it: (3, 7)."""
    return "(" + ", ".join(str(n) for n in a.shape) + ")"


def first_error(part: Part, names, outcomes) -> None:
    """The part's error: the learner's traceback from the first probe (named) that raised."""
    for name, o in zip(names, outcomes, strict=True):
        if o.status == "error":
            part.error = f"on {name}:\n{o.message}"
            return


def from_failures(claim: str, what: str, failures: list[str], measured: str = "") -> SolutionCheck:
    """A check that passes when there is no failure; the detail is the first failure, or what was measured."""
    detail = failures[0] + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else "") if failures else measured
    return SolutionCheck(claim, what, not failures, detail)


def why_unusable(name: str, o: Outcome, n_items: int | None) -> str | None:
    """Why an outcome has no usable arrays (raised, or returned the wrong number of things), or None."""
    if o.status == "error":
        return f"raised an error on {name}"
    if n_items is None and o.sequence:
        return f"returned a {len(o.values)}-item sequence on {name}, not one array"
    if n_items is not None and (not o.sequence or len(o.values) != n_items):
        return f"returned {len(o.values) if o.sequence else 'one'} item(s) on {name}, not {n_items}"
    return None


def dtype_note(part: Part, dtypes: list[str], lesson: list[str] | None = None) -> None:
    """A note, never a fail, when float32 inputs come back in another dtype than float32 and than the lesson's own
    code returns (`lesson`: its forward's `/ np.sqrt(d_k)` returns float64, so a forward that does the same is
    not told about it): the lesson never claims the dtype is kept."""
    if dtypes and any(d != "float32" for d in dtypes) and dtypes != lesson:
        m = M.NOT_CLAIMED["upcast"]
        part.notes.append(f"{m.title} ({', '.join(dtypes)}): {m.does}. {m.fix[0].upper() + m.fix[1:]}.")


def floats(o: Outcome) -> np.ndarray:
    """Everything a function returned, as one flat float64 array (nan if it is not numbers)."""
    try:
        return np.concatenate([np.ravel(v) for v in o.values]).astype(np.float64) if o.values else np.array([])
    except (TypeError, ValueError):
        return np.array([np.nan])


def same_values(a: np.ndarray, b, tol: float) -> bool:
    """Whether `a` has `b`'s shape and values, within `tol` (relative to max(1, |b|): mistakes.max_difference)."""
    return a.shape == np.shape(b) and M.max_difference(a, np.asarray(b, dtype=np.float64)) <= tol


def stopped(part: Part, call: Calls, o, claim: str, returns: str) -> bool:
    """Whether an exercise's grade ends at its call: the call was lost (time or memory) or raised an error."""
    if call.lost is not None:
        part.lost = call.lost
        return True
    if o.status == "error":
        part.error = o.message
        part.checks.append(SolutionCheck(claim, returns, False, "raised an error"))
        return True
    return False


def on(label: str, what: str) -> str:
    """A check's statement on one call of an exercise: "the lesson's seed 42, ...: returns ..."."""
    return f"{label}: {what}"
