"""The sweep configuration's schema: its defaults filled in, a config checked against it, and the one walk of it.

The one schema is src/sdpa_lab/config.schema.yaml, package data, so the
installed package and the workflow read the same file. Every setting has a
`default` there, so a config names only what it changes: `with_defaults` fills
in the rest (the jsonschema recipe: a validator whose `properties` keyword sets
each missing default), and `config_errors`/`check_config` check the filled-in
config: by the workflow once, when it parses the Snakefile, before any job
(workflow/rules/common.smk, whose `config` then holds the filled-in values), and
by the package's own entry points, with a message that names each bad setting.
`build` is the one walk of the schema (the widest config here, the calibration's drawn configs in
sdpa_lab.calibration.space). Reading a config file safely is sdpa_lab.config_file's; `load_config` does both.
"""

from __future__ import annotations

import copy
import math
import unicodedata
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    import jsonschema

from sdpa_lab.config_file import (
    _SAFE_LOADER,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    ConfigError,
    cut,
    read_config_file,
    short,
    yaml_kind,
)
from sdpa_lab.validation import forward_size_problem, trial_size_problem


def schema_path() -> Path:
    """Where the config schema is on disk."""
    return Path(str(resources.files("sdpa_lab") / "config.schema.yaml"))


@cache
def _schema() -> dict:
    return yaml.load(schema_path().read_text(encoding="utf-8"), Loader=_SAFE_LOADER)


def load_schema() -> dict:
    """The config schema as a dict: a copy of the one read once per process (checking a config reads it two or
    three times; a copy is ten times quicker than parsing the file again), safe to change."""
    return copy.deepcopy(_schema())


def experiment_sections(root: Mapping | None = None) -> list[str]:
    """The experiments' config sections, in the schema's order: each a mapping of settings with a default (an
    optional mapping without one, such as grading_points, is read by no experiment)."""
    root = load_schema() if root is None else root
    return [key for key, spec in root["properties"].items() if spec.get("type") == "object" and "default" in spec]


def _where(path) -> str:
    """A setting's path as a user writes it: entropy_sweep.d_k[2]."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _key(key: Any) -> str:
    """A mapping key as the user wrote it, cut to 40 characters; quoted if it is not plain text
    (a line break or a control character in it would garble the message)."""
    plain = isinstance(key, str) and key.isprintable() and key == key.strip() and key != ""
    return cut(key if plain else repr(key), 40)


def _non_ascii(key: Any) -> str:
    """For a name holding non-ASCII letters (a Cyrillic "е" looks like the Latin "e"), which and where; else ""."""
    if not isinstance(key, str) or key.isascii():
        return ""
    found = [f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')} at character {i + 1}"
             for i, c in enumerate(key) if not c.isascii()]
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return f"; its name is not plain ASCII: {shown}"


def _is_strict_int(checker, instance) -> bool:
    """JSON-schema "integer" without floats such as 2.0 (and, as always, without booleans)."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_finite_number(checker, instance) -> bool:
    """JSON-schema "number" without nan and the infinities, which every bound compares false against."""
    return _is_strict_int(checker, instance) or (isinstance(instance, float) and math.isfinite(instance))


def _is_non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


@cache
def _validator_class() -> type[jsonschema.protocols.Validator]:
    """The schema's rules, except that 16.0 is not an integer (a float d_k or seed
    would reach NumPy, and the CSVs, as a float) and nan, inf and -inf are not numbers
    (a schema bound compares false against nan, so it would pass every bound).

    Built on first use, so importing this module stays light: the workflow
    imports it when it parses the Snakefile.
    """
    import jsonschema

    base = jsonschema.Draft202012Validator

    def within_max_items(keyword):
        """`keyword`'s check, skipped on a list longer than its maxItems (reported once, for its length):
        checking each entry of a huge list, and uniqueItems's pairs of entries, would take minutes."""
        check = base.VALIDATORS[keyword]

        def checked(validator, value, instance, schema):
            if not (validator.is_type(instance, "array") and len(instance) > schema.get("maxItems", math.inf)):
                yield from check(validator, value, instance, schema)

        return checked

    return jsonschema.validators.extend(
        base,
        validators={keyword: within_max_items(keyword) for keyword in ("items", "uniqueItems")},
        type_checker=base.TYPE_CHECKER.redefine_many(
            {"integer": _is_strict_int, "number": _is_finite_number}),
    )


