"""Deciding copies each check with its tolerance set (deciding._copy): the check dataclasses.replace makes."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import given
from hypothesis import strategies as st

from sdpa_lab.claims import deciding as D
from sdpa_lab.claims.model import Check

FIELDS = [f.name for f in dataclasses.fields(Check)]
numbers = st.floats(allow_nan=True, allow_infinity=True)


@given(st.builds(Check, claim=st.text(max_size=3), check=st.text(max_size=5), parameters=st.text(max_size=5),
                 relation=st.sampled_from(["within", "above", "not below"]), expected=numbers, measured=numbers,
                 basis=st.sampled_from(["statistical", "derived", "exact"]), source=st.text(max_size=5),
                 tolerance=numbers, se=numbers, expected_se=numbers, skewness=numbers, excess_kurtosis=numbers,
                 k_prime=numbers, reach=numbers, literal=st.booleans(), theory_says_false=st.booleans(),
                 premise_not_met=st.booleans(), theory_unclear=st.booleans(), note=st.text(max_size=5),
                 cell=st.none() | st.tuples(st.text(max_size=3))),
       numbers, numbers)
def test_a_check_copied_with_changes_is_the_one_replace_makes(c, tolerance, k_prime):
    mine = D._copy(c, tolerance=tolerance, k_prime=k_prime)
    theirs = dataclasses.replace(c, tolerance=tolerance, k_prime=k_prime)
    for name in FIELDS:  # field by field, nan equal to nan (== on the checks would call nan != nan)
        a, b = getattr(mine, name), getattr(theirs, name)
        assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)), name
    assert type(mine) is Check and mine is not c


def test_every_field_of_a_check_is_an_init_field():
    # _copy passes vars(c) to Check(): that holds only while every field is set by __init__
    assert all(f.init for f in dataclasses.fields(Check))
    c = Check("B1", "x", "p", "within", 1.0, 2.0, "statistical", "s.csv")
    assert set(vars(c)) == set(FIELDS)
