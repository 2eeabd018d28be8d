"""Settings that are named choices (a string enum, a list of them, a boolean): drawn, lowest and widest.

The shipped schema holds none, so these use a schema fragment of their own, shaped as an experiment
letting users pick the entries' laws would declare them.
"""

from __future__ import annotations

import random
from collections import Counter

import jsonschema

from sdpa_lab.calibration import space
from sdpa_lab.config import config_errors, widest_config

LAWS = ["normal", "uniform", "rademacher"]
ROOT = {
    "$defs": {"law": {"type": "string", "enum": LAWS}},
    "type": "object",
    "properties": {
        "seed": {"type": "integer", "minimum": 0, "maximum": 9, "default": 0},
        "toy": {
            "type": "object",
            "default": {},
            "properties": {
                "law": {"$ref": "#/$defs/law", "default": "normal"},
                # More entries allowed than there are distinct laws: a unique list holds at most three.
                "laws": {"type": "array", "minItems": 1, "maxItems": 5, "uniqueItems": True,
                         "items": {"$ref": "#/$defs/law"}, "default": ["normal"]},
                "tags": {"type": "array", "minItems": 2, "maxItems": 4,
                         "items": {"type": "string", "enum": ["a", "bb"]}, "default": ["a", "a"]},
                "centred": {"type": "boolean", "default": True},
                "n": {"type": "integer", "minimum": 1, "maximum": 9, "default": 3},
            },
        },
    },
}


def _valid(config) -> None:
    jsonschema.Draft202012Validator(ROOT).validate(config)


def test_named_choices_are_drawn_uniformly_and_every_draw_is_valid():
    rng = random.Random(11)
    draws = [space.draw_value(rng, ROOT, ROOT) for _ in range(3000)]
    for config in draws:
        _valid(config)
    toys = [d["toy"] for d in draws]
    laws = Counter(t["law"] for t in toys)
    assert set(laws) == set(LAWS)
    for law in LAWS:  # 1/3 each; the binomial's standard deviation is 0.009, so 0.05 is over five of them
        assert abs(laws[law] / len(toys) - 1 / 3) < 0.05, laws
    assert Counter(t["centred"] for t in toys).keys() == {False, True}
    assert {len(t["laws"]) for t in toys} == {1, 2, 3}  # every length a unique list of three laws can have
    assert {law for t in toys for law in t["laws"]} == set(LAWS)
    assert {len(t["tags"]) for t in toys} == {2, 3, 4} and {x for t in toys for x in t["tags"]} == {"a", "bb"}


def test_named_choices_are_drawn_the_same_for_the_same_seed():
    first = [space.draw_value(random.Random(4), ROOT, ROOT) for _ in range(3)]
    again = [space.draw_value(random.Random(4), ROOT, ROOT) for _ in range(3)]
    other = [space.draw_value(random.Random(5), ROOT, ROOT) for _ in range(3)]
    assert first == again != other


def test_lowest_takes_the_first_choice_and_the_shortest_list():
    low = space.lowest(ROOT, ROOT)
    _valid(low)
    assert low == {"seed": 0, "toy": {"law": "normal", "laws": ["normal"], "tags": ["a", "a"], "centred": False,
                                      "n": 1}}


def test_lowest_of_a_unique_list_of_choices_longer_than_one_is_distinct_choices():
    node = {"type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": True, "items": {"enum": LAWS}}
    assert space.lowest(node, node) == ["normal", "uniform"]


def test_widest_holds_every_choice_and_the_longest_name():
    wide = widest_config(ROOT)
    assert wide["toy"]["laws"] == LAWS  # as many as a unique list allows, not maxItems repeated
    assert wide["toy"]["law"] == "rademacher"  # the widest cell
    assert wide["toy"]["tags"] == ["bb"] * 4
    assert wide["toy"]["n"] == 9 and wide["toy"]["centred"] is True  # a number at its maximum, a boolean its default


def test_a_choice_outside_the_list_is_refused_naming_the_setting_and_the_choices():
    (line,) = config_errors({"confirm_long_run": "yes"})
    assert line.startswith("config setting confirm_long_run: got 'yes'; must be one of True, False, 'true', 'false'")
