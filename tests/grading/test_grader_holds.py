"""What the grader holds against: a class file that is a link is never read, an odd file name never stops
the class, no reference softmax is within the learner's reach, no frame of theirs reaches the grader but their own
call's answer, and nothing they write goes past a cap.

The sandbox tests grade as a class does (bubblewrap, one memory cgroup), through test_sandbox's `sandboxed`, which
also checks that nothing is left running and no secret is shown.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from sdpa_lab.grading import classroom, sandbox
from sdpa_lab.grading.classroom import SAFE_ID, learner_ids, submissions
from sdpa_lab.grading.grade import FAIL, PASS, UNUSABLE, grade
from sdpa_lab.grading.gradebook import gradebook_job, overview

from tests.grading.test_sandbox import CORRECT, N_SAMPLES, sandboxed, secret_environment, write  # noqa: F401

needs_sandbox = pytest.mark.skipif(sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}")
ODD = ["my file.py", "o'neil.py", 'say "hi".py', "a<b>.py", "new\nline.py", "\u0430nn.py"]  # \u0430: Cyrillic a
MARKER = "instructor-only-7d3e: root:x:0:0"


# -- file names: a safe id for each, none stops the class ---------------------------------

def test_every_odd_name_and_each_file_of_a_duplicate_learner_get_a_safe_unique_id():
    names = ["ann.py", *ODD, "x.py", "x.ipynb", "ok_name-2.v1.py"]
    ids = learner_ids(names)
    assert len(set(ids.values())) == len(names)
    assert all(re.fullmatch(SAFE_ID, i) and i.isascii() for i in ids.values())
    assert ids["ann.py"] == "ann" and ids["ok_name-2.v1.py"] == "ok_name-2.v1"  # a plain name is kept as it is
    assert ids["\u0430nn.py"] != "ann" and ids["\u0430nn.py"].startswith("nn~")  # a look-alike is no one else
    assert ids["x.py"] != ids["x.ipynb"] and all(ids[n].startswith("x~") for n in ("x.py", "x.ipynb"))
    assert ids["my file.py"].startswith("my_file~") and "\n" not in ids["new\nline.py"]
    # stable: the same id whatever the other files (but for a second file of the same learner)
    assert learner_ids(list(reversed(names))) == ids
    assert learner_ids(["my file.py"]) == {"my file.py": ids["my file.py"]}
    long = "a" * 200 + ".py"  # a plain name too long for a path with its suffix: hashed, short
    assert len(learner_ids([long])[long]) < 60


def test_a_plain_name_cannot_take_a_hashed_id():
    hashed = learner_ids(["a b.py"])["a b.py"]
    clash = learner_ids(["a b.py", f"{hashed}.py"])
    assert len(set(clash.values())) == 2  # '~' is no plain id's: that name is hashed in its turn


def test_submissions_of_odd_names_and_duplicates_list_every_file(tmp_path):
    for name in [*ODD, "x.py", "x.ipynb", "ann.py"]:
        (tmp_path / name).write_text("")
    found = submissions(tmp_path)
    assert sorted(found.values()) == sorted(tmp_path / n for n in [*ODD, "x.py", "x.ipynb", "ann.py"])
    assert found["ann"] == tmp_path / "ann.py"


# -- links: never read in a class ------------------------------------------------------------

@pytest.fixture
def linked_class(tmp_path):
    """A class folder with a correct file and links: to a file outside it (standing for /etc/passwd), to a
    folder, and to nothing."""
    outside = tmp_path / "instructor_home" / "passwd"
    outside.parent.mkdir()
    outside.write_text(f"{MARKER}\ndef softmax(:\n")  # were it read, the syntax error would show its line
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ann.py").write_text(CORRECT)
    (folder / "eve.py").symlink_to(outside)
    (folder / "dir.py").symlink_to(outside.parent)
    (folder / "gone.py").symlink_to(tmp_path / "nothing.py")
    return folder


def test_a_class_file_that_is_a_link_is_refused_unread_everywhere(linked_class, tmp_path):
    found = submissions(linked_class)
    assert set(found) == {"ann", "eve", "dir", "gone"}  # listed, so each gets its own line
    records = [classroom.grade_submission(found[name], name, seed=3) for name in ("eve", "dir", "gone")]
    for record in records:
        assert record["exit_status"] == UNUSABLE and record["load_status"] == "refused"
        assert "symbolic link" in record["unusable"] and "not read" in record["unusable"]
    paths = []
    for r in records:
        paths.append(tmp_path / f"{r['learner']}.json")
        paths[-1].write_text(json.dumps(r))
    gradebook_job([str(p) for p in paths], str(tmp_path / "gradebook.csv"), str(tmp_path / "pages"),
                  str(tmp_path / "scores.csv"), str(tmp_path / "class.html"))
    shown = "".join((tmp_path / f).read_text() for f in ("gradebook.csv", "scores.csv", "class.html")) + "".join(
        p.read_text() for p in (tmp_path / "pages").glob("*.html")) + json.dumps(records)
    assert MARKER not in shown and "root:x" not in shown and "instructor_home" not in shown
    assert [u["learner"] for u in overview(records)["unusable"]] == ["eve", "dir", "gone"]
    assert all("symbolic link" in u["why"] for u in overview(records)["unusable"])


def test_a_link_put_in_place_of_a_listed_file_is_not_read_either(linked_class):
    g = grade(linked_class / "eve.py", isolation="none", helpers=False, follow_links=False)
    assert g.exit_status == UNUSABLE and g.load.message == "eve.py is a symbolic link: not read"


def test_a_class_file_that_is_no_regular_file_is_refused_without_hanging(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")  # opening it to read would wait for a writer
    assert list(submissions(tmp_path)) == ["pipe"]
    record = classroom.grade_submission(tmp_path / "pipe.py", "pipe", seed=1)
    assert record["load_status"] == "refused" and "not a regular file" in record["unusable"]
    g = grade(tmp_path / "pipe.py", isolation="none", helpers=False, follow_links=False)
    assert g.exit_status == UNUSABLE and g.load.message == "pipe.py is not a regular file: not read"


def test_self_grading_follows_the_users_own_link(tmp_path):
    target = tmp_path / "real" / "mine.py"
    target.parent.mkdir()
    target.write_text(CORRECT)
    (tmp_path / "link.py").symlink_to(target)
    g = grade(tmp_path / "link.py", isolation="none", n_samples=N_SAMPLES, time_limit=20)
    assert g.exit_status == PASS


# -- no reference within reach, no forged frame on the grader's pipe -------------------------

STEALER = textwrap.dedent('''\

    import gc, marshal, os, sys, types


    def _steal():
        """Every way to the grader's softmax: the harness's globals, the process's objects, the harness's source
        on disk, and a copy saved by an earlier call."""
        main = sys.modules.get("__main__")
        for attr in ("correct_softmax", "reference_softmax", "softmax"):
            if callable(getattr(main, attr, None)):
                return getattr(main, attr)
        for obj in gc.get_objects():
            if isinstance(obj, types.FunctionType) and "softmax" in obj.__name__ \\
                    and obj.__code__.co_filename != __file__:
                return obj
        for folder in STASH:
            try:
                for name in os.listdir(folder):
                    if name.startswith("stash"):
                        with open(os.path.join(folder, name), "rb") as f:
                            return types.FunctionType(marshal.loads(f.read()), {"np": np}, None, (-1,))
            except (OSError, ValueError, EOFError):
                pass
        try:
            text = open(main.__file__).read()
            if "def correct_softmax" in text:
                namespace = {}
                exec(text[text.index("def correct_softmax"):].split("\\n\\n\\n")[0], namespace)
                return namespace["correct_softmax"]
        except (OSError, AttributeError):
            pass
        return None


    softmax = _steal() or (lambda x, axis=-1: -np.asarray(x))  # a wrong one: negated (it reverses any order)
    _forward = scaled_dot_product_attention


    def scaled_dot_product_attention(Q, K, V):
        own = globals()["softmax"]  # the grader's, in the call graded again with a correct softmax: saved for later
        if own.__code__.co_filename != __file__:
            for folder in STASH:
                try:
                    with open(os.path.join(folder, "stash"), "wb") as f:
                        f.write(marshal.dumps(own.__code__))
                except OSError:
                    pass
        return _forward(Q, K, V)


    def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):
        globals()["softmax"] = _steal() or softmax
        return _exercise_2(seed, d_ks, T)


    def exercise_3(seed=42, d_k=256, T=8):
        globals()["softmax"] = _steal() or softmax
        return _exercise_3(seed, d_k, T)
    ''')


def _stealer(tmp_path, stash: tuple) -> Path:
    """The stealer; `stash`: the folders it saves the grader's softmax in, and looks for it."""
    code = CORRECT.replace("def exercise_2(", "def _exercise_2(").replace("def exercise_3(", "def _exercise_3(")
    return write(tmp_path, code + f"\n\nSTASH = {stash!r}\n" + STEALER)


