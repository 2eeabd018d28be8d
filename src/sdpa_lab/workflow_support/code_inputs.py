"""The package files a job runs, as its rule's code inputs: the rule reruns when one of them changes.

Snakemake tracks a rule's script (and its params, inputs and outputs) but not the package
modules the script imports. So a rule's `input: code=` lists the files of the modules it
names and every `sdpa_lab` module they import, transitively, found by parsing each file's
import statements (`ast`, without importing anything: the Snakefile stays light). Editing
experiments/learning.py reruns the learning job alone; editing seeding.py, every job that
draws.

The paths are relative to the working directory (the checkout): moving or copying a
checkout, mtimes kept, reruns nothing.

Every snakemake call (a no-op too) parses the Snakefile, so the imports found in each file are kept
between calls in a small JSON store (`use_store`, `save_store`; the workflow's is under .snakemake/),
keyed by the file's content hash and module name: an edited file is parsed again, an unchanged one is not.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from functools import cache
from pathlib import Path

import sdpa_lab

PACKAGE = "sdpa_lab"
# Left out: the experiments' registry and the declaration module only declare (a rule's settings and outputs
# are its own params and outputs, which Snakemake compares itself, and adding an experiment must not rerun the
# others), and the packages' __init__.py files hold no code a job runs.
DECLARATIONS = ("experiments/registry.py", "experiments/declaration.py")
# Modules that import every module of a package folder by pkgutil, not by import statements: a job that runs one
# runs all of that folder (the claims job decides every claim, a new claim module too).
GATHERS = {"sdpa_lab.claims.registry": "claims"}


def package_dir(workflow_dir: str | os.PathLike | None = None) -> Path:
    """The sdpa_lab sources the code inputs name: the workflow's own src/sdpa_lab when it has one
    (a checkout), else the installed package's."""
    if workflow_dir is not None and (own := Path(workflow_dir) / "src" / PACKAGE).is_dir():
        return own
    return Path(sdpa_lab.__file__).parent


@cache  # asked once per name a file imports, for each rule: the same few hundred names, each a stat or two
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


# The store of imports found: "<module>:<sha256 of the file>" -> the sdpa_lab modules it imports.
_STORE: dict[str, list[str]] = {}
_USED: set[str] = set()  # the keys this process looked up: what save_store keeps


def use_store(path: str | os.PathLike) -> None:
    """Take the imports found by an earlier call from the JSON store at `path` (missing or unreadable: none)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(data, dict):
        _STORE.update({k: v for k, v in data.items()
                       if isinstance(k, str) and isinstance(v, list) and all(isinstance(m, str) for m in v)})


def save_store(path: str | os.PathLike) -> None:
    """Write the imports this process looked up to the JSON store at `path`, atomically, if they differ from
    what it holds (stale entries drop out); a store that cannot be written is left as it is."""
    kept = {key: _STORE[key] for key in sorted(_USED)}
    path = Path(path)
    try:
        if path.is_file() and json.loads(path.read_text(encoding="utf-8")) == kept:
            return
    except (OSError, ValueError):
        pass
    from sdpa_lab.io import write_text

    try:
        write_text(json.dumps(kept, indent=0), path)
    except OSError:
        pass  # a read-only checkout: the next call parses again


@cache
def imported_modules(path: Path, module: str) -> frozenset[str]:
    """The sdpa_lab modules that file `path` (module `module`) imports, at any depth of its code.

    `from sdpa_lab.x import y` yields sdpa_lab.x and sdpa_lab.x.y (y may be a module: only
    names with a file count); relative imports are resolved against `module`'s package.
    """
    source = path.read_bytes()
    key = f"{module}:{hashlib.sha256(source).hexdigest()}"
    _USED.add(key)
    if key in _STORE:
        return frozenset(_STORE[key])
    found = _parsed_imports(source, path, module)
    _STORE[key] = sorted(found)
    return found


def _parsed_imports(text: bytes, path: Path, module: str) -> frozenset[str]:
    """imported_modules, from the file's text `text` parsed."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in _statements(ast.parse(text, filename=str(path))):
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
        if module in GATHERS:
            todo.extend(gathered_modules(root, GATHERS[module]))
    here = Path.cwd()
    return tuple(sorted(_as_input(path, here) for path in seen))


def gathered_modules(root: Path, folder: str) -> list[str]:
    """The modules of package folder `folder` under `root` (its .py files), as a gathering module finds them."""
    package = ".".join((PACKAGE, *Path(folder).parts))
    return [f"{package}.{p.stem}" for p in sorted((root / folder).glob("*.py")) if p.name != "__init__.py"]


@cache
def _as_input(path: Path, here: Path) -> str:
    """`path` relative to the working directory `here` when it is under it, else as it is."""
    return os.path.relpath(path, here) if path.is_relative_to(here) else str(path)


def data_files(folder: str, workflow_dir: str | None = None) -> list[str]:
    """The files in package folder `folder` (e.g. report/templates), as code inputs: sorted paths."""
    here = Path.cwd()
    return sorted(_as_input(p, here) for p in (package_dir(workflow_dir) / folder).iterdir() if p.is_file())
