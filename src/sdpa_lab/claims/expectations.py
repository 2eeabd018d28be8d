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
over its top score: claims.top_score). Written here with its own softmax, independent of the
attention code the experiments run.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from functools import lru_cache

import numpy as np

from sdpa_lab.rows import row_argmax, row_max, row_sum

# Gauss nodes for the law of |q|^2: the averaged statistic is smooth in r^2, so a few suffice
# (tests/claims/test_expectations.py: 16 and 48 nodes agree to well below the Monte Carlo error).
NODES = 16

# Elements (draws * T) per evaluation of the statistic: bounds memory and time whatever T.
DRAW_ELEMENTS = 1 << 16

STATISTICS = ("jacobian_norm", "entropy", "log10_jacobian_norm")

# What `expectation` gives: E h of the scaled or of the unscaled softmax, or E h(scaled) - E h(unit-variance).
KINDS = ("scaled", "unscaled", "scaled_minus_unit_variance")

# What `law` gives the shape of besides: the scaled minus the unscaled statistic on the same trial (B7's widest head).
LAW_KINDS = (*KINDS, "scaled_minus_unscaled")


def gamma_rule(shape: float, nodes: int = NODES) -> tuple[np.ndarray, np.ndarray]:
    """Nodes x (nodes,) and weights w (nodes,), sum 1, with sum w f(x) ~ E f(X) for X ~ Gamma(shape, 1).

    Golub-Welsch on the Jacobi matrix of the generalized Laguerre polynomials, alpha = shape - 1.
    """
    a = shape - 1.0
    k = np.arange(nodes, dtype=float)
    off = np.sqrt(k[1:] * (k[1:] + a))
    x, v = np.linalg.eigh(np.diag(2.0 * k + a + 1.0) + np.diag(off, 1) + np.diag(off, -1))
    return x, v[0] ** 2


def _softmax(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p = softmax(s) along the last axis, and 1 - p computed without cancellation: (m, T) -> (m, T), (m, T)."""
    e = np.exp(s - row_max(s))
    total = row_sum(e)
    return e / total, (total - e) / total  # total - e: the sum of the other terms, exact where p is near 1


# A norm that underflowed to 0 is floored here before log10, as the gradient experiment does.
LOG_FLOOR = float(np.finfo(np.float64).tiny)


def softmax_statistic(name: str, s: np.ndarray) -> np.ndarray:
    """Per row of scores s (m, T): the Frobenius norm of J = diag(p) - p p^T (or its log10), or the entropy
    -sum p log p, of p = softmax(s), (m,)."""
    p, rest = _softmax(s)
    if name in ("jacobian_norm", "log10_jacobian_norm"):
        # ||J||_F^2 = sum_i p_i^2 (1 - p_i)^2 + sum_i p_i^2 sum_{j != i} p_j^2; the inner sum for the largest
        # p_i is summed directly, for the others it is the total less p_i^2 (no cancellation: p_i is not the max)
        p2 = p * p
        top = row_argmax(p)
        others = row_sum(p2) - p2
        np.put_along_axis(others, top, row_sum(np.where(np.arange(p.shape[-1]) == top, 0.0, p2)), axis=-1)
        norm = np.sqrt(row_sum(p2 * rest * rest + p2 * others)[..., 0])
        return norm if name == "jacobian_norm" else np.log10(np.maximum(norm, LOG_FLOOR))
    if name == "entropy":
        return -row_sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0))[..., 0]
    raise ValueError(f"unknown statistic {name!r}; expected one of {STATISTICS}")


# Blocks of draws (each of DRAW_ELEMENTS) for E h(softmax(u)) of unit-variance scores u ~ N(0, I_T), which does not
# depend on d_k: computed once per T, one evaluation a block (no Gauss rule over |q|). The scaled softmax's mean is
# taken as this plus the scaled minus unit-variance gap of the same draws (a control variate: the gap's Monte Carlo
# noise mostly cancels), so its Monte Carlo error is a small part of its check's SE, at less cost than averaging
# the scaled statistic itself over more draws per d_k.
UNIT_BLOCKS = 64


def _draws(name: str, d_k: int, T: int, what: int, most: int | None = None, block: int = 0) -> np.ndarray:
    """Seeded unit-variance scores u (2 pairs, T) in antithetic pairs (u, -u): averages over |q| are even in u.
    At most `most` pairs if given. Blocks 1, 2, ... are further independent draws (block 0 is the first)."""
    pairs = max(256, DRAW_ELEMENTS // (2 * T))
    pairs = pairs if most is None else min(pairs, most)
    key = [d_k, T, STATISTICS.index(name), what] + ([block] if block else [])
    u = np.random.default_rng(key).standard_normal((pairs, T))
    return np.concatenate([u, -u])


def _pair_means(values: np.ndarray) -> np.ndarray:
    """values (2 pairs,) averaged within each antithetic pair -> (pairs,)."""
    return values.reshape(2, -1).mean(axis=0)


def _pair_mean(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of values (2 pairs,) averaged within each antithetic pair."""
    return _mean_se(_pair_means(values))


def _mean_se(v: np.ndarray) -> tuple[float, float]:
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v)))


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
    scaled means'."""
    return {(name, T) for kind, name, _, T in keys if kind == "scaled"}


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
    if kind == "scaled_minus_unit_variance":
        return _gap_draws(name, d_k, T, laws)[0]
    if kind in ("scaled", "unscaled"):
        return mean_statistic(name, d_k, T, kind == "scaled", laws, unit_means)
    base, _, shape = kind.rpartition(":")  # e.g. "scaled:sd": the law's sd (law)
    if base in LAW_KINDS and shape in SHAPES:
        return law(base, name, d_k, T, laws)[SHAPES.index(shape)]
    raise ValueError(f"unknown expectation {kind!r}; expected one of {KINDS}, or one of {LAW_KINDS} with "
                     f":{'/:'.join(SHAPES)}")


def expectations(keys: Iterable[tuple[str, str, int, int]], unit_means: Mapping | None = None) -> dict:
    """expectation(*key) of each key (kind, statistic, d_k, T), the same numbers, the draws of each (statistic,
    d_k, T) giving the moments of only the laws the keys ask of them; `unit_means` as mean_statistic's."""
    keys = list(keys)
    asked = defaultdict(set)
    for kind, name, d_k, T in keys:
        asked[name, d_k, T].add(kind.rpartition(":")[0])  # "" for a mean
    return {key: expectation(*key, laws=tuple(sorted(asked[key[1:]] & set(LAWS))), unit_means=unit_means)
            for key in keys}