@needs_sandbox
def test_a_reader_of_main_finds_no_reference_softmax_in_the_sandbox(tmp_path):
    g, _ = sandboxed(_stealer(tmp_path, (".", "/dev/shm")))
    assert g.exit_status == FAIL
    _nothing_stolen(g)


def _nothing_stolen(g) -> None:
    """The softmax fails, and every part that calls it fails with it: each passes only as the grader grades it
    again, with its own correct softmax in the file's place, and says so."""
    verdict = {p.name: p for p in g.parts}
    assert not verdict["softmax"].passed
    for name in ("scaled_dot_product_attention", "exercise_2", "exercise_3"):
        notes = " ".join(verdict[name].notes)
        assert "with your softmax" in notes and "graded here with a correct softmax in its place" in notes, name


def test_a_reader_of_main_finds_no_reference_softmax_in_a_plain_process(tmp_path):
    # its working folder only: a plain process can write anywhere the user can, and nothing empties that
    g = grade(_stealer(tmp_path, (".",)), isolation="none", time_limit=20, n_samples=N_SAMPLES)
    _nothing_stolen(g)


FORGER = textwrap.dedent('''\

    import json, os

    _FORGED = b"".join(json.dumps({"id": i, "status": "missing", "nbytes": 0}).encode() + b"\\n"
                       for i in range(1, 80))  # "not defined" for every call to come


    def _forge():
        """Write the forged frames wherever they might reach the grader: any descriptor of this process but its own
        answer's, and the harness's (its parent's: in the sandbox, PID 1) through /proc."""
        reached = []
        for fd in [3, *range(5, 64)]:
            try:
                os.write(fd, _FORGED)
                reached.append(f"fd {fd}")
            except OSError:
                pass
        for pid in sorted({1, os.getppid()} - {os.getpid()}):
            for name in ("0", "1", "2", "3", "4", "5"):
                try:
                    fd = os.open(f"/proc/{pid}/fd/{name}", os.O_WRONLY | os.O_NONBLOCK)
                except OSError:
                    continue
                try:
                    os.write(fd, _FORGED)
                    reached.append(f"/proc/{pid}/fd/{name}")
                except OSError:
                    pass
                finally:
                    os.close(fd)
        return reached


    _softmax = softmax


    def softmax(x, axis=-1):
        reached = _forge()
        if reached:
            raise RuntimeError("forged frames written to " + ", ".join(reached))
        return _softmax(x, axis=axis)
    ''')


