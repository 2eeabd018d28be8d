"""Expected values at finite d_k that theory gives only as a one-dimensional average.

Given the query q, the scaled scores K q / sqrt(d_k) of T keys K ~ N(0, I) are exactly
r u with u = K q / |q| ~ N(0, I_T) (unit-variance scores, independent of |q|) and
r = |q| / sqrt(d_k), |q|^2 ~ chi^2_{d_k}. So for a statistic h of the softmax weights,

    E h(softmax(K q / sqrt(d_k))) - E h(softmax(u)) = E_u [ E_r h(softmax(r u)) - h(softmax(u)) ],

which is not 0 at finite d_k (about -0.028 / d_k for the Jacobian norm at T = 8): r
scatters around 1 with variance about 1 / (2 d_k). The inner average over r is a Gauss
rule for |q|^2 / 2 ~ Gamma(d_k / 2) (generalized Laguerre nodes, Golub-Welsch); the outer
one over u is a seeded Monte Carlo average with antithetic pairs (u, -u), whose standard
error the checks add to their own (the unscaled Jacobian norm's each draw averaged exactly
over its top score: claims.top_score). The rule, theory's softmax and the draws: claims.softmax_draws,
independent of the attention code the experiments run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from functools import lru_cache

import numpy as np

from sdpa_lab.claims.entropy_expectations import one_draw_falls, over_d_k_entropy
from sdpa_lab.claims.gradient_expectation import gradient_ratio
from sdpa_lab.claims.softmax_draws import (
    DRAW_ELEMENTS,
    LOG_FLOOR,
    STATISTICS,
    _draws,
    _mean_se,
    _pair_mean,
    _pair_means,
    gamma_rule,
    softmax_statistic,
)
from sdpa_lab.experiments.sizes import EXERCISE2_D_K, EXERCISE2_T

# What `expectation` gives: E h of the scaled or of the unscaled softmax, or E h(scaled) - E h(unit-variance).
KINDS = ("scaled", "unscaled", "scaled_minus_unit_variance")

# What `law` gives the shape of besides: the scaled minus the unscaled statistic on the same trial (B7's widest head).
LAW_KINDS = (*KINDS, "scaled_minus_unscaled")

# What `expectation` gives besides, each from a module of its own built on this one's rule and draws: the mean
# entropy under 1/d_k and its difference from the scaled one's on the same trial (B8; claims.entropy_expectations),
# the chance that Exercise 2 as written falls at every step (B5; there too, at d_k and T the exercise's own: the last
# of sizes.EXERCISE2_D_K, sizes.EXERCISE2_T), and the unscaled over the scaled mean gradient at the scores (B7;
# claims.gradient_expectation).
OVER_D_K, OVER_D_K_GAP, ONE_DRAW_FALLS = "inv_dk", "inv_dk_minus_scaled", "one_draw_falls"
GRADIENT_RATIO = "unscaled_over_scaled"
OTHER_KINDS = {OVER_D_K: "entropy", OVER_D_K_GAP: "entropy", ONE_DRAW_FALLS: "entropy",
               GRADIENT_RATIO: "score_grad_norm"}  # kind -> the statistic it is of


# Blocks of draws (each of DRAW_ELEMENTS) for E h(softmax(u)) of unit-variance scores u ~ N(0, I_T), which does not
# depend on d_k: computed once per T, one evaluation a block (no Gauss rule over |q|). The scaled softmax's mean is
# taken as this plus the scaled minus unit-variance gap of the same draws (a control variate: the gap's Monte Carlo
# noise mostly cancels), so its Monte Carlo error is a small part of its check's SE, at less cost than averaging
# the scaled statistic itself over more draws per d_k.
UNIT_BLOCKS = 64


def _raw_moments(w: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per antithetic pair of draws, the Gauss rule's E_r X^m for m = 1..4 of values X (nodes, 2 pairs) at the
    nodes of weights w (nodes,): (4, pairs)."""
    return np.stack([_pair_means(w @ values**m) for m in range(1, 5)])


# Pairs of draws at most for the unscaled Jacobian norm, averaged over its top score (claims.top_score): each draw
# carries the integral over the top score's law, so fewer draws than the plain average's reach a smaller SE.
TOP_PAIRS = 1024


# The kinds whose law (law) a caller may ask for: expectation makes every one's moments, `expectations` only those
# its keys ask for (the raw moments of a trial's statistic are a third of an expectation's CPU; the means do not
# depend on them).
LAWS = ("scaled", "scaled_minus_unit_variance", "unscaled")


