"""The modules a learner's code may import: the course's list, and the installed files that make them up.

The course's list (COURSE_MODULES, or config `grading_modules`) names top-level modules
(`numpy`, `matplotlib`). Each is traced to the distribution that installs it and to that
distribution's requirements, recursively (importlib.metadata: their RECORDs, never a hand-kept
list), and `site_entries` returns the top-level files and folders those distributions put in
site-packages. The sandbox mounts exactly these read-only (sandbox.Sandbox.command), a plain
process sees links to them (runner.LearnerProcess): never the whole site-packages, never
sdpa_lab. Parse-time light: only the standard library is imported here.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import metadata
from pathlib import Path

COURSE_MODULES = ("numpy", "matplotlib")  # what this lesson's learners import; numpy is always given (the harness)
SETTING = "grading_modules"
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # a top-level module's name: nothing that can run code
NEVER = ("sdpa_lab",)  # the project itself is never within a learner's reach


class ModulesError(ValueError):
    """A list of modules the grader cannot give a learner; the message is one line naming the setting."""


def _requirement_name(text: str) -> str | None:
    """The distribution a requirement line names, or None where it does not apply here (an extra, a marker
    that is false for this Python)."""
    try:
        from packaging.requirements import Requirement  # matplotlib's own dependency: installed with it
    except ImportError:  # pragma: no cover - then only an extra's requirement is left out
        name, _, marker = text.partition(";")
        return None if "extra" in marker else re.split(r"[\s<>=!~\[(]", name.strip(), maxsplit=1)[0]
    req = Requirement(text)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        return None
    return req.name


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@cache
def _distributions() -> dict[str, metadata.Distribution]:
    return {_normal(d.metadata["Name"]): d for d in metadata.distributions() if d.metadata["Name"]}


def distributions_of(modules: tuple[str, ...]) -> list[metadata.Distribution]:
    """The distributions that install `modules` and everything they require (ModulesError for a module that is not
    installed, or one that would bring in the project)."""
    owners = metadata.packages_distributions()
    todo = []
    for module in modules:
        if module not in owners:
            raise ModulesError(f"config setting {SETTING}: {module!r} is not installed in the grader's environment")
        todo += owners[module]
    found: dict[str, metadata.Distribution] = {}
    while todo:
        name = _normal(todo.pop())
        if name in found or name not in _distributions():
            continue  # a requirement not installed cannot be imported anyway
        dist = found[name] = _distributions()[name]
        todo += [r for r in map(_requirement_name, dist.requires or []) if r]
    return list(found.values())


def check_modules(modules) -> tuple[str, ...]:
    """The course's modules, validated: top-level module names only, numpy first; ModulesError naming the setting."""
    if isinstance(modules, str) or not all(isinstance(m, str) for m in modules):
        raise ModulesError(f"config setting {SETTING}: a list of module names, got {modules!r:.80}")
    for m in modules:
        if not NAME.match(m):
            raise ModulesError(f"config setting {SETTING}: {m!r:.60} is not a top-level module's name (letters, "
                               "digits and '_')")
        if m in NEVER:
            raise ModulesError(f"config setting {SETTING}: {m} is the project itself, never given to a learner")
    return tuple(dict.fromkeys(("numpy", *modules)))


@cache
def site_entries(modules: tuple[str, ...] = COURSE_MODULES) -> tuple[Path, ...]:
    """The top-level files and folders in site-packages that make up `modules` and their requirements, each an
    absolute path (their .dist-info folders included: some packages read their own version)."""
    modules = check_modules(modules)
    entries: set[Path] = set()
    for dist in distributions_of(modules):
        base = Path(dist.locate_file("")).resolve()
        for f in dist.files or []:
            parts = Path(f).parts
            if not parts or parts[0] in ("..", "/") or parts[0] == "__pycache__" or parts[0].endswith(".pth"):
                continue  # scripts installed elsewhere, caches, and start-up hooks (-S ignores those anyway)
            entries.add(base / parts[0])
    bad = [e for e in entries if e.name.split(".")[0] in NEVER or e.name.startswith("__editable__")]
    if bad:
        raise ModulesError(f"config setting {SETTING}: {modules} would bring in {bad[0].name}, part of the project")
    return tuple(sorted(e for e in entries if e.exists()))


def named_modules(path, modules: tuple[str, ...], limit: int = 4_000_000) -> list[str]:
    """The course's modules a submission's text names as a word (numpy always): the only ones whose presence can
    change its grade, so a class regrades a learner on a new module only where the file names it. A link or anything
    but a regular file is not read (numpy alone); `limit`: bytes read at most."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ["numpy"]
    with os.fdopen(fd, "rb") as f:
        text = f.read(limit).decode("utf-8", "replace") if stat.S_ISREG(os.fstat(fd).st_mode) else ""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return [m for m in check_modules(modules) if m == "numpy" or m in words]


def linked_site(folder: Path, modules: tuple[str, ...]) -> Path:
    """`folder` holding a link to each of the course's installed files and folders (a plain process's site)."""
    folder.mkdir()
    for entry in site_entries(modules):
        (folder / entry.name).symlink_to(entry)
    return folder


def missing_module_hint(text: str, modules: tuple[str, ...]) -> str:
    """`text` (a learner's traceback) with a hint on its error line where it names a module the grader does not
    give."""
    found = re.search(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'", text)
    if not found or found[1].split(".")[0] in modules:
        return text
    hint = (f" (the grader gives a learner's code only the course's modules, {', '.join(modules)}: an instructor "
            f"adds one with the config setting {SETTING}, a learner with sdpa-lab grade --module)")
    return text[:found.end()] + hint + text[found.end():]
