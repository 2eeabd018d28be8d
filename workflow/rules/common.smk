# Config checking and small helpers shared by the rules.

from snakemake.utils import validate

from sdpa_lab.config import ConfigError, config_errors
from sdpa_lab.pipeline import OUTPUTS

# Our own check first: one clear line per bad setting, before any job runs.
_errors = config_errors(config)
if _errors:
    raise ConfigError("invalid configuration:\n  " + "\n  ".join(_errors))
validate(config, schema="../schemas/config.schema.yaml")


def outputs_of(experiment):
    """The named outputs of an experiment rule, as the package declares them."""
    return OUTPUTS[experiment]


def settings_of(experiment):
    """The settings `experiment` reads (the seed and its own section), for its params.

    Snakemake records each job's params and reruns the job when they change, so
    editing a section of config/config.yaml reruns exactly that experiment. The
    lesson replications read no setting.
    """
    if experiment not in config:
        return {}
    return {"seed": config["seed"], experiment: config[experiment]}


def experiment_outputs():
    """Every CSV the experiment rules write."""
    return [path for outs in OUTPUTS.values() for path in outs.values()]


def all_outputs():
    """Every file the default target builds."""
    return experiment_outputs() + ["results/claims.csv"]
