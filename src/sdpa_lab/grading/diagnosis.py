"""The diagnosis of a failing function: the mistakes its measured outputs show, each with its fix."""

from __future__ import annotations

from collections.abc import Sequence

from sdpa_lab.grading import mistakes as M
from sdpa_lab.grading import scale as S


def _mistake_line(key: str) -> str:
    m = M.MISTAKES[key]
    return f"mistake: {m.title}: {m.does}. Fix: {m.fix}. Reread {m.reread}."


def name_mistakes(part, variants: Sequence, probes, outcomes, reread: str = f'"{M.CANONICAL_FORWARD}"',
                  reading: S.Reading | None = None) -> None:
    """Name the mistakes that reproduce the learner's outputs, once some check of `part` failed.

    reading: the forward's scale, measured (sdpa_lab.grading.scale); it is described first, and named
    even where no variant of the lesson's code reproduces the rest of the outputs.
    """
    if part.passed:
        return
    part.diagnosis += S.describe(reading) if reading is not None else []
    d = M.diagnose(variants, [(args, kwargs) for _, args, kwargs in probes], outcomes)
    if d.variant is None:
        own = reading.mistakes() if reading is not None else []
        if own:
            part.mistakes = own
            part.diagnosis.append(f"no variant of the lesson's code with the mistake{'s' if len(own) > 1 else ''} "
                                  f"below reproduces every output: something else differs too; compare your code "
                                  f"with {reread} line by line")
            part.diagnosis += [_mistake_line(key) for key in own]
            return
        part.diagnosis.append(f"none of the classic mistakes reproduces these outputs: compare your code with "
                              f"{reread} line by line")
        return
    if not d.mistakes:
        return
    part.mistakes = list(d.mistakes)
    formula = f" {d.variant.formula()}," if hasattr(d.variant, "formula") else ""
    part.diagnosis.append(f"measured: on all {len(probes)} probes your outputs equal{formula} the lesson's code "
                          f"with the mistake{'s' if len(d.mistakes) > 1 else ''} below, to rounding "
                          "(and raise where it raises)"
                          + (f"; {d.alternatives} other variant(s) fit as well" if d.alternatives else ""))
    part.diagnosis += [_mistake_line(key) for key in d.mistakes]