@lru_cache(maxsize=256)
def _unscaled_draws(name: str, d_k: int, T: int, laws: tuple[str, ...] = LAWS) -> tuple:
    """The mean and SE of the unscaled statistic averaged over the Gauss rule on one block of draws, and the raw
    moments of one trial's statistic per pair of its draws (law; None unless "unscaled" is in `laws`, but for the
    Jacobian norm, whose mean is their first). The Jacobian norm's each draw averaged exactly
    over its top score (claims.top_score): at a saturated softmax its plain average is the noise of near-ties."""
    x, w = gamma_rule(d_k / 2.0)
    c = np.sqrt(2.0 * x)  # (nodes,) values of |q|
    if name == "jacobian_norm":
        from sdpa_lab.claims.top_score import conditional_norm_moments

        raw = np.einsum("j,kjm->km", w, conditional_norm_moments(_draws(name, d_k, T, 1, TOP_PAIRS), c))
        pairs = np.stack([_pair_means(r) for r in raw])
        return _mean_se(pairs[0]), pairs
    u = _draws(name, d_k, T, 1)
    values = [softmax_statistic(name, cj * u) for cj in c]
    mean = _pair_means(sum(wj * v for wj, v in zip(w, values, strict=True)))
    return _mean_se(mean), _raw_moments(w, np.stack(values)) if "unscaled" in laws else None


@lru_cache(maxsize=64)
def unit_variance_mean(name: str, T: int) -> tuple[float, float]:
    """E h(softmax(u)) for unit-variance scores u ~ N(0, I_T), and its Monte Carlo SE: UNIT_BLOCKS blocks of draws of
    their own (d_k 0 in their key: they depend on T only)."""
    means = [_pair_means(softmax_statistic(name, _draws(name, 0, T, 3, block=block))) for block in range(UNIT_BLOCKS)]
    return _mean_se(np.concatenate(means))


def unit_variance_asked(keys: Iterable[tuple[str, str, int, int]]) -> set[tuple[str, int]]:
    """The (statistic, T) whose unit-variance mean (unit_variance_mean) the expectations `keys` are built on: the
    scaled means', and the entropy's under 1/d_k less the scaled one's (claims.entropy_expectations)."""
    return {(name, T) for kind, name, _, T in keys if kind in ("scaled", OVER_D_K_GAP)}


def mean_statistic(name: str, d_k: int, T: int, scaled: bool, laws: tuple[str, ...] = LAWS,
                   unit_means: Mapping | None = None) -> tuple[float, float]:
    """E h(softmax(K q)) (unscaled) or E h(softmax(K q / sqrt(d_k))) (scaled) at head size d_k over T keys,
    and its Monte Carlo standard error: K q = |q| u, |q|^2 = 2x with x ~ Gamma(d_k / 2). The scaled one as the
    unit-variance mean plus the scaled minus unit-variance gap (UNIT_BLOCKS: independent draws, SEs in quadrature).
    `laws`: the kinds whose law's moments to make on the same draws (LAWS), for law. `unit_means`: unit_variance_mean
    of (statistic, T) as computed elsewhere (a space study's, once for all its batches); those not there computed."""
    if not scaled:
        return _unscaled_draws(name, d_k, T, laws)[0]
    given = unit_means is not None and (name, T) in unit_means
    (gap, gap_se), (unit, unit_se) = (_gap_draws(name, d_k, T, laws)[0],
                                      unit_means[name, T] if given else unit_variance_mean(name, T))
    return gap + unit, float(np.hypot(gap_se, unit_se))


@lru_cache(maxsize=256)
def _gap_draws(name: str, d_k: int, T: int, laws: tuple[str, ...] = LAWS) -> tuple[tuple[float, float], ...]:
    """scaled_minus_unit_variance's mean and SE; the raw moments of one trial's difference per pair of its draws, and
    those of one trial's scaled statistic on the same draws (law), each None unless its kind is in `laws`."""
    x, w = gamma_rule(d_k / 2.0)
    r = np.sqrt(2.0 * x / d_k)  # (nodes,) values of |q| / sqrt(d_k)
    u = _draws(name, d_k, T, 0)
    at_one = softmax_statistic(name, u)  # (2 pairs,)
    values = np.stack([softmax_statistic(name, rj * u) for rj in r])  # (nodes, 2 pairs): the scaled statistic
    mixed = sum(wj * v for wj, v in zip(w, values, strict=True))  # (2 pairs,), summed node by node
    return (_pair_mean(mixed - at_one),
            _raw_moments(w, values - at_one) if "scaled_minus_unit_variance" in laws else None,
            _raw_moments(w, values) if "scaled" in laws else None)


def scaled_minus_unit_variance(name: str, d_k: int, T: int) -> tuple[float, float]:
    """E h(scaled) - E h(unit-variance) at head size d_k over T keys, and its Monte Carlo standard error."""
    return _gap_draws(name, d_k, T)[0]


