"""Standard errors the statistical checks use, the run's false-fail budget and each claim's share of it, and the k
that turns a claim's share into its checks' tolerances."""

from __future__ import annotations

import math
from statistics import NormalDist

# A correct pipeline, re-run with fresh seeds, fails some statistical check by chance
# in fewer than one run in 10,000.
ALPHA_FAMILY = 1e-4
# The share of it a claim with statistical checks declares (Claim.alpha), split over that claim's own checks. A
# declared constant, not ALPHA_FAMILY over the number of claims: a claim's k then depends on its own checks alone,
# and adding a claim changes no other claim's k. A tenth leaves room for ten such claims; the declared shares must sum
# to at most ALPHA_FAMILY (the union bound over claims: tests/house), which is what keeps the run's promise.
ALPHA_CLAIM = ALPHA_FAMILY / 10


def bonferroni_k(n_checks: int, alpha_family: float = ALPHA_FAMILY) -> float:
    """Two-sided normal quantile giving each of n_checks a false-alarm rate alpha_family / n_checks: a claim's k,
    its share (Claim.alpha) split over its n_checks statistical checks."""
    if n_checks < 1:
        return float("nan")
    return NormalDist().inv_cdf(1.0 - alpha_family / (2.0 * n_checks))


def variance_se(d: float, n: int) -> float:
    """Standard error of the sample variance of n independent q.k scores of length d, for standard normal
    entries only (Var = d, E S^4 = 3d^2 + 6d). Entries of another law, of variance 1 and fourth moment m4, give
    E S^4 = 3d^2 + d (m4^2 - 3): uniform or +-1 entries need their own standard error."""
    return d * math.sqrt((2.0 + 6.0 / d) / n)


def product_variance_se(d: float, n: int, var: float, m4: float) -> float:
    """Standard error of the sample variance of n scores, each a sum of d independent products of variance `var`
    and central fourth moment `m4`: Var(S) = d var, E (S - ES)^4 = d m4 + 3 d (d - 1) var^2."""
    return math.sqrt((d * m4 + 3 * d * (d - 1) * var**2 - (d * var) ** 2) / n)


def log_std_var(d: int, n: int) -> float:
    """Variance of log(sample std) of n scores: Var(log s^2) / 4 = (2 + 6/d) / (4n) (delta method)."""
    return (2.0 + 6.0 / d) / (4.0 * n)


# --------------------------------------------------------------------------
# The shape of a sample variance's law: at small n it is skewed to the right, so a normal k standard
# errors puts far more than the nominal rate in its upper tail (at d = 2, n = 1000: P(z > 4.67) about
# 2.5e-5 against 1.5e-6). The score S = q.k is a sum of d independent products of two standard normals,
# whose cumulants are 1, 6, 120, 5040 (orders 2, 4, 6, 8; odd ones 0), so S has
#   E S^2 = d, E S^4 = 3d^2 + 6d, E S^6 = 15d^3 + 90d^2 + 120d, E S^8 = 105d^4 + 1260d^3 + 4620d^2 + 5040d,
# and the sample variance, a mean of n values Y = S^2 (to leading order in 1/n), has the skewness and
# excess kurtosis of Y divided by sqrt(n) and by n.

def _score_square_moments(d: float) -> tuple[float, float, float]:
    """Variance, third and fourth central moments of Y = S^2."""
    m4 = 3 * d**2 + 6 * d
    m6 = 15 * d**3 + 90 * d**2 + 120 * d
    m8 = 105 * d**4 + 1260 * d**3 + 4620 * d**2 + 5040 * d
    return m4 - d**2, m6 - 3 * d * m4 + 2 * d**3, m8 - 4 * d * m6 + 6 * d**2 * m4 - 3 * d**4


def variance_skewness(d: float, n: int) -> float:
    """Skewness of the sample variance of n independent scores of length d (5.1 / sqrt(n) at d = 4)."""
    var_y, c3, _ = _score_square_moments(d)
    return c3 / var_y**1.5 / math.sqrt(n)


def variance_excess_kurtosis(d: float, n: int) -> float:
    """Excess kurtosis of the sample variance of n independent scores of length d."""
    var_y, _, c4 = _score_square_moments(d)
    return (c4 / var_y**2 - 3.0) / n


