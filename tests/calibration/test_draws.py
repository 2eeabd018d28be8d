"""What every arm of a batch makes the same, made once (sdpa_lab.calibration.draws): each arm's batch, reading the
draws, is the bytes it makes drawing them itself."""

from __future__ import annotations

import pytest

from sdpa_lab.calibration import runner
from sdpa_lab.calibration.check_table import check_text
from sdpa_lab.calibration.draws import Drawn, write_draws
from sdpa_lab.calibration.studies import ARMS, check_study, draws_input
from sdpa_lab.config import check_config
from sdpa_lab.experiments import variance
from sdpa_lab.experiments.trial_scores import fits_in_memory

from tests.calibration.sizes import SMALLEST
from tests.calibration.test_calibration import study
from tests.calibration.test_stacked import UNEVEN

pytestmark = pytest.mark.xdist_group("calibration")

# Larger parts than a chunk: the variance's pairs (made alone), and trial scores too many to hold (the entropy's,
# through a scratch file: each arm draws those), beside held ones (the ranking's and the gradient's).
LARGE = check_config({
    "seed": 9,
    "variance": {"d_k": [4, 1], "n_pairs": 300_000},
    "entropy_sweep": {"d_k": [1], "T": 64, "trials": 16_400},
    "ranking_invariance": {"d_k": [1], "T": 8, "trials": 300},
    "forward_shape": {"shapes": [[1, 2, 2]]},
    "gradient": {"d_k": [2], "T": 4, "trials": 500},
    "learning": {"d_k": [2], "T": 2, "runs": 10, "steps": 3},
})


def batch_text(s, arm: str, batch: int, lesson_dir, draws_file=None) -> str:
    runs = runner.batch_cells(s, arm, batch, None, lesson_dir, draws_file=draws_file)
    return "".join(check_text(rows, header=i == 0) for i, rows in enumerate(runs))


@pytest.mark.parametrize("sweep", [SMALLEST, UNEVEN, LARGE], ids=["smallest", "uneven", "large"])
def test_every_arm_reading_the_draws_makes_the_bytes_it_makes_drawing_them(sweep, lesson_dir, tmp_path):
    counts = (2, 1, 2) if sweep is LARGE else (5, 3, 3)  # seeds, broken seeds, batch: LARGE's runs made one by one
    s = check_study(study(*counts, sweep=sweep), "draws")
    assert list(s.draws_batches()) == [0]
    out = tmp_path / "draws0.npz"
    runner.draws_job("draws", s.settings(), 0, out, str(tmp_path / "draws.log"))
    first = runner.run_config(s.sweeps()[0], 0)
    held = Drawn(out).run(0, first).trial_scores
    if sweep is LARGE:  # the entropy's scores are too many to hold: each arm draws them
        assert not fits_in_memory(64, 16_400)
        assert sorted(held) == [f"seed{first['seed']}_T4_trials500_dk2", f"seed{first['seed']}_T8_trials300_dk1"]
    for arm in ARMS:
        mine, own = batch_text(s, arm, 0, lesson_dir, out), batch_text(s, arm, 0, lesson_dir)
        assert mine == own, arm
        assert mine.count("\n") > 20  # every check of each run


def test_the_draws_hold_each_run_s_parts_and_refuse_another_run(tmp_path):
    configs = [runner.run_config(SMALLEST, i) for i in range(3)]
    out = tmp_path / "d.npz"
    assert write_draws(enumerate(configs), out) == 3
    drawn = Drawn(out)
    run = drawn.run(1, configs[1])
    assert run.moments == {d_k: variance.raw_moments(configs[1]["seed"], d_k, 1000) for d_k in (1, 2, 4)}
    assert sorted(run.trial_scores) == sorted(f"seed{configs[1]['seed']}_T2_trials100_dk{d}" for d in (1, 2, 4))
    with pytest.raises(ValueError, match="not of seed"):
        drawn.run(1, configs[2])  # a stale file: another run's draws under this seed index
    with pytest.raises(ValueError, match="no draws of seed index 7"):
        drawn.run(7, runner.run_config(SMALLEST, 7))
    drawn.close()


def test_only_the_batches_the_broken_arms_run_share_their_draws(tmp_path):
    s = check_study(study(seeds=10, broken_seeds=5, batch=2), "x")
    assert list(s.draws_batches()) == [0, 1, 2] and draws_input("x", s, 2) == ["results/calibration/draws/x/batch2.npz"]
    assert draws_input("x", s, 3) == []
    assert list(check_study(study(seeds=10, broken_seeds=0, batch=2), "x").draws_batches()) == []
    with pytest.raises(ValueError, match="batch 3 is not one whose draws the arms share"):
        runner.draws_job("x", s.settings(), 3, tmp_path / "d.npz")
    assert not (tmp_path / "d.npz").exists()


def test_variance_refuses_moments_of_another_number_of_pairs():
    moments = {d_k: variance.raw_moments(3, d_k, 500) for d_k in (1, 2)}
    assert variance.variance_rows(3, [1, 2], 500, moments=moments) == variance.variance_rows(3, [1, 2], 500)
    with pytest.raises(ValueError, match="of 500 scores, not n_pairs 600"):
        variance.variance_rows(3, [1, 2], 600, moments=moments)