@cache
def _filling_class() -> type[jsonschema.protocols.Validator]:
    """The schema's validator that also sets, in each mapping it checks, every missing setting to the
    schema's `default` for it (a copy), before checking what the mapping holds."""
    import jsonschema

    base = _validator_class()
    check_properties = base.VALIDATORS["properties"]

    def fill(validator, properties, instance, schema):
        if validator.is_type(instance, "object"):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = copy.deepcopy(subschema["default"])
            # In the schema's order, whatever the file's: a rule's params (Snakemake compares their text)
            # do not change with the order a config names its settings in.
            ordered = [*(k for k in properties if k in instance), *(k for k in instance if k not in properties)]
            for key in ordered:
                instance[key] = instance.pop(key)
        yield from check_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(base, validators={"properties": fill})


def with_defaults(config: Any) -> Any:
    """A copy of `config` with every setting it leaves out at the schema's default (a section it leaves
    out whole, too), each mapping in the schema's order. Anything but a mapping, or a config too large
    to check (bulk_problem), comes back as it is, for the check to refuse."""
    if not isinstance(config, dict) or bulk_problem(config):
        return config
    filled = copy.deepcopy(config)
    for _ in _filling_class()(load_schema()).iter_errors(filled):
        pass  # filling only: config_errors reports the problems
    return filled


def resolve(node: Any, root: Mapping) -> dict:
    """Schema `node` with a local $ref ("#/$defs/name") followed; {} for anything but a mapping."""
    ref = node.get("$ref", "") if isinstance(node, dict) else ""
    if ref.startswith("#/"):
        for part in ref[2:].split("/"):
            root = root[part]
        return root
    return node if isinstance(node, dict) else {}


def choices(node: Mapping) -> list | None:
    """The named choices a setting takes: its `enum` of strings, or False and True for a boolean; None for any
    other setting (a number, a list, free text)."""
    if node.get("type") == "boolean":
        return [False, True]
    enum = node.get("enum")
    return list(enum) if enum and all(isinstance(c, str) for c in enum) else None


def build(node: Any, root: Mapping, leaf: Callable[[dict, str], Any], array: Callable[[dict, Callable[[], Any]], list],
          keep: Callable[[dict], bool] | None = None, name: str = "") -> Any:
    """A value of the shape schema `node` describes, the one walk of the schema: a mapping of the settings `keep`
    accepts (all by default), each built in turn; a list made by `array(node, item)`, where item() builds one
    entry; any other setting made by `leaf(node, name)`, name being the setting's (or its list's)."""
    node = resolve(node, root)
    kind = node.get("type")
    if kind == "object":
        return {key: build(prop, root, leaf, array, keep, key) for key, prop in node["properties"].items()
                if keep is None or keep(prop)}
    if kind == "array":
        return array(node, lambda: build(node["items"], root, leaf, array, keep, name))
    return leaf(node, name)


def describe(path, root: dict | None = None) -> str:
    """The schema's description of the setting at `path` (or of its nearest described parent)."""
    root = load_schema() if root is None else root
    node, found = root, ""
    for part in path:
        node = resolve(node, root)
        node = resolve(node.get("items", {}) if isinstance(part, int) else node.get("properties", {}).get(part, {}),
                        root)
        found = node.get("description", found)
    return found


def widest_config(root: dict | None = None) -> dict:
    """Every setting with every list at its longest (maxItems, its entries repeated; a list of distinct named
    choices holds them all) and every number at its maximum (a named choice at its longest, other values at
    their defaults): as many rows as any config the schema accepts makes
    (sdpa_lab.results bounds a CSV's size by it when no config is given). Not a config to run: its lists
    repeat their entries."""
    root = load_schema() if root is None else root
    return build(root, root, _widest, lambda node, item: _longest(node, item, root))


