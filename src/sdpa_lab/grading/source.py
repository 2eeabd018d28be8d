"""A submission's code as the grader runs it, prepared on the grader's side (nothing of it is run here).

One rule for every file, self-graded or in a class (docs/grading.md, "What of your file runs"):

- a `.py` file is one piece of code (a UTF-8 byte-order mark, as Windows editors write, is dropped);
  a notebook's code cells are read in order with nbformat, each cell numbered as `cell N`, N
  counting the code cells from the top (markdown cells not counted), with `In [k]` after it
  where the notebook holds an execution count;
- IPython's magics and shell lines (`%...`, `!...`, `x = !cmd`, `x = %time f()`, `name?`) are
  replaced by `pass` and a cell that starts with a cell magic (`%%bash`, `%%time`, ...) is left
  out: never run, each named in a note the learner sees. Only a line at the start of a Python
  statement can be a magic (never one inside a string or brackets), and no such line is valid
  Python, so valid code is never touched;
- a cell whose code is not valid Python stops the file there, as Jupyter's Run All does: the
  cells before it are graded, the error is reported in the cell's own coordinates;
- of the top-level code, only the definitions (def, class) and the statements that bind or
  change a name the graded functions need (directly or through other needed names), imports
  included, run: `x = ...`, `d["k"] = ...`, `obj.attr = ...`, and a method call on a value,
  `AXES.append(-1)`, as Run All runs them (never one that calls a graded function);
  everything else (a learner's own `exercise_1()` at the lesson's size, prints, plots, an
  import nothing graded uses) is left out with a note: the grader calls the functions itself.

Every line keeps its number in the source sent to the learner's process, so `relocate` turns
the places in its tracebacks (`File "x.ipynb", line 52`) into the learner's (`cell 5, line 3`).
"""

from __future__ import annotations

import ast
import re
import symtable
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

from sdpa_lab.grading.child import FUNCTIONS
from sdpa_lab.grading.learner_text import file_name, shown
from sdpa_lab.grading.modules import COURSE_MODULES, missing_module_hint

# characters of code read from a submission (a lesson's solutions are a few thousand): the grader's preparation,
# linear in it, takes seconds at this size (tests/grading/test_preparation_time.py)
MAX_CODE = 1_000_000
LISTED = 6  # skipped lines named in a note; the rest are counted
_ASSIGNED_MAGIC = re.compile(r"^[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
_HELP = re.compile(r"^(\?{1,2}[A-Za-z_][\w.]*|[A-Za-z_][\w.]*\?{1,2})$")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass
class Cell:
    label: str  # where it is for the learner: "x.ipynb, cell 3, In [5]", or "x.py"
    text: str
    notes: list = field(default_factory=list)  # (line, what) of the magics left out


@dataclass
class Prepared:
    """The code to send, what was left out (notes the learner sees), and where the file stopped (if it did)."""

    name: str
    source: str
    notes: list
    stop: str = ""  # the syntax error that stopped the file, in the learner's coordinates
    places: list = field(default_factory=list)  # per line of `source`: (label, line within it)
    modules: tuple = COURSE_MODULES

    def where(self, line: int) -> tuple[str, int]:
        """(label, line) of line `line` of the source sent."""
        return self.places[line - 1] if 0 < line <= len(self.places) else (self.name, line)

    def relocate(self, text: str) -> str:
        """A message about the source sent (a traceback, a syntax error), in the learner's coordinates, with a hint
        where it names a module the grader does not give."""
        def place(m: re.Match) -> str:
            label, line = self.where(int(m[2]))
            return f"{label}{m[1] or ''}, line {line}"

        text = re.sub(re.escape(self.name) + r'(")?, line (\d+)', place, text) if text else text
        return missing_module_hint(text, self.modules)


def newlines(text: str) -> str:
    """Code's line ends as Python reads them: CRLF, a lone CR (old Macs) and LF, mixed or not, each one line end."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes) -> str:
    """A file's text: UTF-8 (undecodable bytes replaced), a leading byte-order mark dropped, newlines as \\n."""
    return newlines(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))


