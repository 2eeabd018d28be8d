"""The sweep configuration: loading it safely and checking it against its schema.

The one schema lives in workflow/schemas/config.schema.yaml (shipped inside
the package as config.schema.yaml); Snakemake checks it with
snakemake.utils.validate before any job, and the package's own entry points
check it with `check_config`, with the same rules and a message that names
the bad setting.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml


class ConfigError(ValueError):
    """A configuration value that the schema does not allow."""


def schema_path() -> Path:
    """Where the config schema is on disk."""
    return Path(str(resources.files("sdpa_lab") / "config.schema.yaml"))


def load_schema() -> dict:
    """The config schema as a dict."""
    return yaml.safe_load(schema_path().read_text(encoding="utf-8"))


def _where(error: jsonschema.ValidationError) -> str:
    """A setting's path as a user writes it: entropy_sweep.d_k[2]."""
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def config_errors(config: Any) -> list[str]:
    """Every schema violation in `config`, one line each, naming the setting."""
    validator = jsonschema.Draft202012Validator(load_schema())
    lines = []
    for err in sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path]):
        if err.validator == "additionalProperties":
            msg = f"{err.message} (unknown setting: check its spelling)"
        elif err.validator == "uniqueItems":
            msg = f"{err.instance!r} has duplicate values; each must appear once"
        else:
            msg = err.message
            desc = err.schema.get("description") if isinstance(err.schema, dict) else None
            if desc:
                msg += f" (expected: {desc})"
        lines.append(f"config setting {_where(err)}: {msg}")
    return lines


def check_config(config: Any) -> dict:
    """Return `config` if it satisfies the schema; otherwise raise ConfigError listing each problem."""
    errors = config_errors(config)
    if errors:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(errors))
    return config


def load_config(path: str | Path) -> dict:
    """Read a YAML config with the safe loader and check it."""
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    return check_config(config)
