"""Sweep configs drawn at random from the schema: the calibration study over the config space.

Four fixed configs do not show that a tolerance holds "at every config the schema accepts". A
space study (a study file with `space:` instead of `sweep:`) draws its sweeps from the schema
itself (config.schema.yaml, read here, so a new setting or bound is sampled without an edit):
every required setting, each integer and number over its whole range, edges included, each named
choice (a string enum, a boolean) uniformly, each list of every allowed length, then keeps the configs
the cost model (sdpa_lab.workflow_support.cost) puts under a budget of CPU seconds per run (an
experiment the model leaves out keeps its defaults). The draws come from
Python's `random.Random` with the space's seed (the same Mersenne Twister stream on every platform and
version), so the same study file gives the same configs, and the same batches the same bytes.

Standard library, the schema and the cost model only: the Snakefile imports this at parse time.
"""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sdpa_lab.config import ConfigError, build, choices, config_errors, load_schema, resolve
from sdpa_lab.expectation_inputs import EXPECTATION_SETTINGS
from sdpa_lab.workflow_support import cost

# The chance that a bounded setting takes exactly its lower bound, and exactly its upper bound (each): the
# edges are where finite-size corrections and small-sample tails are largest, so they are drawn on purpose.
EDGE = 0.15
# Settings drawn uniformly over their range rather than log-uniformly (a seed has no scale).
UNIFORM = frozenset({"seed"})
# A number with no lower bound of its own (exclusiveMinimum 0) is drawn log-uniformly from here up; its
# edge is the smallest positive float itself.
LOG_FLOOR = 1e-6
# Give up after this many draws of one section: a budget no draw meets is an error, not a hang.
MAX_TRIES_PER_SECTION = 100_000




@dataclass(frozen=True)
class Band:
    """A region of the config space a study samples on purpose, as a stratum of its own: the configs whose
    `section` has T keys and its widest head's d_k from `low` to `high`."""

    section: str
    T: int
    low: int
    high: int
    why: str


# The bands a space study may sample as strata, by name (a study file's space.strata names them). A uniform draw
# from the schema lands in one rarely (here: T = 1024 and the widest d_k within a band of 900 among 65,536).
BANDS = {
    "crossing": Band("gradient", 1024, 2900, 3800,
                     "B7 at T = 1024: theory's scaled minus unscaled Jacobian norm at the widest head crosses 0 "
                     "(negative at d_k = 3400, within its Monte Carlo error of 0 at 3600 and 3800): the lesson's "
                     "sentence goes from false to undecided by theory, and a check there is held to theory's value "
                     "only"),
}


def band_of(config: Mapping) -> str:
    """The name of the first band (BANDS) `config` lies in, "" if none: the stratum a table shows it in, however
    it was drawn."""
    for name, band in BANDS.items():
        section = config.get(band.section, {})
        if section.get("T") == band.T and band.low <= max(section.get("d_k") or [0]) <= band.high:
            return name
    return ""


def into_band(rng: random.Random, band: Band, section: Mapping, most: int) -> dict:
    """`section` (a drawn config section) moved into `band`: T set to the band's, its head sizes below the band kept
    (at most `most` - 1 of them, the list's length limit) and the widest drawn uniformly over the band."""
    below = sorted(d for d in set(section["d_k"]) if d < band.low)[:most - 1]
    return {**section, "T": band.T, "d_k": [*below, rng.randint(band.low, band.high)]}


# CPU seconds of one finite-d_k expectation the claims compare their means with (claims.expectations;
# 0.1-0.17 s each at T = 2 to 64, measured on a loaded machine), per run: a config's expectations are
# computed once for its runs, and a space study makes 3 of each.
EXPECTATION_CPU_S = 0.15 / 3
# About this many expectations are asked per value of each list the claims' expectations are made from (B5's and
# B7's: per d_k of their sections).
EXPECTATIONS_PER_VALUE = 3