def read_cells(path: Path, data: bytes | None = None) -> list[Cell]:
    """A .py file as one cell, or a notebook's code cells (ValueError if it is not a readable notebook); `data`: its
    bytes, where the caller read them (else read here)."""
    text = decode(path.read_bytes() if data is None else data)
    if path.suffix != ".ipynb":
        return [Cell(file_name(path), text)]
    import nbformat

    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat's many errors on a file that is not a notebook
        raise ValueError(f"{file_name(path)} is not a readable Jupyter notebook ({type(exc).__name__})") from None
    cells = []
    for cell in (c for c in nb.cells if c.get("cell_type") == "code"):
        count = cell.get("execution_count")
        shown = f", In [{count}]" if isinstance(count, int) and not isinstance(count, bool) else ""
        code = newlines(str(cell.get("source", "")).lstrip("\ufeff"))
        cells.append(Cell(f"{file_name(path)}, cell {len(cells) + 1}{shown}", code))
    return cells


def _is_magic(stripped: str) -> bool:
    return stripped.startswith(("%", "!")) or bool(_ASSIGNED_MAGIC.match(stripped) or _HELP.match(stripped))


def strip_magics(cell: Cell) -> Cell:
    """The cell with its IPython magics and shell lines replaced by `pass` (a cell magic: the cell emptied).

    One pass of Python's tokenizer, fed the cell line by line (the magics already replaced), tells whether each
    line starts a statement (not inside a string, brackets or a continued line): linear in the cell's size. Where
    the tokenizer refuses a line (an indentation it cannot follow), a fresh one goes on from the next line, which
    counts as a statement's start."""
    lines = cell.text.split("\n")
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("%%"):
        return Cell(cell.label, "\n" * (len(lines) - 1), [(0, first.split()[0])])
    out, notes = [], []
    while len(out) < len(lines):
        _strip_from(lines, out, notes)
    return Cell(cell.label, "\n".join(out), notes)


def _strip_from(lines: list[str], out: list[str], notes: list) -> None:
    """Append to `out` the lines from len(out) on, magics at a statement's start replaced by `pass` (their lines and
    text to `notes`), until the end or the first line the tokenizer refuses."""
    # fed: lines given to this tokenizer; ended: the last of them it ended between statements (0: none yet)
    state = {"fed": 0, "ended": 0, "depth": 0, "continued": False}

    def readline() -> str:
        if len(out) == len(lines):
            return ""
        line = lines[len(out)]
        stripped = line.strip()
        start = state["ended"] == state["fed"]  # the line before ended a statement (not in a string, brackets...)
        state["fed"] += 1
        if state["continued"]:  # a magic continued with a backslash
            out.append("")
        elif start and _is_magic(stripped):
            out.append(line[:len(line) - len(line.lstrip())] + "pass")
            notes.append((len(out), stripped))
        else:
            out.append(line)
            return line + "\n"
        state["continued"] = stripped.endswith("\\")
        return out[-1] + "\n"

    try:  # the tokenizer asks for a line once it has given every token of the one before
        for token in tokenize.generate_tokens(readline):
            if token.type == tokenize.OP and token.string in "([{)]}":
                state["depth"] += 1 if token.string in "([{" else -1
            elif token.type in (tokenize.NEWLINE, tokenize.NL) and state["depth"] <= 0:
                state["ended"] = token.start[0]  # a line that opens a string ends nothing: no token on it yet
    except (tokenize.TokenError, SyntaxError, ValueError):  # the end inside brackets or a string; a bad indent
        pass


def syntax_error(cell: Cell) -> str:
    """The cell's syntax error in the learner's coordinates ("" if it is valid Python)."""
    try:
        ast.parse(cell.text)
    except SyntaxError as exc:
        text = shown((exc.text or "").strip(), 200, one_line=True)
        where = f"{cell.label}, line {exc.lineno or 0}"
        return f"{where}: {type(exc).__name__}: {shown(exc.msg, one_line=True)}" + (f"\n    {text}" if text else "")
    except (ValueError, RecursionError, MemoryError) as exc:  # a null byte, absurd nesting
        return f"{cell.label}: cannot be read as Python ({type(exc).__name__})"
    return ""


# -- what of the top-level code runs ------------------------------------------------

