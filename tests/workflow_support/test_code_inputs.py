"""sdpa_lab.workflow_support.code_inputs: a rule's code inputs are the modules its job imports, as paths
relative to the workflow; and the package has no import cycle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdpa_lab.workflow_support.code_inputs import code_files, imported_modules, package_dir


def names(repo: Path, *modules: str) -> set[str]:
    src = repo / "src" / "sdpa_lab"
    return {Path(p).resolve().relative_to(src.resolve()).as_posix() for p in code_files(*modules,
                                                                                         workflow_dir=str(repo))}


def test_code_files_are_the_modules_a_job_imports(repo):
    """A rule's code inputs: its module and the sdpa_lab modules it imports, at any depth, and no others."""
    learning = names(repo, "sdpa_lab.experiments.learning")
    assert "experiments/learning.py" in learning and "seeding.py" in learning and "scales.py" in learning
    assert not learning & {"experiments/gradient.py", "experiments/variance.py", "pipeline.py",
                           "experiments/registry.py", "experiments/declaration.py"}
    # An import inside a function counts (the figure job imports matplotlib's side lazily).
    assert "report/figures.py" in names(repo, "sdpa_lab.report.jobs")
    # Transitively: gradient imports the shared trial scores' module, which imports the scales.
    assert {"experiments/trial_scores.py", "scales.py"} <= names(repo, "sdpa_lab.experiments.gradient")
    # The main report does not rerun when only the calibration report's code changes.
    assert "calibration/report.py" not in names(repo, "sdpa_lab.report.jobs", "sdpa_lab.report.html")


def test_the_claims_job_runs_every_claims_module_the_registry_gathers(tmp_path):
    """claims/registry.py finds its claims by pkgutil, not by import: the claims job's code inputs are every module
    of the claims folder, a claim in a module of its own too, so editing one reruns the claims."""
    root = tmp_path / "src" / "sdpa_lab"
    (root / "claims").mkdir(parents=True)
    (root / "claims" / "registry.py").write_text("import pkgutil\n")
    (root / "claims" / "deciding.py").write_text("from sdpa_lab.claims.registry import registry\n")
    (root / "claims" / "own_claim.py").write_text("from sdpa_lab import helper\n")  # imported by no module
    (root / "helper.py").write_text("")
    (root / "unrelated.py").write_text("")
    found = {Path(p).resolve().relative_to(root.resolve()).as_posix()
             for p in code_files("sdpa_lab.claims.deciding", workflow_dir=str(tmp_path))}
    assert found == {"claims/deciding.py", "claims/registry.py", "claims/own_claim.py", "helper.py"}


def test_the_claims_rule_names_every_claim_module(repo):
    claims = names(repo, "sdpa_lab.claims.deciding", "sdpa_lab.claims.expectation_table", "sdpa_lab.claims.verdicts")
    every = {f"claims/{p.name}" for p in (repo / "src" / "sdpa_lab" / "claims").glob("*.py")} - {"claims/__init__.py"}
    assert every <= claims


def test_code_files_are_relative_to_the_workflow(repo, monkeypatch):
    monkeypatch.chdir(repo)
    files = code_files("sdpa_lab.experiments.variance", workflow_dir=str(repo))
    assert files and all(not Path(p).is_absolute() and p.startswith("src/sdpa_lab/") for p in files), files
    assert package_dir(str(repo)) == repo / "src" / "sdpa_lab"


def test_relative_imports_are_followed(tmp_path):
    package = tmp_path / "sdpa_lab" / "sub"
    package.mkdir(parents=True)
    (package / "a.py").write_text("from . import b\nfrom .. import top\nfrom .c import name\n\n"
                                  "def f():\n    import sdpa_lab.late\n")
    assert imported_modules(package / "a.py", "sdpa_lab.sub.a") == {
        "sdpa_lab.sub", "sdpa_lab.sub.b", "sdpa_lab", "sdpa_lab.top", "sdpa_lab.sub.c", "sdpa_lab.sub.c.name",
        "sdpa_lab.late"}


def test_an_import_in_any_block_of_code_is_found(tmp_path):
    """In a class, a method, an if, a try's every part, a with, a loop's else, a match case: each found."""
    (tmp_path / "m.py").write_text(
        "class C:\n    def f(self):\n        if x:\n            import sdpa_lab.a\n"
        "try:\n    import sdpa_lab.b\nexcept ImportError:\n    import sdpa_lab.c\nelse:\n    import sdpa_lab.d\n"
        "finally:\n    import sdpa_lab.e\n"
        "with open(p) as f:\n    for i in f:\n        pass\n    else:\n        import sdpa_lab.f\n"
        "match x:\n    case 1:\n        while y:\n            import sdpa_lab.g\n"
        "f = lambda: __import__('sdpa_lab.h')\n")  # a call, not an import statement: not followed
    assert imported_modules(tmp_path / "m.py", "sdpa_lab.m") == {f"sdpa_lab.{c}" for c in "abcdefg"}


@pytest.mark.house
def test_the_package_has_no_import_cycle(repo):
    """No module imports, at any depth of its code (inside functions too), a module that imports it back."""
    src = repo / "src"
    modules = {}
    for path in (src / "sdpa_lab").rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {m: {d for d in imported_modules(p, m) if d in modules and d != m} for m, p in modules.items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m == goal:
                return True
            if m not in seen:
                seen.add(m)
                todo.extend(graph[m])
        return False

    cycles = sorted((a, b) for a in graph for b in graph[a] if reaches(b, a))
    assert cycles == [], cycles


def test_the_store_keeps_what_each_file_imports_until_it_changes(tmp_path, monkeypatch):
    """The imports found are saved (only those looked up) and read back by the next call; an edited file is
    parsed again, whatever the store says; an unreadable store is no store."""
    from sdpa_lab.workflow_support import code_inputs

    monkeypatch.setattr(code_inputs, "_STORE", {})
    monkeypatch.setattr(code_inputs, "_USED", set())
    code_inputs.imported_modules.cache_clear()
    module, store = tmp_path / "m.py", tmp_path / "store" / "imports.json"
    module.write_text("import sdpa_lab.a\n")
    assert imported_modules(module, "sdpa_lab.m") == {"sdpa_lab.a"}
    code_inputs.save_store(store)
    saved = json.loads(store.read_text())
    assert list(saved.values()) == [["sdpa_lab.a"]]

    # A new process: the store's answer is used for the same text (here a planted one, to see it is read) ...
    monkeypatch.setattr(code_inputs, "_STORE", {})
    code_inputs.imported_modules.cache_clear()
    store.write_text(json.dumps({key: ["sdpa_lab.planted"] for key in saved}))
    code_inputs.use_store(store)
    assert imported_modules(module, "sdpa_lab.m") == {"sdpa_lab.planted"}
    # ... and not for an edited file, which is parsed again.
    code_inputs.imported_modules.cache_clear()
    module.write_text("import sdpa_lab.b\n")
    assert imported_modules(module, "sdpa_lab.m") == {"sdpa_lab.b"}
    # Nor for the same text under another module name (a relative import resolves against it).
    code_inputs.imported_modules.cache_clear()
    module.write_text("import sdpa_lab.a\n")
    assert imported_modules(module, "sdpa_lab.other") == {"sdpa_lab.a"}

    store.write_text("{not json")
    monkeypatch.setattr(code_inputs, "_STORE", {})
    code_inputs.use_store(store)
    assert code_inputs._STORE == {}
    code_inputs.imported_modules.cache_clear()