def cpu_seconds(config: Mapping) -> float:
    """The cost model's CPU seconds of one in-process run of `config`: every experiment, without the fixed
    part (Snakemake's start-up, the lesson replications, report), which a calibration run does not pay, and
    with the finite-d_k expectations its claims ask for (EXPECTATIONS_PER_VALUE per distinct value of each list
    setting the claims declare them made from: expectation_inputs, the Snakefile's light copy)."""
    c = cost.estimate(config)
    values = sum(len(set(config[section][key])) for section, keys in EXPECTATION_SETTINGS.items() for key in keys
                 if isinstance(config[section][key], list))
    return c.total_cpu_s - c.cpu_s["fixed"] + EXPECTATION_CPU_S * (EXPECTATIONS_PER_VALUE * values)


def _size(rng: random.Random, lo: int, hi: int) -> int:
    """An integer in [lo, hi]: lo or hi with chance EDGE each, else log-uniform over [lo, hi] (lo + 1 if lo is 0)."""
    u = rng.random()
    if u < EDGE or lo == hi:
        return lo
    if u < 2 * EDGE:
        return hi
    a, b = math.log(lo + 1), math.log(hi + 2)  # of value + 1: 0 allowed, and hi reached with its share
    return min(hi, max(lo, int(math.exp(rng.uniform(a, b))) - 1))


def _integer(rng: random.Random, node: Mapping, name: str) -> int:
    lo, hi = node["minimum"], node["maximum"]
    if name in UNIFORM:
        u = rng.random()
        return lo if u < EDGE else hi if u < 2 * EDGE else rng.randint(lo, hi)
    return _size(rng, lo, hi)


def _number(rng: random.Random, node: Mapping) -> float:
    """A float in the node's range: each bound (or, for an exclusive one, the nearest float inside it) with
    chance EDGE, else log-uniform (from LOG_FLOOR if the range starts at 0)."""
    lo = node.get("minimum", node.get("exclusiveMinimum"))
    hi = node.get("maximum", node.get("exclusiveMaximum"))
    low_edge = math.nextafter(lo, math.inf) if "exclusiveMinimum" in node else float(lo)
    high_edge = math.nextafter(hi, -math.inf) if "exclusiveMaximum" in node else float(hi)
    u = rng.random()
    if u < EDGE:
        return low_edge
    if u < 2 * EDGE:
        return high_edge
    a = math.log(max(lo, LOG_FLOOR))
    return min(high_edge, max(low_edge, math.exp(rng.uniform(a, math.log(hi)))))


def _array(rng: random.Random, node: Mapping, item: Callable[[], Any], options: list | None) -> list:
    """A list of entries item() draws, of a length drawn by _size: unique ones if the node asks for that (then
    at most as many as there are `options`, the entries' named choices, when they have them)."""
    most = node["maxItems"]
    if node.get("uniqueItems") and options is not None:
        most = min(most, len(options))
    n = _size(rng, node.get("minItems", 0), most)
    out: list = []
    while len(out) < n:  # n is at most the number of distinct entries: the loop ends
        value = item()
        if not node.get("uniqueItems") or value not in out:
            out.append(value)
    return out


def _is_setting(prop: Mapping) -> bool:
    """Whether a schema property is a setting to draw: it has a default (the others are optional switches no
    experiment reads)."""
    return "default" in prop


def _off(node: Mapping) -> bool:
    """Whether a setting is off unless given (its default null: a grading option no experiment reads): it stays
    off in every drawn config."""
    return "default" in node and node["default"] is None


def _drawn(rng: random.Random, node: Mapping, name: str) -> Any:
    if _off(node):
        return None
    if (options := choices(node)) is not None:
        return rng.choice(options)  # named choices have no order to favour edges of: uniform
    kind = node.get("type")
    if kind == "integer":
        return _integer(rng, node, name)
    if kind == "number":
        return _number(rng, node)
    raise ValueError(f"config schema: cannot draw setting {name!r} of type {kind!r}")


