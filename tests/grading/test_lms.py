"""From the LMS's download to the LMS's import: the roster, the files matched to it, safe zips, overrides, the
import in the roster's own format, and the overview that puts those who need help first."""

from __future__ import annotations

import csv
import io
import tempfile
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdpa_lab.grading.archive import MAX_ARCHIVE_BYTES, MAX_MEMBER_BYTES, ArchiveError, extract_member, graded_member
from sdpa_lab.grading.classroom import learner_ids
from sdpa_lab.grading.gradebook import feedback_page, gradebook_job
from sdpa_lab.grading.lms import IntakeError, class_intake, intake
from sdpa_lab.grading.overrides import OverridesError, read_overrides
from sdpa_lab.grading.points import RUBRIC, score
from sdpa_lab.grading.roster import RosterError, assignment_points, read_roster

from tests.grading.lms_classes import CODE, canvas_class, moodle_class, zip_bytes
from tests.grading.test_gradebook import _part, _record, _write

# -- the roster ------------------------------------------------------------------------------

def test_each_roster_format_is_recognised_from_its_header(tmp_path):
    _, canvas = canvas_class(tmp_path)
    _, moodle = moodle_class(tmp_path)
    plain = tmp_path / "plain.csv"
    plain.write_text("id,name\nana,Ana Ruiz\nbo,Bo Lind\n")
    c = read_roster(canvas, "Attention lab")
    assert (c.format, [x.id for x in c.learners], c.grade_column) == (
        "canvas", ["5101", "5102", "5103", "5104"], "Attention lab (7001)")
    assert c.learners[0].name == "Okafor, Chidi" and c.points_row["Attention lab (7001)"] == "10.00"
    m = read_roster(moodle)  # with Moodle's byte-order mark
    assert (m.format, [x.id for x in m.learners], m.learners[2].name) == ("moodle", ["301", "302", "303", "304"],
                                                                         "Chen Wei")
    p = read_roster(plain)
    assert (p.format, [x.id for x in p.learners]) == ("plain", ["ana", "bo"])


@pytest.mark.parametrize("text, says", [
    ("learner,score\nana,3\n", "none of a Canvas gradebook export"),
    ("", "none of"),
    ("Student,ID,Section\nA,1,x\n", "none of"),  # Canvas's columns, but not its five identity columns
    ("id,name\nAna,A\nana,B\n", "two learners have the id 'ana'"),  # one page on a case-insensitive disk
    ("id,name\n../x,A\n", "an id is ASCII letters"),
    ("Identifier,Full name,Status,Grade,Maximum Grade\nStudent 9 x,A,,,10\n", "is not 'Participant N'"),
])
def test_a_file_that_is_no_roster_is_refused_in_one_line(tmp_path, text, says):
    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(RosterError, match=says) as info:
        read_roster(path)
    assert "\n" not in str(info.value) and str(info.value).startswith("roster ")


def test_a_canvas_export_with_several_assignments_needs_grading_assignment(tmp_path):
    _, canvas = canvas_class(tmp_path)
    with pytest.raises(RosterError, match=r"^grading_assignment: .* has 2 assignment columns"):
        read_roster(canvas)
    assert read_roster(canvas, "Quiz 1 (7002)").grade_column == "Quiz 1 (7002)"
    assert read_roster(canvas, "Project").grade_column == "Project"  # Canvas makes a new assignment of it


@pytest.mark.parametrize("written, worth", [("10.00", 10.0), ("10,00", 10.0), ("1,000.00", 1000.0), ("", None)])
def test_the_points_an_lms_gives_an_assignment_are_read_as_it_writes_them(tmp_path, written, worth):
    path = tmp_path / "w.csv"
    path.write_text(f'Identifier,Full name,Status,Grade,Maximum Grade\nParticipant 1,A,,,"{written}"\n')
    assert assignment_points(read_roster(path)) == worth


def test_an_assignment_worth_other_points_than_the_rubric_is_refused_before_any_job(tmp_path):
    subs, canvas = canvas_class(tmp_path)
    with pytest.raises(RosterError, match="rubric totals 12 points.*worth 10"):
        class_intake(subs, canvas, "Attention lab", {**RUBRIC, "softmax": 4.0})
    assert class_intake(subs, canvas, "Attention lab", RUBRIC).graded


