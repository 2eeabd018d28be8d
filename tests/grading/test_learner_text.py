"""What a learner controls reaches the instructor escaped and capped: no terminal escape from a file name, a syntax
error's line or an exception's message, in the terminal, the CSVs, the records or the pages; no reply, message or
array past a few kB; the grader's own memory bounded whatever the learner returns.

The files are written here; the class-side tests grade in the sandbox, as a class does.
"""

from __future__ import annotations

import json
import textwrap
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.cli import main
from sdpa_lab.grading import classroom, sandbox
from sdpa_lab.grading.grade import FAIL, UNUSABLE, format_grade, grade
from sdpa_lab.grading.gradebook import gradebook_job
from sdpa_lab.grading.learner_text import MAX_TEXT, shown
from sdpa_lab.grading.runner import LearnerProcess

REPO = Path(__file__).resolve().parents[2]
CORRECT = (REPO / "examples" / "solutions" / "correct.py").read_text()
needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
NASTY = "\x1b]0;owned\x07\x1b[2J\x1b[31m\r\x08\x7f\x9b\u202e\u2028\x00"  # title, clear, colour, CR, BS, DEL, CSI, RLO


def unsafe(text: str) -> list[str]:
    """The characters of `text` a terminal or a reader could be fooled by (anything not printable but newlines)."""
    return sorted({c for c in text if not c.isprintable() and c not in "\n\t"})


# -- the helper ----------------------------------------------------------------------

@given(st.text(), st.integers(10, 5000), st.booleans())
def test_shown_text_has_nothing_unprintable_and_a_bounded_length(text, limit, one_line):
    out = shown(text, limit, one_line)
    assert unsafe(out) == [] and not (one_line and "\n" in out)
    assert len(out) <= 10 * limit + 60  # an escape is at most 10 characters (\U0010ffff), the cut's marker 60
    if len(text) > limit:
        assert f"[... {len(text) - limit:,} characters cut ...]" in out
    elif all(c.isprintable() or (c in "\n\t" and not one_line) for c in text):
        assert out == text  # plain text is left as it is


def test_every_kind_of_escape_is_written_out_visibly():
    assert shown(NASTY, one_line=True) == \
        r"\x1b]0;owned\x07\x1b[2J\x1b[31m\r\x08\x7f\x9b\u202e\u2028\x00"


# -- the terminal: `sdpa-lab grade` ------------------------------------------------------

def test_a_syntax_errors_line_and_the_file_name_reach_the_terminal_escaped(tmp_path, capsys):
    path = tmp_path / f"sneaky{NASTY[:12]}.py"
    path.write_text(f"def softmax(x):\n    return x +  # {NASTY}\n")
    main(["grade", str(path), "--isolation", "none", "--n-samples", "2000"])
    out = capsys.readouterr().out
    assert unsafe(out) == [] and r"\x1b]0;owned\x07" in out and "SyntaxError" in out


def test_an_exceptions_message_reaches_the_terminal_escaped_and_cut(tmp_path, capsys):
    path = tmp_path / "loud.py"
    path.write_text(CORRECT + textwrap.dedent(f"""\

        def exercise_3(seed=42, d_k=256, T=8):
            raise RuntimeError({NASTY!r} * 200_000)
        """))
    assert main(["grade", str(path), "--isolation", "none", "--n-samples", "2000"]) == FAIL
    out = capsys.readouterr().out
    assert unsafe(out) == [] and "characters cut" in out and r"\x1b[2J" in out
    assert len(out) < 40_000


# -- a class: records, CSVs, pages ------------------------------------------------------

