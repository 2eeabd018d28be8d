"""A config file read safely: YAML's safe loader, no aliases, no duplicate keys, bounded size, depth and integers,
every refusal naming the file and the line and column; and a regular file read without blocking.

What the settings may be is the schema's business (sdpa_lab.config); this module only turns a file into a
mapping, or refuses it.
"""

from __future__ import annotations

import os
import reprlib
import stat
from pathlib import Path
from typing import Any

import yaml


class ConfigError(ValueError):
    """A config file, or a configuration value, that is refused: unreadable, unsafe, or not what the schema
    allows."""


# LibYAML's safe loader where PyYAML has it (its wheels do): the same safe loading, a few times
# faster, and every snakemake call, a no-op too, reads the config and the schema.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# A config is a few hundred bytes; refusing anything far larger before parsing bounds the time and
# memory any file can cost.
MAX_CONFIG_BYTES = 64 * 1024
# Deepest nesting of lists and mappings read (a config nests three deep; building a deeply
# nested value recurses in Python).
MAX_DEPTH = 16
# Longest integer literal read (a seed has at most 20 digits); Python refuses to parse over 4300.
MAX_INT_DIGITS = 100


def short(value: Any, limit: int = 80) -> str:
    """repr(value) cut to about `limit` characters (the lists and strings in it shortened first)."""
    shorter = reprlib.Repr()
    shorter.maxlevel, shorter.maxlist, shorter.maxdict, shorter.maxtuple = 3, 8, 6, 8
    shorter.maxstring = shorter.maxlong = shorter.maxother = limit // 2
    return cut(shorter.repr(value), limit)


def cut(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _at(mark) -> str:
    """A YAML mark as a user reads it: line and column counted from 1."""
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _mapping_without_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    """A mapping, refused if a key appears twice (YAML's loaders keep the last one silently)."""
    first: dict = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            key = (key_node.tag, key_node.value)
            if key in first:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {cut(key_node.value, 40)} (first given at {_at(first[key])}); "
                    "give each setting once", key_node.start_mark)
            first[key] = key_node.start_mark
    return loader.construct_mapping(node, deep=True)


def _bounded_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    """An integer literal of at most MAX_INT_DIGITS digits."""
    if len(node.value) > MAX_INT_DIGITS:
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {len(node.value)} digits; at most {MAX_INT_DIGITS} are read", node.start_mark)
    return loader.construct_yaml_int(node)


class _ConfigLoader(_SAFE_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, refusing duplicate keys and overlong integers."""


_ConfigLoader.add_constructor("tag:yaml.org,2002:map", _mapping_without_duplicates)
_ConfigLoader.add_constructor("tag:yaml.org,2002:int", _bounded_int)


def _decode(data: bytes, path: Path) -> str:
    """`data` as UTF-8 text; ConfigError with the line, column and byte offset of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(f"config file {path}: not UTF-8 text: byte {data[exc.start]:#04x} at line {line}, "
                          f"column {column} (byte offset {exc.start}); save it as UTF-8") from None


def _parse(text: str, path: Path) -> Any:
    """The YAML document in `text`, read safely: no aliases, no duplicate keys, no code."""
    try:
        # Aliases and nesting first, from the event stream, before anything is built: a config
        # needs no alias, and a few hundred bytes of nested aliases expand to billions of values
        # (billion laughs).
        depth = 0
        for event in yaml.parse(text, Loader=_SAFE_LOADER):
            depth += isinstance(event, yaml.CollectionStartEvent) - isinstance(event, yaml.CollectionEndEvent)
            if depth > MAX_DEPTH:
                raise ConfigError(f"config file {path}: nested deeper than {MAX_DEPTH} levels at "
                                  f"{_at(event.start_mark)}; a config nests three")
            if isinstance(event, yaml.AliasEvent):
                raise ConfigError(f"config file {path}: YAML alias *{short(event.anchor, 40)} at "
                                  f"{_at(event.start_mark)}: aliases are not allowed in a config; "
                                  "write the values out")
        return yaml.load(text, Loader=_ConfigLoader)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow; its position counts characters
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise ConfigError(f"config file {path}: not valid YAML at line {line}, column {column}: "
                          f"{exc.reason} (character {exc.character!r})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at {_at(mark)}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"config file {path}: not valid YAML{where}: {cut(problem, 200)}") from None


class NotARegularFile(OSError):
    """A path that names a FIFO, a device, a socket or a folder, where a file was expected."""


_FILE_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def regular_file_problem(mode: int) -> str | None:
    """Why a file of stat mode `mode` is not a regular file ("is a FIFO (named pipe), not a regular file"), or None."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for is_kind, name in _FILE_KINDS if is_kind(mode)), "something else")
    return f"is {kind}, not a regular file"


def read_regular_file(path: str | Path, limit: int) -> bytes:
    """At most `limit` bytes of regular file `path` (all of it if `limit` is -1); NotARegularFile (an OSError)
    for anything else.

    Stat first, then open without blocking and check again what was opened: opening a FIFO
    for reading waits for a writer, and reading a device such as /dev/zero never ends.
    """
    if problem := regular_file_problem(os.stat(path).st_mode):
        raise NotARegularFile(problem)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as file:
        if problem := regular_file_problem(os.fstat(fd).st_mode):  # replaced since the stat
            raise NotARegularFile(problem)
        return file.read(limit)


def read_config_file(path: str | Path) -> dict:
    """The mapping in YAML file `path`, read with the safe loader; ConfigError naming the file otherwise.

    Refused at once, without opening it: anything but a regular file (a FIFO would block
    the open, a device never ends). Refused, each with the line and column: a file over MAX_CONFIG_BYTES
    (before parsing), text that is not UTF-8, a YAML syntax error, an alias,
    a duplicate key, an integer of more than MAX_INT_DIGITS digits, and a
    templated (`__use_yte__`) config. A file that is empty or holds a list or
    a scalar is refused too. The settings themselves are not checked here
    (see `check_config`).
    """
    path = Path(path)
    try:
        data = read_regular_file(path, MAX_CONFIG_BYTES + 1)
    except NotARegularFile as exc:
        raise ConfigError(f"config file {path}: {exc}; a config is a plain file") from None
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {path}: larger than {MAX_CONFIG_BYTES // 1024} KiB; a config is a few "
                          "hundred bytes (is this the right file?)")
    config = _parse(_decode(data, path), path)
    if not isinstance(config, dict):
        got = "is empty" if config is None else f"holds {yaml_kind(config)} ({short(config)}), not a mapping"
        raise ConfigError(f"config file {path}: {got}; it must map settings to values (seed: ..., variance: ...)")
    if "__use_yte__" in config:
        raise ConfigError(f"config file {path}: __use_yte__ is not allowed: Snakemake would evaluate this file "
                          "as a YTE template, running its ?-expressions as Python code; give plain values")
    return config


def yaml_kind(value: Any) -> str:
    """A value's kind in YAML words: a string, a list, a number, ..."""
    names = {bool: "a boolean", str: "a string", list: "a list", dict: "a mapping", float: "a decimal number",
             int: "an integer", type(None): "empty (null)"}
    return names.get(type(value), type(value).__name__)