def _widest(node: dict, _: str) -> Any:
    """A leaf at its widest: a number at its maximum, a named choice at its longest, another at its default."""
    options = choices(node)
    if options and isinstance(options[0], str):
        return max(options, key=len)
    return node.get("maximum", node.get("exclusiveMaximum", node.get("default")))


def _longest(node: dict, item: Callable[[], Any], root: Mapping) -> list:
    """A list at its longest: maxItems entries, or, of distinct named choices, every choice (up to maxItems)."""
    options = choices(resolve(node["items"], root))
    if node.get("uniqueItems") and options is not None:
        return options[:node["maxItems"]]
    return [item()] * node["maxItems"]


def _lines(err: jsonschema.ValidationError, root: dict) -> list[str]:
    """One message per problem in `err`: the setting's path, the bad value and what is allowed."""
    path = list(err.absolute_path)
    where = _where(path)
    if err.validator == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return [f"config setting {_where(path + [k])}: missing; required ({describe(path + [k], root)})"
                for k in missing]
    if err.validator == "additionalProperties":
        allowed = sorted(resolve(err.schema, root).get("properties", {}))
        unknown = [k for k in err.instance if k not in allowed]
        return [f"config setting {_where(path + [_key(k)])}: unknown setting "
                f"(a typo?){_non_ascii(k)}; allowed here: {', '.join(allowed)}" for k in unknown]
    if not path and err.validator == "type":
        return [(f"config: the file must be a mapping of settings (seed: ..., variance: ...), "
                 f"got {yaml_kind(err.instance)}: {short(err.instance)}")]
    bound, value = err.validator_value, err.instance
    if err.validator == "type" and _is_non_finite(value):
        msg = f"got {value!r}; must be a finite number"
    elif err.validator == "type":
        expected = {"object": "a mapping", "array": "a list", "integer": "an integer"}.get(bound, bound)
        msg = f"got {short(value)} ({yaml_kind(value)}); expected {expected}"
    elif err.validator == "uniqueItems":
        seen = [v for i, v in enumerate(value) if v in value[:i]]
        msg = f"got {short(value)}, which repeats {short(seen)}; each value must appear once"
    elif err.validator == "enum":
        msg = f"got {short(value)}; must be one of {', '.join(short(choice) for choice in bound)}"
    elif err.validator in ("minimum", "maximum"):
        msg = f"got {short(value)}; must be {'at least' if err.validator == 'minimum' else 'at most'} {bound}"
    elif err.validator in ("minItems", "maxItems"):
        least = "at least" if err.validator == "minItems" else "at most"
        msg = f"got {short(value)} ({len(value)} entries); must have {least} {bound}"
    else:
        msg = f"got {short(value)}: {short(err.message, 120)}"
    allowed = describe(path, root) if path else ""
    return [f"config setting {where}: {msg}" + (f" (allowed: {allowed})" if allowed else "")]


# The most problem lines a message lists (a pasted list of thousands of bad values would drown them).
MAX_ERROR_LINES = 20


# The most values (numbers, strings, lists, mappings) a config may hold, and the longest string:
# the default holds about sixty values. Checked before the schema, whose every error message
# spells out the whole bad value (a --configfile, which Snakemake reads itself, can hold nested
# YAML aliases that spell out as billions of values).
MAX_VALUES = 10_000
MAX_STRING = 1_000


def bulk_problem(config: Any) -> str | None:
    """Why `config` is too large or too deep to check, naming the top-level setting where; or None.

    Walks at most MAX_VALUES values, so its cost is bounded whatever `config` holds.
    """
    count, stack = 0, [((), config)]
    while stack:
        path, node = stack.pop()
        count += 1
        where = f"config setting {_where(path[:1])}" if path else "config"
        if count > MAX_VALUES:
            return (f"{where}: holds more than {MAX_VALUES:,} values (nested YAML aliases?); "
                    "a config holds a few hundred")
        if len(path) > MAX_DEPTH:
            return f"{where}: nested deeper than {MAX_DEPTH} levels; a config nests three"
        if isinstance(node, str) and len(node) > MAX_STRING:
            return f"{where}: holds a string of {len(node):,} characters; at most {MAX_STRING:,}"
        if isinstance(node, dict):
            stack += [((*path, _key(k)), v) for k, v in node.items()]
        elif isinstance(node, list):
            stack += [((*path, i), v) for i, v in enumerate(node)]
    return None


