"""The sources: no config value reaches a YAML loader that builds objects, or a shell."""

from __future__ import annotations

import re

import yaml

from sdpa_lab import config_file

from tests.conftest import REPO


def test_yaml_is_read_safely_and_rules_run_no_shell():
    sources = [REPO / "Snakefile", *REPO.glob("workflow/**/*.smk"), *REPO.glob("workflow/**/*.py"),
               *REPO.glob("src/**/*.py")]
    # yaml.load only with the config module's safe loaders (LibYAML's CSafeLoader, or SafeLoader, and
    # the config files' loader built on it, which only adds refusals).
    unsafe_yaml = re.compile(r"yaml\.(unsafe_load|full_load|load_all)\(|"
                             r"yaml\.load\((?![^\n]*Loader=(_SAFE_LOADER|_ConfigLoader)\))|Loader=yaml\.(Full|Unsafe)?Loader")
    assert config_file._SAFE_LOADER in (yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert config_file._ConfigLoader.__bases__ == (config_file._SAFE_LOADER,)
    assert not issubclass(config_file._ConfigLoader, yaml.constructor.FullConstructor)
    shell = re.compile(r"^\s*(shell|run)\s*:|os\.system\(|shell\s*=\s*True|os\.popen\(", re.M)
    for path in sources:
        text = path.read_text(encoding="utf-8")
        assert not unsafe_yaml.search(text), f"{path}: YAML must be read with yaml.safe_load"
        assert not shell.search(text), f"{path}: rules use script:, nothing runs a shell"
    # every rule that runs something runs a script (a target rule, inputs only, runs nothing)
    rules = "".join(p.read_text() for p in REPO.glob("workflow/rules/*.smk"))
    blocks = re.split(r"^(?=(?:rule|checkpoint)\b)", rules, flags=re.M)[1:]
    actions = {block.split(":", 1)[0]: re.findall(r"^\s+(script|shell|run|wrapper|notebook|cwl|template_engine):",
                                                  block, re.M) for block in blocks}
    assert actions and all(found in ([], ["script"]) for found in actions.values()), actions
    assert sum(found == ["script"] for found in actions.values()) > len(actions) / 2
