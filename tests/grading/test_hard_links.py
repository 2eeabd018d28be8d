"""A class file that is a hard link (another name of a file that may lie outside the class folder) is refused unread,
as a symbolic link is, and the overview names it and says why."""

from __future__ import annotations

import json
import os

from sdpa_lab.grading import classroom
from sdpa_lab.grading.classroom import submissions
from sdpa_lab.grading.files import digest, read_bytes
from sdpa_lab.grading.grade import UNUSABLE, grade
from sdpa_lab.grading.gradebook import gradebook_job, overview

MARKER = "instructor-only-4b1f: the answer key"


def hard_linked_class(tmp_path):
    """A class folder holding a hard link to a file outside it (standing for an instructor's private file)."""
    outside = tmp_path / "instructor_home" / "key.py"
    outside.parent.mkdir()
    outside.write_text(f"# {MARKER}\ndef softmax(:\n")  # were it read, the syntax error would show its lines
    folder = tmp_path / "class"
    folder.mkdir()
    os.link(outside, folder / "mallory.py")
    return folder, outside


def test_a_hard_link_in_a_class_is_refused_unread_and_named_on_the_overview(tmp_path):
    folder, _ = hard_linked_class(tmp_path)
    record = classroom.grade_submission(submissions(folder)["mallory"], "mallory", seed=3)
    assert record["exit_status"] == UNUSABLE and record["load_status"] == "refused"
    assert "hard link" in record["unusable"] and "not read" in record["unusable"]
    (tmp_path / "mallory.json").write_text(json.dumps(record))
    gradebook_job([str(tmp_path / "mallory.json")], str(tmp_path / "gradebook.csv"), str(tmp_path / "pages"),
                  str(tmp_path / "scores.csv"), str(tmp_path / "class.html"))
    shown = "".join((tmp_path / f).read_text() for f in ("gradebook.csv", "scores.csv", "class.html")) + "".join(
        p.read_text() for p in (tmp_path / "pages").glob("*.html")) + json.dumps(record)
    assert MARKER not in shown and "softmax(:" not in shown
    assert [(u["learner"], "hard link" in u["why"]) for u in overview([record])["unusable"]] == [("mallory", True)]
    assert "hard link" in (tmp_path / "class.html").read_text()


def test_a_hard_link_made_after_the_class_was_listed_is_not_read_either(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "bob.py").write_text("def softmax(x):\n    return x\n")
    listed = submissions(folder)["bob"]
    os.link(listed, tmp_path / "elsewhere.py")  # the file gains a second name between listing and reading
    g = grade(listed, isolation="none", helpers=False, follow_links=False)
    assert g.exit_status == UNUSABLE and g.load.message == "bob.py is a hard link (a file with 2 names): not read"
    assert digest(listed) == ""


def test_a_file_with_one_name_is_read_and_self_grading_reads_the_users_own_hard_link(tmp_path):
    one = tmp_path / "one.py"
    one.write_text("x = 1\n")
    assert read_bytes(one, follow_links=False) == b"x = 1\n" and classroom.refusal(one) == ""
    os.link(one, tmp_path / "two.py")
    assert read_bytes(tmp_path / "two.py") == b"x = 1\n"  # the user's own file, self-graded: read as it is