def draw_value(rng: random.Random, node: Mapping, root: Mapping, name: str = "") -> Any:
    """A value the schema node accepts, drawn from `rng`: every setting with a default (those without one are
    optional switches no experiment reads), integers and numbers over their whole range, named choices
    (a string enum, a boolean) uniformly."""
    return build(node, root, lambda leaf, key: _drawn(rng, leaf, key),
                 lambda array, item: _array(rng, array, item, _entry_choices(array, root)), _is_setting, name)


def _entry_choices(array: Mapping, root: Mapping) -> list | None:
    """The named choices a list's entries take (config.choices), or None."""
    return choices(resolve(array["items"], root))


def _lowest(node: Mapping, name: str) -> Any:
    if _off(node):
        return None
    if (options := choices(node)) is not None:
        return options[0]
    kind = node.get("type")
    if kind == "integer":
        return node["minimum"]
    if kind == "number":
        return math.nextafter(node["exclusiveMinimum"], math.inf) if "exclusiveMinimum" in node else node["minimum"]
    raise ValueError(f"config schema: no lowest value of type {kind!r}")


def lowest(node: Mapping, root: Mapping) -> Any:
    """The cheapest value the schema node accepts: every number at its lower edge, every named choice at its
    first, every list at its shortest (of distinct named choices: the first ones)."""
    return build(node, root, _lowest, lambda array, item: _shortest(array, item, _entry_choices(array, root)),
                 _is_setting)


def _shortest(array: Mapping, item: Callable[[], Any], options: list | None) -> list:
    """A list at its shortest: minItems of the lowest entry, or of distinct named choices, the first minItems."""
    if array.get("uniqueItems") and options is not None:
        return options[:array.get("minItems", 0)]
    return [item()] * array.get("minItems", 0)


def defaults(section: Mapping, root: Mapping) -> dict:
    """A section's settings at their defaults (those draw_value draws: every setting with a default)."""
    node = resolve(section, root)
    return {key: copy.deepcopy(prop["default"]) for key, prop in node["properties"].items() if _is_setting(prop)}


def named_choices(rng: random.Random, section: Mapping, root: Mapping) -> dict:
    """A section's settings of named choices, drawn: one choice (a string enum, a boolean) uniformly; a list of
    distinct ones, a random subset no longer than its default (so no costlier than the default's length)."""
    node = resolve(section, root)
    out = {}
    for key, prop in node["properties"].items():
        prop = resolve(prop, root)
        if not _is_setting(prop):
            continue
        if (options := choices(prop)) is not None:
            out[key] = rng.choice(options)
        elif prop.get("type") == "array" and prop.get("uniqueItems") and \
                (options := _entry_choices(prop, root)) is not None:
            longest = max(len(prop["default"]), prop.get("minItems", 0))
            out[key] = rng.sample(options, rng.randint(prop.get("minItems", 0), min(longest, len(options))))
    return out


