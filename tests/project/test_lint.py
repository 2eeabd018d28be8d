"""The linters CI runs, clean on the checkout: ruff on the Python, snakefmt on the Snakemake files and
`snakemake --lint` on the workflow (docs/testing.md, "The house lane")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.house  # the house's invariants (docs/testing.md)

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the linters of the `dev` extra, installed beside this Python

LINTERS = {
    "ruff": ["ruff", "check", "."],
    "snakefmt": ["snakefmt", "--check", "Snakefile", "workflow/"],
    "snakemake --lint": ["snakemake", "--lint"],
}


@pytest.mark.parametrize("command", LINTERS.values(), ids=LINTERS)
def test_the_checkout_is_clean_under_each_linter(command):
    if not (BIN / command[0]).exists():  # CI's test job installs the test extra alone; its lint job runs them
        pytest.skip(f"{command[0]} is not installed: pip install -e '.[dev]'")
    proc = subprocess.run([str(BIN / command[0]), *command[1:]], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