# Draws for the law of the scaled minus the unscaled statistic of one trial: plain Monte Carlo of (|q|, u), no Gauss
# rule over |q| (for its shape only: the checks' expected value is the difference of the two expectations). Its sd's
# relative Monte Carlo error is about sqrt((excess kurtosis + 2) / (4 PAIRED_DRAWS)): 0.7% at excess kurtosis 17 (log10
# norm, d_k 4, T 8), up to 2% in the schema's most heavy-tailed corners (kurtosis 50-60: log10 norm at d_k 2-4 over
# 64 keys, the norm at d_k 65,536): the check's SE, hence its tolerance, is known to that.
PAIRED_DRAWS = 1 << 16

# The Jacobian norm and its log10, whose scaled minus unscaled law `law` gives (from the same draws).
PAIRED_STATISTICS = ("jacobian_norm", "log10_jacobian_norm")


@lru_cache(maxsize=64)
def _paired_draws(d_k: int, T: int) -> dict[str, np.ndarray]:
    """Per draw, the raw moments X, X^2, X^3, X^4 (4, PAIRED_DRAWS) of one trial's scaled minus unscaled Jacobian
    norm and of its log10 (PAIRED_STATISTICS, the same draws), on the same scores s = K q = |q| u: the statistic
    of s / sqrt(d_k) less that of s, |q|^2 ~ chi^2_{d_k}, u ~ N(0, I_T), in blocks of DRAW_ELEMENTS."""
    rng = np.random.default_rng([d_k, T, STATISTICS.index("jacobian_norm"), 4])
    per_block = max(1, DRAW_ELEMENTS // T)
    norms = []
    for start in range(0, PAIRED_DRAWS, per_block):
        n = min(per_block, PAIRED_DRAWS - start)
        s = np.sqrt(rng.chisquare(d_k, (n, 1))) * rng.standard_normal((n, T))
        norms.append([softmax_statistic("jacobian_norm", s / np.sqrt(d_k)), softmax_statistic("jacobian_norm", s)])
    scaled, unscaled = np.concatenate(norms, axis=1)
    floored = (np.log10(np.maximum(x, LOG_FLOOR)) for x in (scaled, unscaled))  # as softmax_statistic's log10
    diffs = dict(zip(PAIRED_STATISTICS, (scaled - unscaled, np.subtract(*floored)), strict=True))
    return {name: np.stack([x**m for m in range(1, 5)]) for name, x in diffs.items()}


# What `law` gives of a trial's statistic (LAW_KINDS): its standard deviation, skewness
# and excess kurtosis, for the exact law of a mean of many trials (its SE sd / sqrt(n), its skewness skewness /
# sqrt(n), its excess kurtosis excess_kurtosis / n).
SHAPES = ("sd", "skewness", "excess_kurtosis")

# Groups of the draws' pairs whose shapes' spread gives a shape's Monte Carlo SE.
SHAPE_GROUPS = 4


def _shape(raw: np.ndarray) -> np.ndarray:
    """sd, skewness and excess kurtosis (3,) from the raw moments E X, E X^2, E X^3, E X^4 (4,)."""
    m1, m2, m3, m4 = raw
    var = m2 - m1**2
    c3 = m3 - 3 * m1 * m2 + 2 * m1**3
    c4 = m4 - 4 * m1 * m3 + 6 * m1**2 * m2 - 3 * m1**4
    return np.array([np.sqrt(var), c3 / var**1.5, c4 / var**2 - 3.0])


@lru_cache(maxsize=256)
def law(kind: str, name: str, d_k: int, T: int, laws: tuple[str, ...] = LAWS) -> tuple[tuple[float, float], ...]:
    """The sd, skewness and excess kurtosis (SHAPES) of one trial's statistic `name` of the scaled or the unscaled
    softmax (kinds "scaled", "unscaled") or of the scaled minus the unit-variance or the unscaled softmax on the same
    trial (kinds "scaled_minus_unit_variance", "scaled_minus_unscaled"), each with its Monte Carlo SE: ((value, se),
    ...) in SHAPES order. From the same draws and Gauss rule as the expectation itself: the unscaled one's
    (mean_statistic), and for the scaled and the unit-variance difference those of the scaled minus unit-variance
    gap, which the scaled mean is built on; the scaled minus unscaled (PAIRED_STATISTICS only) from plain draws of
    its own (_paired_draws). `laws` (holding `kind` if it is one of LAWS): the kinds whose moments those draws are to
    give (mean_statistic)."""
    if kind not in LAW_KINDS or (kind == "scaled_minus_unscaled" and name not in PAIRED_STATISTICS):
        raise ValueError(f"unknown law {kind!r} of {name!r}; expected one of {LAW_KINDS} (the last of "
                         f"{PAIRED_STATISTICS} only)")
    if kind in LAWS and kind not in laws:  # a kind's moments the draws were made without
        raise ValueError(f"law of {kind!r} asked of draws made for the laws of {laws}")
    moments = (_unscaled_draws(name, d_k, T, laws)[1] if kind == "unscaled"
               else _paired_draws(d_k, T)[name] if kind == "scaled_minus_unscaled"
               else _gap_draws(name, d_k, T, laws)[2 if kind == "scaled" else 1])  # (4, P)
    groups = np.array([_shape(g.mean(axis=1)) for g in np.array_split(moments, SHAPE_GROUPS, axis=1)])
    value, se = _shape(moments.mean(axis=1)), groups.std(axis=0, ddof=1) / np.sqrt(SHAPE_GROUPS)
    return tuple((float(m), float(e)) for m, e in zip(value, se, strict=True))


def expectation(kind: str, name: str, d_k: int, T: int, laws: tuple[str, ...] = LAWS,
                unit_means: Mapping | None = None) -> tuple[float, float]:
    """Expectation `kind` (KINDS) of statistic `name` at head size d_k over T keys, and its Monte Carlo standard
    error: what the claims compare with (sdpa_lab.results.Results.expectation). `laws`, `unit_means`: as
    mean_statistic's (the numbers do not depend on them)."""
    if kind in OTHER_KINDS:
        return _other(kind, name, d_k, T, unit_means)
    if kind == "scaled_minus_unit_variance":
        return _gap_draws(name, d_k, T, laws)[0]
    if kind in ("scaled", "unscaled"):
        return mean_statistic(name, d_k, T, kind == "scaled", laws, unit_means)
    base, _, shape = kind.rpartition(":")  # e.g. "scaled:sd": the law's sd (law)
    if base in LAW_KINDS and shape in SHAPES:
        return law(base, name, d_k, T, laws)[SHAPES.index(shape)]
    raise ValueError(f"unknown expectation {kind!r}; expected one of {KINDS + tuple(OTHER_KINDS)}, or one of "
                     f"{LAW_KINDS} with :{'/:'.join(SHAPES)}")


def _other(kind: str, name: str, d_k: int, T: int, unit_means: Mapping | None = None) -> tuple[float, float]:
    """Expectation `kind` of OTHER_KINDS, from its own module; `unit_means` as mean_statistic's."""
    if name != OTHER_KINDS[kind]:
        raise ValueError(f"expectation {kind!r} is of {OTHER_KINDS[kind]!r}, not of {name!r}")
    if kind == GRADIENT_RATIO:
        return gradient_ratio(d_k, T)
    if kind == OVER_D_K:
        return over_d_k_entropy(d_k, T)
    if kind == OVER_D_K_GAP:
        return over_d_k_gap(d_k, T, unit_means)
    if (d_k, T) != (EXERCISE2_D_K[-1], EXERCISE2_T):
        raise ValueError(f"expectation {kind!r} is Exercise 2's, at d_k={EXERCISE2_D_K[-1]} and T={EXERCISE2_T} "
                         f"only (got d_k={d_k}, T={T})")
    return one_draw_falls()


def over_d_k_gap(d_k: int, T: int, unit_means: Mapping | None = None) -> tuple[float, float]:
    """E H(softmax(K q / d_k)) - E H(softmax(K q / sqrt(d_k))) at head size d_k over T keys, and its Monte Carlo SE:
    the scaled mean mean_statistic's (built on the unit-variance mean, whose many draws make its error small), in
    quadrature with the other's. Exactly 0 at d_k = 1, where the two scales are one. `unit_means`: as
    mean_statistic's."""
    if d_k == 1:
        return 0.0, 0.0
    over, over_se = over_d_k_entropy(d_k, T)
    scaled, scaled_se = mean_statistic("entropy", d_k, T, scaled=True, unit_means=unit_means)
    return over - scaled, float(np.hypot(over_se, scaled_se))


def expectations(keys: Iterable[tuple[str, str, int, int]], unit_means: Mapping | None = None) -> dict:
    """expectation(*key) of each key (kind, statistic, d_k, T), the same numbers, the draws of each (statistic,
    d_k, T) giving the moments of only the laws the keys ask of them; `unit_means` as mean_statistic's."""
    keys = list(keys)
    asked = defaultdict(set)
    for kind, name, d_k, T in keys:
        asked[name, d_k, T].add(kind.rpartition(":")[0])  # "" for a mean
    return {key: expectation(*key, laws=tuple(sorted(asked[key[1:]] & set(LAWS))), unit_means=unit_means)
            for key in keys}