def _scope(node: ast.AST):
    """The nodes of a statement in the module's own scope (not inside a nested function, class or comprehension)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if n is node or not isinstance(n, (*_DEFS, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                                           ast.GeneratorExp)):
            todo += ast.iter_child_nodes(n)


def _base(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def bound(stmt: ast.stmt) -> set[str]:
    """The module-level names a statement binds or changes (an attribute or item of a name changes that name)."""
    names = set()
    for n in _scope(stmt):
        if isinstance(n, _DEFS):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names}
        elif isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(_base(n))
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
    return names - {None}


def changed(stmt: ast.stmt, data: set[str]) -> set[str]:
    """The names in `data` a statement changes through a method (`AXES.append(-1)`, `cfg.update(...)`), as Run All
    runs it; none where it calls a graded function (a lesson-size call the grader leaves out)."""
    names = {_base(n.func.value) for n in _scope(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return set() if _loaded([stmt]) & set(FUNCTIONS) else names & data


def _loaded(nodes) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def used_at_definition(stmt: ast.stmt) -> set[str]:
    """What a definition reads when it runs (decorators, defaults, annotations; a class's whole body)."""
    if isinstance(stmt, ast.ClassDef):
        return _loaded([stmt])
    a = stmt.args
    parts = [*stmt.decorator_list, *a.defaults, *(d for d in a.kw_defaults if d is not None), *(
        x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
        if x is not None and x.annotation is not None)]
    return _loaded(parts + ([stmt.returns] if stmt.returns is not None else []))


def _globals(table: symtable.SymbolTable) -> set[str]:
    """The module-level names a function or class reads or sets, its nested ones included (not its own locals)."""
    names = {s.get_name() for s in table.get_symbols() if s.is_global()}
    return names.union(*(_globals(child) for child in table.get_children()))


def _uses(stmts: list, source: str) -> list[set[str]]:
    """Per top-level statement, the module-level names it reads: a definition's when it runs and when it is called
    (symtable tells a function's globals from its locals), any other statement's as written."""
    try:
        tables = {(t.get_name(), t.get_lineno()): t for t in symtable.symtable(source, "<learner>", "exec")
                  .get_children()}
    except (SyntaxError, ValueError, RecursionError):  # what compile() refuses: the learner's process will say so
        tables = {}
    out = []
    for stmt in stmts:
        table = tables.get((stmt.name, stmt.lineno)) if isinstance(stmt, _DEFS) else None
        if table is None:
            out.append(_loaded([stmt]))
        else:
            out.append(_globals(table) | used_at_definition(stmt))
    return out


def runs(tree: ast.Module, source: str) -> list[bool]:
    """Per top-level statement: whether it runs (a definition, or a statement binding or changing a name the graded
    functions need: an import as any other; a `from __future__` or a `*` import always)."""
    stmts = tree.body
    always = [isinstance(s, _DEFS) or (isinstance(s, ast.ImportFrom) and (
        s.module == "__future__" or any(a.name == "*" for a in s.names))) for s in stmts]  # what binds unknown names
    binds, uses = [bound(s) for s in stmts], _uses(stmts, source)
    data = set().union(*(b for s, b in zip(stmts, binds, strict=True)
                         if not isinstance(s, (*_DEFS, ast.Import, ast.ImportFrom))))  # names of values, not modules
    binds = [b | changed(s, data) for s, b in zip(stmts, binds, strict=True)]
    binding: dict[str, list[int]] = {}
    for i, names in enumerate(binds):
        for name in names:
            binding.setdefault(name, []).append(i)
    needed = set(FUNCTIONS).union(*(used_at_definition(s) for s in stmts if isinstance(s, _DEFS)))
    todo, seen = list(needed), set()
    while todo:  # what a needed name's statements read is needed too (each statement once: linear in the file)
        for i in binding.get(todo.pop(), ()):
            if i not in seen:
                seen.add(i)
                todo += uses[i] - needed
                needed |= uses[i]
    return [a or bool(names & needed) for a, names in zip(always, binds, strict=True)]


def _span(stmt: ast.stmt) -> tuple[int, int]:
    start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    return start, stmt.end_lineno or stmt.lineno


def _groups(stmts: list) -> list[list[int]]:
    """The top-level statements in groups that share a line (`a = 1; f()`), each a list of indices, in order."""
    groups: list[list[int]] = []
    for i, stmt in enumerate(stmts):
        if groups and _span(stmt)[0] <= _span(stmts[groups[-1][-1]])[1]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def keep_needed(source: str, tree: ast.Module) -> tuple[str, list[int]]:
    """`source` with the top-level statements that do not run left out (every line keeps its number; statements
    sharing a line keep theirs), and the first line of each one left out that did something (not a `pass` put
    for a magic, not a docstring)."""
    lines = source.split("\n")
    segment = _segmenter(source.split("\n"))
    stmts, run = tree.body, runs(tree, source)
    skipped = []
    for group in _groups(stmts):
        if all(run[i] for i in group):
            continue
        start, end = _span(stmts[group[0]])[0], _span(stmts[group[-1]])[1]
        kept = "; ".join(segment(stmts[i]) for i in group if run[i]).split("\n")
        lines[start - 1:end] = kept + [""] * (end - start + 1 - len(kept))
        skipped += [_span(stmts[i])[0] for i in group if not run[i] and not isinstance(stmts[i], ast.Pass)
                    and not (isinstance(stmts[i], ast.Expr) and isinstance(stmts[i].value, ast.Constant))]
    return "\n".join(lines), list(dict.fromkeys(skipped))


def _segmenter(lines: list[str]):
    """segment(node): a statement's source, as ast.get_source_segment gives it, from the source's lines split once
    and each encoded once (its columns count UTF-8 bytes): get_source_segment splits the whole source at every call,
    which makes a file of many statements on shared lines quadratic."""
    encoded: dict[int, bytes] = {}

    def line(i: int) -> bytes:
        if i not in encoded:
            encoded[i] = lines[i].encode()
        return encoded[i]

    def segment(node: ast.stmt) -> str:
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            return line(first)[node.col_offset:node.end_col_offset].decode()
        return "\n".join([line(first)[node.col_offset:].decode(), *lines[first + 1:last],
                          line(last)[:node.end_col_offset].decode()])

    return segment


# -- the whole file -----------------------------------------------------------------

def _listing(items: list[str]) -> str:
    shown = "; ".join(items[:LISTED])
    return shown + (f"; and {len(items) - LISTED} more" if len(items) > LISTED else "")


def _quote(code: str) -> str:
    line = code.strip().split("\n")[0]
    return f"`{shown(line[:60], one_line=True)}{'...' if len(line) > 60 else ''}`"


def prepare(path: Path, modules: tuple = COURSE_MODULES, data: bytes | None = None) -> Prepared:
    """The submission at `path` (its bytes `data`, if read already) as the grader runs it (ValueError: not a
    readable notebook, or too long)."""
    cells = read_cells(path, data)
    if sum(len(c.text) for c in cells) > MAX_CODE:  # before any work that grows with it
        raise ValueError(f"{file_name(path)} holds more than {MAX_CODE:,} characters of code: not a lesson's solutions")
    cells = [strip_magics(c) for c in cells]
    stop = ""
    for i, cell in enumerate(cells):
        if stop := syntax_error(cell):
            cells = cells[:i]
            break
    magics = [f"{_quote(what)} ({_short((c.label, line))})" for c in cells for line, what in c.notes]
    places, texts = [], []
    for cell in cells:
        n = cell.text.count("\n") + 1
        places += [(cell.label, k) for k in range(1, n + 1)]
        texts.append(cell.text)
    source = "\n".join(texts) + "\n"
    notes = []
    if magics:
        notes.append("IPython magics and shell commands are not run by the grader (it runs Python only): skipped "
                     + _listing(magics))
    tree = ast.parse(source) if cells else ast.Module(body=[], type_ignores=[])
    source, skipped = keep_needed(source, tree)
    if skipped:
        written = "\n".join(texts).split("\n")  # the code as sent, before the blanking: for the quotes
        calls = [n for n in skipped if any(f + "(" in written[n - 1] for f in FUNCTIONS)]  # named first
        named = set(calls)
        items = [f"{_quote(written[n - 1])} ({_short(places[n - 1])})" for n in calls + [
            n for n in skipped if n not in named]]
        cells = list(dict.fromkeys(_short((places[n - 1][0], 0)) for n in skipped if ", " in places[n - 1][0]))
        where = f" in {len(cells)} cell{'s' if len(cells) > 1 else ''}" if cells else ""
        notes.append(f"Top-level code not run: the grader runs your definitions and the imports and assignments "
                     f"your functions need, then calls the functions itself; {len(skipped)} statement"
                     f"{'s' if len(skipped) > 1 else ''} left out{where}: " + _listing(items))
    return Prepared(file_name(path), source, notes, stop, places, tuple(modules))


def _short(place: tuple[str, int]) -> str:
    """`cell 3 (In [5]), line 2` (a notebook), `line 2` (a .py file); line 0: the whole cell."""
    label, line = place
    cell = label.split(", ", 1)[1] if ", " in label else ""
    return ", ".join(filter(None, [cell, f"line {line}" if line else "the whole cell"]))