def _largest(value: Any) -> Any:
    """A setting's value, or its largest entry if it is a list (its costliest)."""
    return max(value) if isinstance(value, list) else value


def _trial_size(section: str, settings: Mapping, names: Mapping) -> list[str]:
    """One trial's keys, T of them (names["T"]) of the widest d_k (names["d_k"]), in bounded memory."""
    T, d_k = _largest(settings[names["T"]]), _largest(settings[names["d_k"]])
    if problem := trial_size_problem(T, d_k):
        return [f"config setting {section}.{names['d_k']}: got {d_k} with {names['T']} = {T}: {problem}"]
    return []


def _forward_size(section: str, settings: Mapping, names: Mapping) -> list[str]:
    """Each forward's shape (B, T, d_k) of the list names["shapes"], in bounded memory."""
    key = names["shapes"]
    return [f"config setting {section}.{key}[{i}]: got {short(shape)}: {problem}"
            for i, shape in enumerate(settings[key]) if (problem := forward_size_problem(shape))]


# The limits a schema section may declare in its `x-limits` (each entry: `limit`, one of these, and the section's
# settings it bounds, by role): what several of its values bound together, beyond what the schema says of each.
LIMITS: dict[str, Callable[[str, Mapping, Mapping], list[str]]] = {
    "trial_size": _trial_size,
    "forward_size": _forward_size,
}


def limit_problems(config: Mapping, root: Mapping) -> list[str]:
    """What breaks a limit a section of `root` declares (its `x-limits`), one line each; `config` valid under the
    schema, its settings at their defaults."""
    return [line for section in experiment_sections(root) for limit in root["properties"][section].get("x-limits", ())
            for line in LIMITS[limit["limit"]](section, config[section], limit)]


def config_errors(config: Any) -> list[str]:
    """Every schema violation in `config` (its left-out settings at their defaults), one line each, naming
    the setting, the bad value and what is allowed."""
    if problem := bulk_problem(config):
        return [problem]
    config = with_defaults(config)
    root = load_schema()
    errors = sorted(_validator_class()(root).iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    lines = [line for err in errors for line in _lines(err, root)]
    if len(lines) > MAX_ERROR_LINES:
        lines[MAX_ERROR_LINES - 1:] = [f"... and {len(lines) - MAX_ERROR_LINES + 1} more problems"]
    if not lines:  # beyond the schema: limits that involve several values at once
        lines += limit_problems(config, root)
        from sdpa_lab.grading.limits import grading_problems

        lines += grading_problems(config)
    return lines


def command_line_problems(args: Any) -> list[str]:
    """What Snakemake's reading of `--config KEY=VALUE` arguments (`args`) would hide, one line each: an integer
    of more than MAX_INT_DIGITS digits (as in a config file), which Python does not read as an integer beyond
    4300 digits, so that Snakemake reads it as a float, inf."""
    lines = []
    for arg in args if isinstance(args, list | tuple) else ():
        key, _, value = str(arg).partition("=")
        digits = value.strip().lstrip("+-").replace("_", "")
        if digits.isdigit() and len(digits) > MAX_INT_DIGITS:
            lines.append(f"config setting {_key(key)}: --config {cut(key, 40)}=<an integer of {len(digits):,} "
                         f"digits>: too many digits; at most {MAX_INT_DIGITS} are read (a seed has at most 20)")
    return lines


def check_config(config: Any) -> dict:
    """`config` with its left-out settings at their defaults (with_defaults), if that satisfies the schema;
    otherwise raise ConfigError listing each problem."""
    errors = config_errors(config)
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(errors))
    return with_defaults(config)


def load_config(path: str | Path) -> dict:
    """Read a YAML config with the safe loader and check it; ConfigError naming the problem otherwise."""
    return check_config(read_config_file(path))