@needs_sandbox
def test_frames_written_to_any_reachable_descriptor_never_reach_the_grader(tmp_path):
    # (a plain process run by root opens any /proc/<pid>/fd: --isolation none promises nothing of the kind)
    g, _ = sandboxed(write(tmp_path, CORRECT + FORGER))
    assert g.parts[0].passed, g.parts[0].error  # no descriptor but its answer's was open to it, no /proc/1/fd
    assert all(p.lost is None for p in g.parts) and g.exit_status == PASS  # no forged "missing" was taken


@needs_sandbox
def test_a_call_that_ends_without_an_answer_is_a_crash_with_its_status_and_the_next_is_graded(tmp_path):
    path = write(tmp_path, CORRECT + "\n\ndef exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):\n    os._exit(3)\n\n\n"
                                     "def exercise_3(seed=42, d_k=256, T=8):\n"
                                     "    os.kill(os.getpid(), 9)\n\n\nimport os\n")
    g, _ = sandboxed(path)
    ex2, ex3 = g.parts[3], g.parts[4]
    assert ex2.verdict == "crashes" and "exited with status 3" in ex2.lost.message
    assert ex3.verdict == "crashes" and "signal SIGKILL" in ex3.lost.message
    assert all(p.passed for p in g.parts[:3])