def log_std_skewness(d: float, n: int) -> float:
    """Skewness of log(sample std) of n scores: that of log s^2, skew(s^2) - 3 CV(s^2) (delta method)."""
    return variance_skewness(d, n) - 3.0 * math.sqrt((2.0 + 6.0 / d) / n)


def log_std_excess_kurtosis(d: float, n: int) -> float:
    """Excess kurtosis of log(sample std) of n scores, to order 1/n: with Y = S^2 of variance v, third and
    fourth central moments m3, m4, log(1 + e) of a mean e of n values (Y - d) / d has
    (m4 / v^2 - 3 - 12 m3 / (d v) + 20 v / d^2) / n (the expansion of log to fourth order, cumulant by cumulant).
    At large d it is 4 / n, the log of a chi-square's."""
    var_y, c3, c4 = _score_square_moments(d)
    return (c4 / var_y**2 - 3.0 - 12.0 * c3 / (d * var_y) + 20.0 * var_y / d**2) / n


def log_std_cumulants(d: float, n: int) -> tuple[float, float, float]:
    """Second, third and fourth cumulants of log(sample std) of n scores (a slope's and a ratio's add up)."""
    var = log_std_var(d, n)
    return var, log_std_skewness(d, n) * var**1.5, log_std_excess_kurtosis(d, n) * var**2


def exp_shape(sd: float, skewness: float, excess_kurtosis: float) -> tuple[float, float]:
    """Skewness and excess kurtosis of exp(X) for a nearly normal X of this sd, skewness and excess kurtosis,
    to the same order: skew + 3 sd, and kurtosis + 12 skew sd + 16 sd^2 (the exponential's series, cumulant by
    cumulant)."""
    return skewness + 3.0 * sd, excess_kurtosis + 12.0 * skewness * sd + 16.0 * sd**2


def cornish_fisher(k: float, skewness: float = 0.0, excess_kurtosis: float = 0.0) -> float:
    """Standard errors to allow either side so that a statistic with this skewness and excess kurtosis leaves
    each tail with the normal tail beyond k: the Cornish-Fisher quantiles at +-k, the wider side (k when both
    are 0), and never less than k. The floor matters where the skewness is large (above about 0.7 at k = 5):
    there the expansion's skewness-squared term pulls both quantiles inside k, which no statistic with a long
    tail has; the expansion has stopped being accurate, and k is the least a tolerance may be."""
    def quantile(z: float) -> float:
        return (z + (z * z - 1) * skewness / 6 + (z**3 - 3 * z) * excess_kurtosis / 24
                - (2 * z**3 - 5 * z) * skewness**2 / 36)

    return max(k, quantile(k), -quantile(-k))


# --------------------------------------------------------------------------
# Paired designs: two scales measured on the same trials or runs.

def paired_ratio_se(mean_a: float, mean_b: float, sd_a: float, sd_b: float, sd_diff: float, n: int) -> float:
    """SE of mean_a / mean_b over n trials that give both, by the delta method with their covariance:
    Var(a/b) = (a/b)^2 (Var a / a^2 + Var b / b^2 - 2 Cov(a, b) / (a b)) / n, Cov from the per-trial difference's
    spread: Var(a - b) = Var a + Var b - 2 Cov."""
    cov = (sd_a**2 + sd_b**2 - sd_diff**2) / 2.0
    ratio = mean_a / mean_b
    rel = sd_a**2 / mean_a**2 + sd_b**2 / mean_b**2 - 2.0 * cov / (mean_a * mean_b)
    return abs(ratio) * math.sqrt(max(rel, 0.0) / n)


def paired_proportion_se(only_a: int, only_b: int, n: int) -> float:
    """SE of the difference of two success fractions over the same n runs, from the discordant runs (a succeeds
    and b does not: only_a; the reverse: only_b): Var = ((only_a + only_b) / n - ((only_a - only_b) / n)^2) / n,
    floored at the worst case of a single discordant run (so that no discordance does not read as certainty)."""
    diff = (only_a - only_b) / n
    return math.sqrt(max((only_a + only_b) / n - diff * diff, 1.0 / n) / n)