@needs_sandbox
def test_a_class_shows_an_escaping_name_and_message_escaped_everywhere(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    path = folder / f"eve{NASTY[:10]}.py"
    path.write_text(CORRECT + textwrap.dedent(f"""\

        def exercise_3(seed=42, d_k=256, T=8):
            raise ValueError({NASTY!r} * 1_000_000)  # 14 MB of escapes
        """))
    [(learner, found)] = classroom.submissions(folder).items()
    record = classroom.grade_submission(found, learner, seed=5, time_limit=60, memory_mib=512, n_samples=2000)
    assert record["parts"] and not record["parts"][4]["passed"]
    out = tmp_path / "out"
    out.mkdir()
    (out / "eve.json").write_text(json.dumps(record))
    gradebook_job([str(out / "eve.json")], str(out / "gradebook.csv"), str(out / "pages"), str(out / "scores.csv"),
                  str(out / "class.html"))
    for written in [*out.glob("*.csv"), out / "class.html", *(out / "pages").glob("*.html")]:
        text = written.read_text()
        assert unsafe(text) == [], written.name
    assert r"eve\x1b]0;owned\x07" in record["file"] and r"\x1b[2J" in record["parts"][4]["error"]
    # what the class writes for this learner stays small: the learner's 14 MB reach no file
    assert sum(p.stat().st_size for p in [out / "eve.json", *(out / "pages").glob("*.html")]) < 500_000


# -- caps on what comes back ---------------------------------------------------------------

FORGER = textwrap.dedent("""\
    def exercise_3(seed=42, d_k=256, T=8):
        import json, os
        text = "\\x1b[2J" + "x" * 50_000
        line = json.dumps({"id": %d, "status": "error", "traceback": text, "kwargs": [], "nbytes": 0})
        os.write(4, (line + "\\n").encode())
        os._exit(0)
    """)


@needs_sandbox
def test_a_forged_reply_of_a_huge_message_is_cut_where_it_is_read():
    box = sandbox.Sandbox(512)
    try:
        with LearnerProcess("forger.py", FORGER % 1, 60, 512, box) as process:
            assert process.start().status == "ready"
            outcome = process.call("exercise_3")
    finally:
        box.close()
    assert outcome.status == "error" and unsafe(outcome.message) == []
    assert "characters cut" in outcome.message and len(outcome.message) <= 2 * MAX_TEXT


HUGE = textwrap.dedent("""\

    def exercise_3(seed=42, d_k=256, T=8):
        import numpy as np
        return np.zeros((2,) * %d, dtype=np.int8), np.ones((2,) * %d, dtype=np.int8)
    """)


@needs_sandbox
@pytest.mark.parametrize("ndim", [18, 23], ids=["under the cap on arrays", "far over it"])
def test_a_huge_returned_array_is_refused_or_described_and_the_graders_memory_stays_small(tmp_path, ndim):
    path = tmp_path / "huge.py"
    path.write_text(CORRECT + HUGE % (ndim, ndim))
    tracemalloc.start()
    try:
        g = grade(path, isolation="sandbox", helpers=False, time_limit=60, memory_mib=512, n_samples=2000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    text = format_grade(g)
    assert g.exit_status in (FAIL, UNUSABLE) and not g.parts[4].passed
    assert len(text) < 20_000 and peak < 64 * 2**20  # the grader holds a few arrays of 256 KiB at most
    if ndim == 18:
        assert "an array of shape (2, 2, 2" in text
    else:
        assert "KiB of numbers the grader reads" in text


def test_a_forged_replys_id_and_field_names_reach_the_message_escaped():
    import io

    import numpy as np

    from sdpa_lab.grading.replies import Forged, check_call_reply

    with pytest.raises(Forged) as caught:
        check_call_reply({"id": NASTY, "status": "ok"}, b"", 1, {})
    assert unsafe(str(caught.value)) == [] and r"\x1b]0;" in str(caught.value)
    buffer = io.BytesIO()
    np.savez(buffer, item0=np.zeros(2, dtype=[(NASTY[:9] * 50, "f8")]))  # a structured array: a field named in escapes
    with pytest.raises(Forged) as caught:
        check_call_reply({"id": 1, "status": "ok", "n": 1, "sequence": False}, buffer.getvalue(), 1, {})
    assert unsafe(str(caught.value)) == [] and "not numbers" in str(caught.value) and len(str(caught.value)) < 1000