def draw_config(rng: random.Random, root: Mapping, max_cpu_s: float, band: Band | None = None) -> tuple[dict, int]:
    """A config drawn from the schema `root` whose estimated run is at most `max_cpu_s`, and how many section
    draws were refused on the way.

    A whole config drawn at once is almost never cheap (the sample counts of six sections would all have to
    land low), so the sections are drawn in a random order, the others at their lowest, each redrawn
    until the config so far fits its share of the budget: section i of n within i / n of what the cheapest
    config leaves of it.
    Within a section every setting is still drawn over its whole range; the budget decides which are kept.
    A section of an experiment the cost model does not estimate keeps its sizes at their defaults and draws only
    its named choices. With a `band`, its section is moved into it (into_band) at every draw, the lowest included.
    """
    def pinned(key: str, value: Any) -> Any:
        if band is None or key != band.section:
            return value
        d_k = resolve(resolve(root["properties"][key], root)["properties"]["d_k"], root)
        return into_band(rng, band, value, d_k["maxItems"])

    config = lowest(root, root)
    if band is not None:
        config[band.section] = pinned(band.section, config[band.section])
    # An experiment the cost model leaves out could draw any size within its bounds, whatever the budget:
    # its sizes stay at their defaults; a named choice (which law, which dtype) picks what is computed, not how
    # much, so it is drawn.
    modelled = set(cost.estimate(config).cpu_s)
    kept = [key for key in config if isinstance(config[key], dict) and key not in modelled]
    for key in kept:
        # from a stream of their own, so the other sections are drawn as if this one were not there
        own = random.Random(repr((key, rng.getstate())))
        config[key] = defaults(root["properties"][key], root) | named_choices(own, root["properties"][key], root)
    sections = [key for key in config if isinstance(config[key], dict) and key in modelled]
    assert sections, "config schema: no section to draw"
    floor = cpu_seconds(config)  # what every config costs: the shares are of the rest
    if floor > max_cpu_s:
        raise ConfigError(f"config space: the cheapest config takes {floor:.2g} CPU s per run, over max_cpu_s "
                          f"{max_cpu_s}")
    refused = 0
    for key in config:
        if key not in sections and key not in kept:
            config[key] = draw_value(rng, root["properties"][key], root, key)
    rng.shuffle(sections)  # in turn first and last: each section sometimes has the budget's whole rest
    for i, key in enumerate(sections, start=1):
        for _ in range(MAX_TRIES_PER_SECTION):
            config[key] = pinned(key, draw_value(rng, root["properties"][key], root, key))
            if cpu_seconds(config) <= floor + (max_cpu_s - floor) * i / len(sections):
                break
            refused += 1
        else:
            raise ConfigError(f"config space: no draw of section {key} within {max_cpu_s} CPU s per run in "
                              f"{MAX_TRIES_PER_SECTION} tries; raise max_cpu_s")
    return config, refused


# A stratum of a space study: (band name, configs, max_cpu_s), drawn after the study's main configs.
Stratum = tuple[str, int, float]


@cache
def _draw(seed: int, configs: int, max_cpu_s: float, strata: tuple[Stratum, ...] = ()) -> tuple[tuple[dict, ...], int]:
    # A config's seed is the root of its runs' seeds (seeding.calibration_seed(seed, i)), and the edges make
    # some roots common (0 and 2^64 - 1): two configs with one root would draw the same numbers wherever their
    # settings meet, so their runs would not be independent. A root already taken is drawn again, from a
    # stream of its own (the other settings stay as the main stream draws them).
    roots = random.Random(f"config-space roots {seed}")
    root = load_schema()
    kept: list[dict] = []
    taken: set[int] = set()
    refused = 0
    # the main configs from the seed's stream, each stratum's from one of its own: adding a stratum changes no
    # main config
    for rng, count, budget, band in [(random.Random(seed), configs, max_cpu_s, None),
                                     *((random.Random(f"config-space stratum {name} {seed}"), n, cpu, BANDS[name])
                                       for name, n, cpu in strata)]:
        drawn = 0
        while drawn < count:
            config, n = draw_config(rng, root, budget, band)
            refused += n
            if config_errors(config):  # a limit across settings (T x d_k per trial): drawn again
                refused += 1
                continue
            while config["seed"] in taken:
                config["seed"] = draw_value(roots, root["properties"]["seed"], root, "seed")
            taken.add(config["seed"])
            kept.append(config)
            drawn += 1
    return tuple(kept), refused


def draw_configs(seed: int, configs: int, max_cpu_s: float, strata: Sequence[Stratum] = ()) -> list[dict]:
    """The first `configs` valid configs drawn with `seed` whose estimated run (cpu_seconds) is at most
    `max_cpu_s`, then each stratum's (name, configs, max_cpu_s): that many configs in band BANDS[name] within its
    own budget: the same list for the same arguments (each a fresh copy)."""
    return copy.deepcopy(list(_draw(seed, configs, max_cpu_s, tuple(map(tuple, strata)))[0]))


def draws_refused(seed: int, configs: int, max_cpu_s: float, strata: Sequence[Stratum] = ()) -> int:
    """How many section draws (draw_config) and whole configs (invalid across settings) were refused on the way."""
    return _draw(seed, configs, max_cpu_s, tuple(map(tuple, strata)))[1]