# -- bytes written: capped everywhere ------------------------------------------------------------

WRITER = textwrap.dedent('''\

    import json, os, sys


    def exercise_3(seed=42, d_k=256, T=8):
        """Fill every place it might write, 1 MiB at a time, and say how much each took."""
        stdlib = os.path.dirname(os.__file__)
        places = ["/dev/shm", "/dev", "/", "/tmp", "/run", "/var/tmp", "/opt", "/opt/site", "/usr/lib",
                  os.path.expanduser("~"), os.getcwd(), os.path.join(stdlib, "site-packages"), stdlib,
                  "/proc/self", "/dev/pts"]
        wrote = {}
        chunk = b"x" * 2**20
        for place in places:
            total = 0
            path = os.path.join(place, "fill")
            try:
                with open(path, "wb", buffering=0) as f:
                    for _ in range(200):
                        total += f.write(chunk)
            except OSError:
                pass
            wrote[place] = total
            try:
                os.unlink(path)
            except OSError:
                pass
        raise RuntimeError("WROTE " + json.dumps(wrote))
    ''')


@needs_sandbox
def test_every_place_the_learner_can_write_is_capped_or_read_only(tmp_path):
    g, _ = sandboxed(write(tmp_path, CORRECT + WRITER))
    wrote = json.loads(g.parts[4].error.rsplit("WROTE ", 1)[1].splitlines()[0])
    mib = {place: n / 2**20 for place, n in wrote.items()}
    capped = {"/dev/shm": sandbox.SHM_MIB, sandbox.SCRATCH: sandbox.SCRATCH_MIB}
    for place, n in mib.items():
        assert n <= capped.get(place, 0), (place, n)  # HOME and cwd are /scratch
    assert 0 < mib["/dev/shm"] and 0 < mib[sandbox.SCRATCH]  # both usable, to their caps
    assert sum(mib.values()) <= sandbox.SHM_MIB + sandbox.SCRATCH_MIB


@needs_sandbox
def test_multiprocessing_and_its_semaphores_work_in_the_sandbox(tmp_path):
    code = CORRECT.replace("def exercise_3(", "def _exercise_3(") + textwrap.dedent('''\

        def exercise_3(seed=42, d_k=256, T=8):
            import multiprocessing
            lock = multiprocessing.Lock()  # a POSIX semaphore in /dev/shm
            with lock, multiprocessing.Pool(2) as pool:
                return pool.apply(_exercise_3, (seed, d_k, T))
        ''')
    g, _ = sandboxed(write(tmp_path, code))
    assert g.parts[4].passed, g.parts[4].error or g.parts[4].lost
    assert g.exit_status == PASS


@needs_sandbox
def test_a_fork_bomb_in_a_call_is_stopped_and_the_next_part_is_graded(tmp_path):
    # the harness is the PID namespace's init: the bomb's processes fill the grade's pids.max, not the machine's
    path = write(tmp_path, CORRECT + textwrap.dedent('''\

        def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):
            import os
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        '''))
    g, _ = sandboxed(path, time_limit=3)
    assert g.parts[3].verdict == "hangs" and g.parts[4].passed
