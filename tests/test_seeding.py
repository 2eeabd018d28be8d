"""Every random stream of the project: keyed, reproducible, and refusing bad keys by name."""

from __future__ import annotations

import binascii

import numpy as np
import pytest

from sdpa_lab import seeding


def test_experiment_key_is_crc32_of_the_utf8_name():
    for name in ("variance", "learning", "trial_scores", "entropy_sweep_ü"):
        assert seeding.experiment_key(name) == binascii.crc32(name.encode("utf-8"))


@pytest.mark.parametrize("seed, params", [(0, ()), (7, (0,)), (12345, (64, 0, 3)), (np.int64(5), (np.int32(2),))])
def test_stream_is_sfc64_seeded_by_seed_and_key(seed, params):
    """The streams are part of the results: the same arguments must keep giving the same draws."""
    expected = np.random.Generator(np.random.SFC64(np.random.SeedSequence(
        int(seed), spawn_key=(binascii.crc32(b"variance"), *map(int, params)))))
    got = seeding.stream(seed, "variance", *params)
    assert isinstance(got.bit_generator, np.random.SFC64)
    np.testing.assert_array_equal(got.standard_normal(5), expected.standard_normal(5))


def test_streams_differ_by_seed_experiment_and_params():
    draws = [seeding.stream(*args).integers(2**62, size=4).tolist()
             for args in ((1, "a"), (2, "a"), (1, "b"), (1, "a", 0), (1, "a", 1), (1, "a", 0, 0))]
    assert len({tuple(d) for d in draws}) == len(draws)


@pytest.mark.parametrize("seed", [-1, 1.5, 2.0, "3", None, True, False, np.float64(4.0)])
def test_stream_refuses_a_bad_seed_by_name(seed):
    with pytest.raises(ValueError, match=r"^seed must be a non-negative integer, got "):
        seeding.stream(seed, "variance")


@pytest.mark.parametrize("params", [(-1,), (3, -2)])
def test_stream_refuses_negative_params_by_name(params):
    with pytest.raises(ValueError, match=r"^stream parameters must be non-negative integers, got \("):
        seeding.stream(1, "variance", *params)


def test_lesson_streams_are_the_lessons_seed_42():
    assert seeding.LESSON_SEED == 42
    np.testing.assert_array_equal(seeding.lesson_legacy_stream().randn(6), np.random.RandomState(42).randn(6))
    np.testing.assert_array_equal(seeding.lesson_default_rng().standard_normal(6),
                                  np.random.default_rng(42).standard_normal(6))


@pytest.mark.parametrize("seed, index", [(0, 0), (20241129, 7), (5, np.int64(3)), (2**63, 2**40)])
def test_calibration_seed_is_the_64_bit_state_of_its_keyed_seed_sequence(seed, index):
    """A calibration study's run `index` is seeded from (seed, "calibration", index), as every stream is keyed."""
    expected = np.random.SeedSequence(int(seed), spawn_key=(binascii.crc32(b"calibration"), int(index)))
    got = seeding.calibration_seed(seed, index)
    assert type(got) is int and got == int(expected.generate_state(1, dtype=np.uint64)[0])
    assert got != seeding.calibration_seed(seed, index + 1)


@pytest.mark.parametrize("index", [-1, True, 1.0, "1", None])
def test_calibration_seed_refuses_a_bad_index_by_name(index):
    with pytest.raises(ValueError, match=r"calibration run index must be a non-negative integer, got "):
        seeding.calibration_seed(1, index)