# -- the files ------------------------------------------------------------------------------

def _by_file(found):
    return {f["file"]: f for f in found.files}


def test_canvas_files_are_matched_by_user_id_latest_graded_and_nothing_dropped(tmp_path):
    subs, canvas = canvas_class(tmp_path)
    found = intake(subs, read_roster(canvas, "Attention lab"))
    assert {k: v.name for k, v in found.graded.items()} == {
        "5101": "okaforchidi_5101_88017_attention.ipynb", "5102": "novakpetra_late_5102_88005_lab.zip"}
    files = _by_file(found)
    assert len(files) == len(list(subs.iterdir()))  # every file has a row
    assert files["okaforchidi_5101_88001_attention.py"]["why"].startswith("an earlier file: okaforchidi_5101_88017")
    assert ".ipynb.txt" in files["tanakaren_5103_88009_attention.ipynb.txt"]["why"]
    stranger = files["strangerx_5999_88011_attention.py"]
    assert stranger["learner"] == "" and "5999 is not in the roster" in stranger["why"]
    assert found.missing == ["5104"]


def test_moodle_folders_are_matched_by_participant_id(tmp_path):
    subs, moodle = moodle_class(tmp_path)
    found = intake(subs, read_roster(moodle))
    assert {k: v.name for k, v in found.graded.items()} == {"301": "attention_fixed.py", "302": "work.zip"}
    files = _by_file(found)
    assert files["Aiko Mori_301_assignsubmission_file_/attention.ipynb"]["why"].startswith("an earlier file")
    assert "onlinetext" in files["Chen Wei_303_assignsubmission_onlinetext_/onlinetext.html"]["why"]
    assert "participant 399 is not in the roster" in files["Dara Q_399_assignsubmission_file_/x.py"]["why"]
    assert found.missing == ["304"]


def test_a_folder_with_nothing_gradable_for_the_roster_is_refused(tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "someone_1_2_a.py").write_text(CODE)
    roster = tmp_path / "r.csv"
    roster.write_text("id,name\nana,Ana\n")
    with pytest.raises(IntakeError, match="no file in .* can be graded"):
        class_intake(tmp_path / "subs", roster, None, RUBRIC)


def test_two_files_whose_names_differ_by_case_get_ids_that_differ_by_more_than_case():
    ids = learner_ids(["hw2_maria_lopez.ipynb", "HW2_Maria_Lopez.ipynb", "ana.py"])
    assert ids["ana.py"] == "ana"
    assert len({i.casefold() for i in ids.values()}) == 3


# -- zips -----------------------------------------------------------------------------------

def _zip(tmp_path, entries, name="a.zip") -> Path:
    path = tmp_path / name
    path.write_bytes(zip_bytes(entries))
    return path


def test_a_zip_gives_its_one_notebook_and_ignores_what_archivers_add(tmp_path):
    path = _zip(tmp_path, {"hw/solution.py": CODE.encode(), "__MACOSX/hw/._solution.py": b"x",
                           ".ipynb_checkpoints/solution-checkpoint.py": b"y", "hw/.hidden.py": b"z"})
    assert graded_member(path) == "hw/solution.py"
    out = extract_member(path, "hw/solution.py", tmp_path / "")
    assert out == tmp_path / "submission.py" and out.read_text() == CODE


@pytest.mark.parametrize("entries, says", [
    ({"a.py": b"1", "b.ipynb": b"2"}, "holds 2 .py or .ipynb files: a.py, b.ipynb"),
    ({"readme.txt": b"1"}, "holds 0 .py or .ipynb"),
    ({"../../evil.py": b"1"}, "points outside the zip"),
    ({"/etc/evil.py": b"1"}, "points outside the zip"),
])
def test_a_zip_without_exactly_one_safe_notebook_is_named_with_its_reason(tmp_path, entries, says):
    with pytest.raises(ArchiveError, match=says):
        graded_member(_zip(tmp_path, entries))


