"""The sweep configuration: loading it safely and checking it against its schema.

The one schema is src/sdpa_lab/config.schema.yaml, package data, so the
installed package and the workflow read the same file. It is checked with
`config_errors`/`check_config`: by the workflow once, when it parses the
Snakefile, before any job (workflow/rules/common.smk), and by the package's own
entry points, with a message that names each bad setting.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    import jsonschema

from sdpa_lab.experiments.registry import SECTIONS
from sdpa_lab.validation import forward_size_problem, trial_size_problem


class ConfigError(ValueError):
    """A configuration value that the schema does not allow."""


# LibYAML's safe loader where PyYAML has it (its wheels do): the same safe loading, a few times
# faster, and every snakemake call, a no-op too, reads the config and the schema.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def schema_path() -> Path:
    """Where the config schema is on disk."""
    return Path(str(resources.files("sdpa_lab") / "config.schema.yaml"))


def load_schema() -> dict:
    """The config schema as a dict."""
    return yaml.load(schema_path().read_text(encoding="utf-8"), Loader=_SAFE_LOADER)


def _where(path) -> str:
    """A setting's path as a user writes it: entropy_sweep.d_k[2]."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _is_strict_int(checker, instance) -> bool:
    """JSON-schema "integer" without floats such as 2.0 (and, as always, without booleans)."""
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _validator_class() -> type[jsonschema.protocols.Validator]:
    """The schema's rules, except that 16.0 is not an integer: a float d_k or seed
    would reach NumPy (and the CSVs) as a float.

    Built on first use, so importing this module stays light: the workflow
    imports it when it parses the Snakefile.
    """
    import jsonschema

    return jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_strict_int),
    )


def _resolve(schema: dict, root: dict) -> dict:
    """`schema` with a local $ref ("#/$defs/name") followed."""
    ref = schema.get("$ref", "") if isinstance(schema, dict) else ""
    if ref.startswith("#/"):
        for part in ref[2:].split("/"):
            root = root[part]
        return root
    return schema if isinstance(schema, dict) else {}


def describe(path, root: dict | None = None) -> str:
    """The schema's description of the setting at `path` (or of its nearest described parent)."""
    root = load_schema() if root is None else root
    node, found = root, ""
    for part in path:
        node = _resolve(node, root)
        node = _resolve(node.get("items", {}) if isinstance(part, int) else node.get("properties", {}).get(part, {}),
                        root)
        found = node.get("description", found)
    return found


def _kind(value: Any) -> str:
    """A value's kind in YAML words: a string, a list, a number, ..."""
    names = {bool: "a boolean", str: "a string", list: "a list", dict: "a mapping", float: "a decimal number",
             int: "an integer", type(None): "empty (null)"}
    return names.get(type(value), type(value).__name__)


def _lines(err: jsonschema.ValidationError, root: dict) -> list[str]:
    """One message per problem in `err`: the setting's path, the bad value and what is allowed."""
    path = list(err.absolute_path)
    where = _where(path)
    if err.validator == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return [f"config setting {_where(path + [k])}: missing; required ({describe(path + [k], root)})"
                for k in missing]
    if err.validator == "additionalProperties":
        allowed = sorted(_resolve(err.schema, root).get("properties", {}))
        unknown = [k for k in err.instance if k not in allowed]
        return [f"config setting {_where(path + [k])}: unknown setting (a typo?); allowed here: {', '.join(allowed)}"
                for k in unknown]
    if not path and err.validator == "type":
        return [f"config: the file must be a mapping of settings (seed: ..., variance: ...), "
                f"got {_kind(err.instance)}: {err.instance!r}"]
    bound, value = err.validator_value, err.instance
    if err.validator == "type":
        expected = {"object": "a mapping", "array": "a list", "integer": "an integer"}.get(bound, bound)
        msg = f"got {value!r} ({_kind(value)}); expected {expected}"
    elif err.validator == "uniqueItems":
        seen = [v for i, v in enumerate(value) if v in value[:i]]
        msg = f"got {value!r}, which repeats {seen!r}; each value must appear once"
    elif err.validator in ("minimum", "maximum"):
        msg = f"got {value!r}; must be {'at least' if err.validator == 'minimum' else 'at most'} {bound}"
    elif err.validator in ("minItems", "maxItems"):
        least = "at least" if err.validator == "minItems" else "at most"
        msg = f"got {value!r} ({len(value)} entries); must have {least} {bound}"
    else:
        msg = f"got {value!r}: {err.message}"
    allowed = describe(path, root) if path else ""
    return [f"config setting {where}: {msg}" + (f" (allowed: {allowed})" if allowed else "")]


def config_errors(config: Any) -> list[str]:
    """Every schema violation in `config`, one line each, naming the setting, the bad value and what is allowed."""
    root = load_schema()
    errors = sorted(_validator_class()(root).iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    lines = [line for err in errors for line in _lines(err, root)]
    if not lines:  # beyond the schema: limits that involve several values at once
        for i, shape in enumerate(config["forward_shape"]["shapes"]):
            if problem := forward_size_problem(shape):
                lines.append(f"config setting forward_shape.shapes[{i}]: got {shape!r}: {problem}")
        for section in (s for s in SECTIONS if {"T", "d_k"} <= config[s].keys()):  # draws T keys per d_k
            T, widest = config[section]["T"], max(config[section]["d_k"])
            if problem := trial_size_problem(T, widest):
                lines.append(f"config setting {section}.d_k: got {widest} with T = {T}: {problem}")
    return lines


def check_config(config: Any) -> dict:
    """Return `config` if it satisfies the schema; otherwise raise ConfigError listing each problem."""
    errors = config_errors(config)
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(errors))
    return config


def read_config_file(path: str | Path) -> dict:
    """The mapping in YAML file `path`, read with the safe loader; ConfigError naming the file otherwise.

    A syntax error is reported with its line and column; a file that is
    empty or holds a list or a scalar is refused. The settings themselves
    are not checked here (see `check_config`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        config = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"config file {path}: not valid YAML{where}: {problem}") from None
    if not isinstance(config, dict):
        got = "is empty" if config is None else f"holds {_kind(config)} ({config!r}), not a mapping"
        raise ConfigError(f"config file {path}: {got}; it must map settings to values (seed: ..., variance: ...)")
    if "__use_yte__" in config:  # Snakemake's loader would evaluate the file's ?-expressions as Python
        raise ConfigError(f"config file {path}: __use_yte__ (a templated config) is not allowed; "
                          "give plain values")
    return config


def load_config(path: str | Path) -> dict:
    """Read a YAML config with the safe loader and check it; ConfigError naming the problem otherwise."""
    return check_config(read_config_file(path))
