"""CONTRIBUTING.md's toy experiment as a maintainer copies it: its module parses and its rule passes the
formatter CI checks the workflow with, so following the guide literally needs no other edit."""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

GUIDE = (REPO / "CONTRIBUTING.md").read_text()


def block(language: str, holding: str) -> str:
    """The guide's one ```language code block that holds `holding`."""
    (found,) = [b for b in re.findall(rf"```{language}\n(.*?)```", GUIDE, re.S) if holding in b]
    return found


def test_the_toy_rule_passes_snakefmt_as_ci_runs_it():
    pytest.importorskip("snakefmt")  # the dev extra, which CI installs
    rule = block("snakemake", "rule temperature:")
    proc = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "-"], input=rule, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_toy_module_parses():
    ast.parse(block("python", "def temperature_tables("))