def test_a_zip_bomb_stops_at_the_members_limit_and_a_non_zip_is_refused(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.py", b"#" * (MAX_MEMBER_BYTES + 10))  # compresses to about 20 KiB
    assert path.stat().st_size < 100_000
    with pytest.raises(ArchiveError, match="decompresses to more than"):
        extract_member(path, graded_member(path), tmp_path)
    (tmp_path / "not.zip").write_text("hello")
    with pytest.raises(ArchiveError, match="not a readable zip"):
        graded_member(tmp_path / "not.zip")


def test_a_zip_too_large_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.zip"
    with path.open("wb") as f:
        f.truncate(MAX_ARCHIVE_BYTES + 1)  # sparse: nothing of it is on the disk
    with pytest.raises(ArchiveError, match="^the zip is more than 50 MiB$"):
        graded_member(path)


def test_a_zip_that_is_a_link_is_not_read(tmp_path):
    target = _zip(tmp_path, {"a.py": b"1"})
    (tmp_path / "link.zip").symlink_to(target)
    with pytest.raises(ArchiveError, match="symbolic link"):
        graded_member(tmp_path / "link.zip")


# -- overrides ------------------------------------------------------------------------------

def test_overrides_are_read_and_a_bad_reference_is_refused_in_one_line(tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("learner,part,points,comment\n5101,exercise_2,1.5,explained it in office hours\n")
    got = read_overrides(path, ["5101", "5102"], RUBRIC)
    assert got == {"5101": {"exercise_2": {"points": 1.5, "comment": "explained it in office hours"}}}
    for body, says in [("9999,softmax,1,\n", "learner '9999' is not in the class"),
                       ("5101,softmx,1,\n", "part 'softmx' is none of"),
                       ("5101,softmax,3,\n", "outside 0 to 2"),
                       ("5101,softmax,two,\n", "'two' is not a number"),
                       ("5101,softmax,1,\n5101,softmax,2,\n", "overridden twice")]:
        path.write_text("learner,part,points,comment\n" + body)
        with pytest.raises(OverridesError, match=says) as info:
            read_overrides(path, ["5101", "5102"], RUBRIC)
        assert "\n" not in str(info.value) and "grading_overrides" in str(info.value)
    path.write_text("who,what\n")
    with pytest.raises(OverridesError, match="header must be learner, part, points, comment"):
        read_overrides(path, ["5101"], RUBRIC)


def test_an_override_replaces_that_parts_points_and_nothing_else():
    record = _record("x", [_part(n, n != "exercise_2") for n in RUBRIC])
    before = score(record, RUBRIC)
    after = score({**record, "overrides": {"exercise_2": {"points": 1.5, "comment": ""}}}, RUBRIC)
    assert after["parts"] == {**before["parts"], "exercise_2": 1.5}
    assert after["total"] == round(sum(after["parts"].values()), 2) == before["total"] + 1.5


# -- the job: import, overview, pages ----------------------------------------------------------

def _graded_class(tmp_path, subs, roster, assignment, overrides_text="", all_pass=False):
    """The gradebook job on the class's intake, each graded learner given a record of its own (no sandbox): every
    other learner passing only softmax, unless `all_pass`."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    found = intake(subs, read_roster(roster, assignment))
    parts = {0: [_part(n, True) for n in RUBRIC], 1: [_part(n, all_pass or n == "softmax") for n in RUBRIC]}
    records = [_record(learner, parts[i % 2], exit_status=0 if i % 2 == 0 else 1)
               for i, learner in enumerate(found.graded)]
    overrides = None
    if overrides_text:
        overrides = tmp_path / "overrides.csv"
        overrides.write_text("learner,part,points,comment\n" + overrides_text)
    out = {k: tmp_path / "out" / v for k, v in {"csv": "gradebook.csv", "scores": "scores.csv",
                                                 "import": "lms_import.csv", "overview": "class.html"}.items()}
    lms = {"roster": str(roster), "assignment": assignment, "overrides": overrides and str(overrides),
           "intake": found.as_params(), "import_out": str(out["import"])}
    gradebook_job(_write(records, tmp_path / "grades"), str(out["csv"]), str(tmp_path / "out" / "class"),
                  lms_out=str(out["scores"]), overview_out=str(out["overview"]), lms=lms)
    return out, found


def test_the_canvas_import_has_the_identity_columns_points_possible_and_a_row_per_roster_learner(tmp_path):
    subs, roster = canvas_class(tmp_path)
    out, found = _graded_class(tmp_path, subs, roster, "Attention lab", "5104,softmax,1,handed in by e-mail\n")
    frame = pd.read_csv(out["import"], dtype={"ID": str})
    assert list(frame.columns) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention lab (7001)"]
    assert frame["Student"][0].strip() == "Points Possible" and frame["Attention lab (7001)"][0] == 10
    learners = frame.iloc[1:].set_index("ID")
    assert list(learners.index) == ["5101", "5102", "5103", "5104"]  # the roster's order, everyone
    gradebook = pd.read_csv(out["csv"], dtype={"learner": str})
    totals = gradebook[gradebook["part"] == "total"].set_index("learner")["points"]
    for learner in found.graded:
        assert learners.loc[learner, "Attention lab (7001)"] == totals[learner]
    assert learners.loc["5103", "Attention lab (7001)"] == 0  # only an .ipynb.txt
    assert learners.loc["5104", "Attention lab (7001)"] == 1  # nothing handed in, a part given by hand
    assert learners.loc["5101", "SIS Login ID"] == "chidi.o" and learners.loc["5102", "Student"] == "Novak, Petra"


def test_the_moodle_import_is_the_worksheet_with_grade_filled_in(tmp_path):
    subs, roster = moodle_class(tmp_path)
    out, found = _graded_class(tmp_path, subs, roster, None)
    text = out["import"].read_text(encoding="utf-8")
    header = next(csv.reader(io.StringIO(text)))
    assert header == next(csv.reader(io.StringIO(roster.read_text(encoding="utf-8-sig"))))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["Identifier"] for r in rows] == ["Participant 301", "Participant 302", "Participant 303",
                                               "Participant 304"]
    assert [float(r["Grade"]) for r in rows] == [10.0, 2.0, 0.0, 0.0]
    assert {r["Last modified (grade)"] for r in rows} == {"-"}  # Moodle's "never", kept as it wrote it
    assert rows[0]["Last modified (submission)"] == "Monday, 1 December 2026, 9:12 AM"


def test_an_override_reaches_the_gradebook_the_import_and_the_page_and_survives_a_new_grade(tmp_path):
    subs, roster = canvas_class(tmp_path)
    out, _ = _graded_class(tmp_path, subs, roster, "Attention lab",
                           '5102,exercise_3,1.25,"the argsort is right, the printout was cut"\n')
    gradebook = pd.read_csv(out["csv"], dtype={"learner": str})
    row = gradebook[(gradebook["learner"] == "5102") & (gradebook["part"] == "exercise_3")].iloc[0]
    assert row["points"] == 1.25 and row["detail"] == "points set by the instructor: the argsort is right, the " \
        "printout was cut"
    page = (tmp_path / "out" / "class" / "5102.html").read_text()
    assert "Your instructor" in page and "the argsort is right, the printout was cut" in page
    assert "Novak, Petra" in page
    imported = pd.read_csv(out["import"], dtype={"ID": str}).set_index("ID")
    assert imported.loc["5102", "Attention lab (7001)"] == 2 + 1.25
    # a regrade writes a new record (now every part passes): the override lives in its own file and still decides
    out2, _ = _graded_class(tmp_path / "again", subs, roster, "Attention lab",
                            '5102,exercise_3,1.25,"the argsort is right, the printout was cut"\n', all_pass=True)
    assert pd.read_csv(out2["import"], dtype={"ID": str}).set_index("ID").loc["5102", "Attention lab (7001)"] == 9.25


def test_the_overview_puts_those_who_need_help_first_names_beside_ids_and_names_every_file_not_graded(tmp_path):
    subs, roster = canvas_class(tmp_path)
    out, _ = _graded_class(tmp_path, subs, roster, "Attention lab")
    html = out["overview"].read_text()
    table = html[html.index('<table class="checks learners'):html.index("</table>")]
    names = ("Okafor, Chidi", "Novak, Petra", "Tanaka, Ren", "Reyes, Luz")
    # help first, lowest score first (Luz handed in nothing, Ren only a .ipynb.txt: 0 each, by name; Petra 2),
    # then the rest by name
    assert sorted(names, key=table.index) == ["Reyes, Luz", "Tanaka, Ren", "Novak, Petra", "Okafor, Chidi"]
    assert "missing: no submission" in table and "5104" in table and 'href="class/5101.html"' in table
    section = html[html.index('id="not-graded"'):]
    for name in ("strangerx_5999_88011_attention.py", "tanakaren_5103_88009_attention.ipynb.txt",
                 "okaforchidi_5101_88001_attention.py"):
        assert name in section


def test_without_a_roster_the_scores_csv_is_the_same_bytes(tmp_path):
    records = [_record("ann", [_part(n, True) for n in RUBRIC], exit_status=0),
               _record("ben", [_part(n, n == "softmax") for n in RUBRIC])]
    paths = _write(records, tmp_path / "grades")
    gradebook_job(paths, str(tmp_path / "a.csv"), str(tmp_path / "pages"), lms_out=str(tmp_path / "s1.csv"))
    expected = ('"Student","ID","SIS User ID","SIS Login ID","Section","sdpa-lab attention total",'
                '"sdpa-lab softmax","sdpa-lab scaled_dot_product_attention","sdpa-lab exercise_1",'
                '"sdpa-lab exercise_2","sdpa-lab exercise_3"\n'
                '"ann","","","ann","",10.0,2.0,2.0,2.0,2.0,2.0\n'
                '"ben","","","ben","",2.0,2.0,0.0,0.0,0.0,0.0\n')
    assert (tmp_path / "s1.csv").read_text() == expected


def test_a_plain_roster_matches_files_named_by_the_id(tmp_path):
    subs = tmp_path / "subs"
    (subs / "deep" / "er" / "still" / "deeper").mkdir(parents=True)
    (subs / "ana.py").write_text(CODE)
    (subs / "bo_v2.ipynb").write_text("{}")
    (subs / "cy.ipynb.txt").write_text("{}")
    (subs / "notes.pdf").write_text("%PDF")
    roster = tmp_path / "r.csv"
    roster.write_text("id,name,email\nana,Ana Ruiz,a@x\nbo,Bo Lind,b@x\ncy,Cy Ng,c@x\ndee,Dee Ko,d@x\n")
    found = intake(subs, read_roster(roster))
    assert {k: v.name for k, v in found.graded.items()} == {"ana": "ana.py", "bo": "bo_v2.ipynb"}
    files = _by_file(found)
    assert files["cy.ipynb.txt"]["learner"] == "cy" and ".ipynb.txt" in files["cy.ipynb.txt"]["why"]
    assert files["notes.pdf"]["learner"] == "" and files["deep/er/still/deeper"]["why"]  # listed, never dropped
    assert found.missing == ["dee"]


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.sampled_from(["5101", "5102", "5103", "5104", "5999"]),
                       st.sets(st.integers(1, 10**6), min_size=1, max_size=3), max_size=5))
def test_every_canvas_file_has_a_row_and_each_learner_gets_their_largest_file_id_graded(uploads):
    with tempfile.TemporaryDirectory() as folder:
        subs, roster = canvas_class(Path(folder))
        for p in subs.iterdir():
            p.unlink()
        for user, file_ids in uploads.items():
            for file_id in file_ids:
                (subs / f"someone_{user}_{file_id}_attention.py").write_text(CODE)
        found = intake(subs, read_roster(roster, "Attention lab"))
        assert sorted(f["file"] for f in found.files) == sorted(p.name for p in subs.iterdir())
        on_roster = {u: ids for u, ids in uploads.items() if u != "5999"}
        assert {u: p.name for u, p in found.graded.items()} == {
            u: f"someone_{u}_{max(ids)}_attention.py" for u, ids in on_roster.items()}
        assert found.missing == [u for u in ("5101", "5102", "5103", "5104") if u not in uploads]


def test_a_learners_page_names_the_zips_graded_entry_and_a_command_for_the_file_they_hold():
    record = _record("5102", [_part(n, True) for n in RUBRIC], exit_status=0)
    page = feedback_page({**record, "file": "novak_5102_88005_lab.zip", "member": "lab/attention.py"})
    assert "(graded: <code>lab/attention.py</code>)" in page and "sdpa-lab grade attention.py --seed 5" in page
    page = feedback_page({**record, "file": "Petra Novak_5102_assignsubmission_file_/my lab.py"})
    assert "sdpa-lab grade &#39;my lab.py&#39; --seed 5" in page  # the folder is Moodle's, the quotes the shell's
