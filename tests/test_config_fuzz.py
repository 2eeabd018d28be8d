"""Fuzzing the default config (issue 15): every mutation -- of a type, a size, a nesting, a non-finite
number, an unknown key, a huge value -- is either accepted and valid by the schema, or refused within a
second by a ConfigError that names the setting; and a few refused ones stop `snakemake -n` before any
job, leaving results/ as it was."""

from __future__ import annotations

import copy
import hashlib
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdpa_lab.config import ConfigError, check_config, load_schema, read_config_file

from tests.conftest import REPO
from tests.test_hostile_input import billion_laughs

DEFAULT = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def paths(node, prefix=()) -> list[tuple]:
    """Every setting's path in `node`, containers included: ("variance",), ("variance", "d_k", 0), ..."""
    out = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, child in items:
        out.append((*prefix, key))
        out += paths(child, (*prefix, key))
    return out


PATHS = paths(DEFAULT)
SECTIONS = [(key,) for key, value in DEFAULT.items() if isinstance(value, dict)]

HUGE = [10**9, 10**12, 2**63, 2**64, 2**64 + 1, -(2**64), 10**30, 1e300, 1.7976931348623157e308, 5e-324]
leaves = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),  # nan, inf, -inf, subnormals, -0.0 included
    st.sampled_from(HUGE),
    st.booleans(),
    st.none(),
    st.text(max_size=20),
    st.text(min_size=500, max_size=2000),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(st.lists(inner, max_size=80), st.dictionaries(st.text(max_size=12), inner, max_size=6)),
    max_leaves=200,
)
mutations = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(PATHS), values),
    st.tuples(st.just("delete"), st.sampled_from(PATHS), st.none()),
    st.tuples(st.just("add"), st.sampled_from([(), *SECTIONS]), st.tuples(st.text(min_size=1, max_size=30), values)),
    st.tuples(st.just("wrap"), st.sampled_from(PATHS), st.sampled_from(["list", "dict", "deep"])),
)


def where(path) -> str:
    """A path as the messages print it: learning.learning_rates[1] (a key that is not plain text quoted)."""
    out = ""
    for part in path:
        if isinstance(part, str) and not (part.isprintable() and part == part.strip() and part):
            part = repr(part)
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def mutate(config: dict, mutation) -> tuple:
    """Apply `mutation` to `config` in place; return the path of the setting it touched."""
    kind, path, arg = mutation
    parent = config
    for key in path[:-1]:
        parent = parent[key]
    if kind == "add":
        key, value = arg
        node = config
        for part in path:
            node = node[part]
        node[key] = value
        return (*path, key)
    if kind == "delete":
        del parent[path[-1]]
    elif kind == "set":
        parent[path[-1]] = arg
    else:
        value = parent[path[-1]]
        parent[path[-1]] = {"list": [value], "dict": {"value": value}, "deep": [[[[[[value]]]]]]}[arg]
    return path


def finite(node) -> bool:
    if isinstance(node, float):
        return math.isfinite(node)
    if isinstance(node, dict):
        return all(finite(v) for v in node.values())
    if isinstance(node, list):
        return all(finite(v) for v in node)
    return True


PLAIN_SCHEMA = jsonschema.Draft202012Validator(load_schema())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutation=mutations)
def test_a_mutated_config_is_valid_or_refused_naming_the_setting(tmp_path_factory, mutation):
    config = copy.deepcopy(DEFAULT)
    touched = mutate(config, mutation)
    path = tmp_path_factory.mktemp("fuzz") / "config.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    start = time.process_time()
    try:
        accepted = check_config(read_config_file(path))
    except ConfigError as exc:
        message = str(exc)
        assert time.process_time() - start < 1, mutation  # the bound issue 15 asks for
        assert all(len(line) < 600 for line in message.splitlines()), message[:2000]
        if message.startswith(f"config file {path}: larger than"):
            return  # refused before parsing: the whole file is the problem
        lines = [line.strip() for line in message.splitlines()[1:]]
        named = [line for line in lines if line.startswith(f"config setting {where(touched[:1])[:30]}")]
        assert named, (mutation, message)  # the section or setting touched (or, for T, its d_k limit)
        return
    assert time.process_time() - start < 1, mutation
    assert PLAIN_SCHEMA.is_valid(accepted) and finite(accepted), mutation


# ---- a few, through Snakemake itself -------------------------------------------------------------

SNAKEMAKE_CASES = [  # each costs a Snakemake start: a few
    ("nan threshold", ("set", ("learning", "loss_threshold"), float("nan")), "learning.loss_threshold",
     "config/config.yaml"),
    ("nan threshold", ("set", ("learning", "loss_threshold"), float("nan")), "learning.loss_threshold",
     "--configfile"),
    ("huge list", ("set", ("learning", "learning_rates"), list(range(1, 5000)) + ["x"]), "learning.learning_rates",
     "--configfile"),
    ("deep", ("wrap", ("entropy_sweep", "T"), "deep"), "entropy_sweep.T", "config/config.yaml"),
    ("unknown key", ("add", ("gradient",), ("trails", float("inf"))), "gradient.trails", "--configfile"),
]


def workdir(dest: Path) -> Path:
    """A copy of the workflow with a results/ folder to watch."""
    dest.mkdir()
    shutil.copy(REPO / "Snakefile", dest / "Snakefile")
    for folder in ("workflow", "profiles", "config"):
        shutil.copytree(REPO / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "results").mkdir()
    (dest / "results" / "variance.csv").write_text("seed,d_k\n1,4\n")
    return dest


def tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.pipeline
@pytest.mark.parametrize("mutation, setting, how", [c[1:] for c in SNAKEMAKE_CASES],
                         ids=[f"{c[0]}, {c[3]}" for c in SNAKEMAKE_CASES])
def test_snakemake_refuses_a_mutated_config_before_any_job(tmp_path, mutation, setting, how):
    work = workdir(tmp_path / "work")
    config = copy.deepcopy(DEFAULT)
    mutate(config, mutation)
    text = yaml.safe_dump(config)
    if how == "--configfile":
        (work / "other.yaml").write_text(text)
        extra = ["--configfile", "other.yaml"]
    else:
        (work / "config" / "config.yaml").write_text(text)
        extra = []
    before = tree(work / "results")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", *extra], cwd=work,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr  # under -n, Snakemake prints the error on stdout
    assert f"config setting {setting}" in said, said[-3000:]
    assert tree(work / "results") == before


@pytest.mark.pipeline
def test_snakemake_refuses_an_alias_bomb_configfile_before_any_job(tmp_path):
    # Snakemake reads a --configfile itself (aliases and all); the workflow's check must not spell it out.
    work = workdir(tmp_path / "work")
    bomb = billion_laughs().replace("seed: *a9", "seed: 7\nvariance: {d_k: *a9, n_pairs: 2000}")
    (work / "bomb.yaml").write_text(bomb)
    before = tree(work / "results")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", "bomb.yaml"],
                          cwd=work, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert "config setting variance: holds more than 10,000 values" in said, said[-3000:]
    assert tree(work / "results") == before
