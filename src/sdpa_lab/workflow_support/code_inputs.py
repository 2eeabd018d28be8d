"""The package files a job runs, as its rule's code inputs: the rule reruns when one of them changes.

Snakemake tracks a rule's script (and its params, inputs and outputs) but not the package
modules the script imports. So a rule's `input: code=` lists the files of the modules it
names and every `sdpa_lab` module they import, transitively, found by parsing each file's
import statements (`ast`, without importing anything: the Snakefile stays light). Editing
experiments/learning.py reruns the learning job alone; editing seeding.py, every job that
draws.

The paths are relative to the working directory (the checkout): moving or copying a
checkout, mtimes kept, reruns nothing.
"""

from __future__ import annotations

import ast
import os
from functools import cache
from pathlib import Path

import sdpa_lab

PACKAGE = "sdpa_lab"
# Left out: the experiments' registry only declares (a rule's settings and outputs are its own params and
# outputs, which Snakemake compares itself, and adding an experiment must not rerun the others), and the
# packages' __init__.py files hold no code a job runs.
DECLARATIONS = ("experiments/registry.py",)


def package_dir(workflow_dir: str | os.PathLike | None = None) -> Path:
    """The sdpa_lab sources the code inputs name: the workflow's own src/sdpa_lab when it has one
    (a checkout), else the installed package's."""
    if workflow_dir is not None and (own := Path(workflow_dir) / "src" / PACKAGE).is_dir():
        return own
    return Path(sdpa_lab.__file__).parent


def _module_file(module: str, root: Path) -> Path | None:
    """The file of sdpa_lab module `module` under `root` (a package's __init__.py), or None if it is not one."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# The fields of a statement that hold statements: an import is a statement, so the walk skips every expression.
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.Module):
    """Every statement of `tree`, at any depth (inside functions, classes, ifs, trys, withs, loops, matches)."""
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        yield node
        for block in _BLOCKS:
            todo.extend(getattr(node, block, ()))


@cache
def imported_modules(path: Path, module: str) -> frozenset[str]:
    """The sdpa_lab modules that file `path` (module `module`) imports, at any depth of its code.

    `from sdpa_lab.x import y` yields sdpa_lab.x and sdpa_lab.x.y (y may be a module: only
    names with a file count); relative imports are resolved against `module`'s package.
    """
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in _statements(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            found.add(source)
            found |= {f"{source}.{alias.name}" for alias in node.names}
    return frozenset(m for m in found if m.split(".")[0] == PACKAGE)


@cache
def code_files(*modules: str, workflow_dir: str | None = None) -> tuple[str, ...]:
    """The files of `modules` and of every sdpa_lab module they import, transitively: sorted paths,
    relative to the working directory when they are under it."""
    root = package_dir(workflow_dir)
    skipped = {root / p for p in DECLARATIONS}
    seen: dict[Path, str] = {}
    todo = list(modules)
    while todo:
        module = todo.pop()
        path = _module_file(module, root)
        if path is None or path in seen or path in skipped or path.name == "__init__.py":
            continue
        seen[path] = module
        todo.extend(imported_modules(path, module))
    return tuple(sorted(map(_as_input, seen)))


def _as_input(path: Path) -> str:
    """`path` relative to the working directory when it is under it, else as it is."""
    here = Path.cwd()
    return os.path.relpath(path, here) if path.is_relative_to(here) else str(path)


def data_files(folder: str, workflow_dir: str | None = None) -> list[str]:
    """The files in package folder `folder` (e.g. report/templates), as code inputs: sorted paths."""
    return sorted(_as_input(p) for p in (package_dir(workflow_dir) / folder).iterdir() if p.is_file())
