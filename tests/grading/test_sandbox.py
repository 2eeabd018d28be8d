"""A learner's code in the sandbox: every way a submission might fake a pass, break the grader or outlive it.

Each attack is graded as a class grades it (bubblewrap, one memory cgroup for all its
processes) and must end as a fail or as unusable, with a one-line reason, no traceback of
the grader's, nothing left running, nothing over the limits and no secret in any output.
"""

from __future__ import annotations

import json
import os
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from sdpa_lab.cli import main
from sdpa_lab.grading import checks, sandbox
from sdpa_lab.grading.grade import FAIL, PASS, UNUSABLE, format_grade, grade, rows

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None,
                                reason=f"no sandbox here: {sandbox.unavailable()}")

REPO = Path(__file__).resolve().parents[2]
CORRECT = (REPO / "examples" / "solutions" / "correct.py").read_text()
N_SAMPLES = 2000
MEMORY_MIB = 300  # small, so that the memory attacks trip it with a few hundred MB
SECRET = f"sdpa-secret-{uuid.uuid4().hex}"


def write(tmp_path, text: str, name: str = "solutions.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def grades_dirs() -> list[Path]:
    """The cgroups of this process's grades left under its memory cgroup (named for the grading process: another
    process's grades, a test worker's beside this one, are theirs to remove)."""
    own = sandbox.own_cgroups()
    base = Path("/sys/fs/cgroup/memory") / own["memory"].lstrip("/") if "memory" in own else None
    return sorted(base.glob(f"sdpa-lab-grade-{os.getpid()}-*")) if base is not None else []


def running_with(marker: str) -> list[int]:
    """The processes on this machine whose command line holds `marker`."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and proc.name != str(os.getpid()):
            try:
                if marker.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                pass
    return found


def sandboxed(path, **limits):
    """grade(path) as a class grades it, and checks that hold after every grade: nothing left, no secret shown."""
    limits = {"time_limit": 20, "memory_mib": MEMORY_MIB, "n_samples": N_SAMPLES, **limits}
    g = grade(path, isolation="sandbox", helpers=False, **limits)
    assert g.isolation == "bubblewrap sandbox"
    text = format_grade(g) + json.dumps(rows(g))
    assert SECRET not in text and "root:x:0:0" not in text
    assert "Traceback" not in text.replace("your code raised an error", "")
    assert 'File "/' not in text  # no frame of the grader's (the learner's file is named without a folder)
    assert not grades_dirs()  # the grade's cgroup is gone, so is every process in it
    assert g.peak_mib <= g.memory_mib
    return g, text


@pytest.fixture(autouse=True)
def secret_environment(monkeypatch):
    monkeypatch.setenv("SDPA_LAB_TEST_SECRET", SECRET)


def _one_line(message: str) -> bool:
    return bool(message) and "\n" not in message


# -- faking a pass ---------------------------------------------------------------------

def test_replacing_the_harness_in_main_gets_no_pass(tmp_path):
    path = write(tmp_path, """\
        import io, sys
        import numpy as np
        harness = sys.modules["__main__"]

        def forged(module, request, args_bytes, name):  # answer every call "ok" with made-up arrays
            buffer = io.BytesIO()
            np.savez(buffer, item0=np.ones((1, 6, 6)) / 6, item1=np.ones((1, 6, 6)) / 6)
            return {"status": "ok", "sequence": True, "n": 2, "kwargs": []}, buffer.getvalue()

        harness.answer = forged

        def softmax(x, axis=-1):  # needs `harness`: so the lines that bind it run at import
            return x if harness else x
        """)
    g, _ = sandboxed(path)
    assert g.exit_status == FAIL and not any(p.passed for p in g.parts)


def test_a_forged_pass_status_from_the_replaced_harness_is_unusable(tmp_path):
    path = write(tmp_path, """\
        import sys
        harness = sys.modules["__main__"]
        harness.answer = lambda module, request, args_bytes, name: ({"status": "pass", "verdict": "pass"}, b"")

        def softmax(x, axis=-1):  # needs `harness`: so the lines that bind it run at import
            return x if harness else x
        """)
    g, _ = sandboxed(path)
    assert g.exit_status == UNUSABLE
    assert g.parts[0].verdict == "unusable" and "unknown status 'pass'" in g.parts[0].lost.message
    assert _one_line(g.parts[0].lost.message)


@pytest.mark.parametrize("how", ["through sdpa_lab.__file__", "by its absolute path"])
def test_the_shipped_correct_solution_is_out_of_reach(tmp_path, how):
    # `softmax = exec(...)` binds a graded function's name: it runs at import (a bare `exec(...)` would not run)
    if how == "through sdpa_lab.__file__":
        code = ("import pathlib, sdpa_lab\n"
                "softmax = exec((pathlib.Path(sdpa_lab.__file__).parents[2] / 'examples/solutions/correct.py')"
                ".read_text())\n")
    else:
        code = f"softmax = exec(open({str(REPO / 'examples/solutions/correct.py')!r}).read())\n"
    g, text = sandboxed(write(tmp_path, code))
    assert g.exit_status == UNUSABLE
    assert ("ModuleNotFoundError: No module named 'sdpa_lab'" in g.load.message if "sdpa_lab" in how
            else "FileNotFoundError" in g.load.message)


def test_the_graders_reference_cannot_be_imported(tmp_path):
    path = write(tmp_path, CORRECT + textwrap.dedent("""\

        def exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):
            try:
                from sdpa_lab.grading.checks import exercise2_reference
                return exercise2_reference(seed, tuple(d_ks), T, False)["unscaled"]
            except ImportError:
                return [1.0787, 1.4753, 0.014, 0.1033]  # the lesson's printed draw
        """))
    g, _ = sandboxed(path)
    ex2 = g.parts[3]
    assert g.exit_status == FAIL and not ex2.passed
    assert [c.passed for c in ex2.checks if "the draw" in c.what] == [False]  # over many seeds: one answer
    assert "never repeat" in ex2.checks[-1].detail


def test_exercise_1_returning_constants_fails(tmp_path):
    path = write(tmp_path, CORRECT + "\n\ndef exercise_1(seed=42, n_samples=100_000, d_k=1024):\n"
                                     "    return 1024.0, 1.0\n")
    g, _ = sandboxed(path)
    ex1 = g.parts[2]
    assert not ex1.passed and g.exit_status == FAIL
    failed = [c.what for c in ex1.checks if not c.passed]
    assert any("the draws:" in w for w in failed)  # exactly d_k: no draw's variance, by any generator
    assert any(f"raw variance near d_k = {checks.Draw(g.seed).exercise_1_d_k}" in w for w in failed)


def test_hard_coded_argsorts_fail_and_the_grade_never_prints_the_reference(tmp_path):
    path = write(tmp_path, CORRECT + textwrap.dedent("""\

        def exercise_3(seed=42, d_k=256, T=8):
            import numpy as np
            order = np.array([2, 0, 7, 6, 4, 3, 1, 5])  # the lesson's, as an earlier grader printed it
            return order, order
        """))
    g, text = sandboxed(path)
    ex3 = g.parts[4]
    assert not ex3.passed and g.exit_status == FAIL
    d_k, T = checks.Draw(g.seed).exercise_3
    reference = checks.exercise3_reference(g.seed, d_k, T)
    assert np.array2string(reference) not in text and str(list(reference)) not in text


# -- forged replies on the protocol's pipe --------------------------------------------------

FORGERIES = {
    "not json": 'b"this is not json\\n"',
    "a file path": 'json.dumps({"id": 1, "status": "ok", "file": "/etc/passwd", "sequence": False, "n": 1, '
                   '"nbytes": 0}).encode() + b"\\n"',
    "an unknown status": 'json.dumps({"id": 1, "status": "passed", "nbytes": 0}).encode() + b"\\n"',
    "a huge size": 'json.dumps({"id": 1, "status": "ok", "nbytes": 10**12}).encode() + b"\\n"',
    "a pickle": 'json.dumps({"id": 1, "status": "ok", "sequence": False, "n": 1, "nbytes": len(P)}).encode() '
                '+ b"\\n" + P',
}


@pytest.mark.parametrize("forgery", FORGERIES)
def test_a_forged_reply_on_the_pipe_makes_the_check_unusable_in_one_line(tmp_path, forgery, capsys):
    path = write(tmp_path, f"""\
        import io, json, os
        import numpy as np
        buffer = io.BytesIO()
        np.savez(buffer, item0=np.array([object()], dtype=object))
        P = buffer.getvalue()

        def softmax(x, axis=-1):
            os.write(4, {FORGERIES[forgery]})  # the harness's private copy of its stdout
            os._exit(0)
        """)
    g, text = sandboxed(path)
    part = g.parts[0]
    assert g.exit_status == UNUSABLE and part.verdict == "unusable"
    assert _one_line(part.lost.message) and "broke the grader's protocol" in part.lost.message
    assert "passwd" not in text.replace("/etc/passwd", "")  # named in the message at most, never read
    assert main(["grade", str(path), "--isolation", "sandbox", "--time-limit", "20", "--memory-limit",
                 str(MEMORY_MIB), "--n-samples", str(N_SAMPLES)]) == UNUSABLE
    assert "Traceback" not in capsys.readouterr().out


# -- limits for all its processes together ---------------------------------------------------

def test_three_forked_children_share_one_memory_limit(tmp_path):
    # Each child alone stays under the limit (and RLIMIT_AS); together they pass it. The answer is right.
    path = write(tmp_path, CORRECT + textwrap.dedent(f"""\

        def exercise_3(seed=42, d_k=256, T=8):
            import os, time
            children = []
            for _ in range(3):
                pid = os.fork()
                if pid == 0:
                    hoard = np.ones({MEMORY_MIB // 2} * 2**20 // 8)  # touched: resident
                    time.sleep(1.5)  # long enough for the three to hold their hoards at once
                    os._exit(0)
                children.append(pid)
            for pid in children:
                os.waitpid(pid, 0)
            np.random.seed(seed)
            q, Kmat = np.random.randn(d_k), np.random.randn(T, d_k)
            return np.argsort(softmax(Kmat @ q)), np.argsort(softmax(Kmat @ q / np.sqrt(d_k)))
        """))
    g, _ = sandboxed(path)
    ex3 = g.parts[4]
    assert ex3.verdict == "runs out of memory" and f"{MEMORY_MIB} MiB" in ex3.lost.message
    assert g.exit_status == FAIL and all(p.passed for p in g.parts[:4])


def test_printing_without_end_is_cut_at_the_scratch_folders_size(tmp_path):
    path = write(tmp_path, CORRECT + textwrap.dedent("""\

        def exercise_3(seed=42, d_k=256, T=8):
            line = "x" * 10**6
            for _ in range(13_000):  # 13 GB
                print(line)
        """))
    g, _ = sandboxed(path)
    ex3 = g.parts[4]
    assert not ex3.passed and "No space left on device" in ex3.error
    assert g.peak_mib <= MEMORY_MIB


def test_nothing_outlives_the_grade_setsid_and_new_sessions_included(tmp_path):
    marker = f"sdpa-marker-{uuid.uuid4().hex}"
    path = write(tmp_path, CORRECT + textwrap.dedent(f"""\

        def exercise_3(seed=42, d_k=256, T=8):
            import os, subprocess, sys, time
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"],
                             start_new_session=True)
            if os.fork() == 0:  # a daemon: setsid, fork again, the parent leaves
                os.setsid()
                if os.fork() == 0:
                    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
                os._exit(0)
            while True:  # a hang (asleep: it burns no core while the limit runs out)
                time.sleep(1)
        """))
    g, _ = sandboxed(path, time_limit=2.5)
    assert g.parts[4].verdict == "hangs"
    assert running_with(marker) == []


def test_an_endless_loop_is_stopped_at_the_time_limit(tmp_path):
    path = write(tmp_path, CORRECT + "\n\ndef exercise_2(seed=42, d_ks=(4, 16, 64, 256), T=8):\n    while True:\n"
                                     "        pass\n")
    g, _ = sandboxed(path, time_limit=2)
    assert g.parts[3].verdict == "hangs" and "time limit of 2 s" in g.parts[3].lost.message
    assert g.parts[4].passed  # a fresh process answers the next call


# -- what the learner's code sees ----------------------------------------------------------

def test_no_secret_reaches_the_grade_output(tmp_path):
    path = write(tmp_path, CORRECT + textwrap.dedent("""\

        def exercise_3(seed=42, d_k=256, T=8):
            import os
            leak = [repr(dict(os.environ))]
            for name in ("/etc/passwd", "/proc/1/environ", "/proc/self/environ"):
                try:
                    leak.append(open(name, "rb").read().decode(errors="replace"))
                except OSError as exc:
                    leak.append(repr(exc))
            raise RuntimeError(" ".join(leak))
        """))
    g, text = sandboxed(path)
    ex3 = g.parts[4]
    assert not ex3.passed and "RuntimeError" in ex3.error
    assert "FileNotFoundError" in ex3.error  # no /etc in the sandbox


def test_the_sandbox_shows_numpy_and_scratch_and_hides_the_project_and_the_network(tmp_path):
    path = write(tmp_path, CORRECT + textwrap.dedent(f"""\

        def exercise_3(seed=42, d_k=256, T=8):
            import json, os, socket
            seen = {{"root": sorted(os.listdir("/")), "cwd": os.getcwd(), "pids": len(os.listdir("/proc")),
                    "project": os.path.exists({str(REPO)!r}), "home": os.listdir(os.path.expanduser("~")),
                    "uid": os.getuid(), "caps": [line.split()[1] for line in open("/proc/self/status")
                                                 if line.startswith("CapEff")][0]}}
            try:
                import sdpa_lab  # noqa: F401
                seen["sdpa_lab"] = True
            except ImportError:
                seen["sdpa_lab"] = False
            try:
                socket.create_connection(("1.1.1.1", 53), timeout=2)
                seen["network"] = True
            except OSError:
                seen["network"] = False
            with open("scratch_file", "w") as f:
                f.write("ok")
            raise RuntimeError("SEEN " + json.dumps(seen))
        """))
    g, _ = sandboxed(path)
    seen = json.loads(g.parts[4].error.rsplit("SEEN ", 1)[1].splitlines()[0])
    assert seen["sdpa_lab"] is False and seen["project"] is False
    assert seen["home"] == ["learner_output.txt"]  # HOME is the private scratch folder: what it printed, nothing else
    assert seen["network"] is False and seen["cwd"] == sandbox.SCRATCH
    assert seen["uid"] != 0 and int(seen["caps"], 16) == 0  # no capability: it can mount nothing, leave no cgroup
    assert "etc" not in seen["root"] and "work" not in seen["root"]
    assert g.parts[0].passed  # NumPy works


def test_the_sandbox_refuses_in_one_line_where_it_cannot_start(tmp_path, monkeypatch, capsys):
    from sdpa_lab.grading.classroom import grade_submission

    monkeypatch.setattr(sandbox, "unavailable", lambda: "bubblewrap (bwrap) is not installed: apt-get install "
                                                        "bubblewrap")
    path = write(tmp_path, CORRECT)
    assert main(["grade", str(path), "--isolation", "sandbox"]) == UNUSABLE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bwrap" in err
    with pytest.raises(Exception, match="bwrap"):
        grade_submission(path, "x")
    # self-grading still works, in a plain process
    g = grade(path, n_samples=N_SAMPLES, time_limit=20)
    assert g.isolation == "plain process" and g.exit_status == PASS
