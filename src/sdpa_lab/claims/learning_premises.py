"""B10's premise checks: the scaled head is the lesson's head, and the descent follows the loss's true gradient,
each measured at the learning runs' start (experiments.learning_premises) and held within a derived bound of
floating-point rounding (and, for a finite difference, its truncation): deterministic, so a correct attention
cannot fail them by chance (docs/claims/learning.md, "The premises").

Rounding model (as B9's): unit roundoff u = 2^-53, each operation within a relative u, an exp within 4 u, a sum of
n terms within Higham's gamma_n = n u / (1 - n u) of its sum of |terms| in any order.
"""

from __future__ import annotations

import math

from sdpa_lab.claims.model import Check, missing
from sdpa_lab.experiments.sizes import D_V_MAX
from sdpa_lab.numbers import number
from sdpa_lab.results import Results

U = 2.0**-53
# A weight whose exp underflows has no relative error bound: it is off by at most this much absolutely (a subnormal's
# rounding, and the sum it is divided by at least 1), a margin far below anything measured.
UNDERFLOW = 2.0**-1000
# Each bound is itself computed in floating point, a few dozen operations: one more relative margin of 64 u.
OWN_ARITHMETIC = 1 + 64 * U


def gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u)."""
    return n * U / (1 - n * U)


def weight_relative_error(T: int, shift: float) -> float:
    """Relative error of a softmax weight (T keys) whose shifted scores z_j - max z are each off by at most
    `shift`: exp(2 shift) - 1 from the scores (a weight is exp(x_j) / sum exp(x_k)), 4 u the exp, gamma_T the
    sum, u the division."""
    return (1 + math.expm1(2 * shift)) * (1 + 4 * U) * (1 + gamma(T)) * (1 + U) - 1


def score_error(d_k: int, c: float, abs_sum: float) -> float:
    """|computed - exact| of a score c q.k: its d_k products and sum (gamma_{d_k}), and up to three roundings of
    the scale and its product (1/sqrt(d_k): the square root, the division, the product), relative to c sum |q_i k_i|
    (abs_sum)."""
    return c * gamma(d_k + 3) * abs_sum


def weight_bound(T: int, d_k: int, abs_sum: float) -> float:
    """Largest |attention's weight - own softmax's weight| two correct computations of softmax(K q / sqrt(d_k)) can
    differ by: each within weight_relative_error of the exact weight (<= 1), their shifted scores off by twice a
    score's error plus the subtraction's rounding (u times the spread, <= 2 c abs_sum); and the difference's
    rounding."""
    c = 1 / math.sqrt(d_k)
    shift = 2 * score_error(d_k, c, abs_sum) + 2 * U * c * abs_sum * (1 + gamma(d_k + 3))
    return (2 * weight_relative_error(T, shift) + 2 * UNDERFLOW) * (1 + U) * OWN_ARITHMETIC


def gradient_bound(T: int, d_k: int, d_v: int, c: float, abs_sum: float, spread: float, value_norm: float,
                   step: float) -> float:
    """Largest |q . dL/dq (the descent's) - central finite difference of L(lambda q) at lambda = 1 +- step| of a
    correct descent, for a head of scale c, T keys, values of width d_v and norm at most value_norm (the target is
    one: rho = 2 value_norm bounds ||v_j - v_k|| and ||out - target||), the scores' sum of |q_i k_i| abs_sum and the
    reference's scores' spread `spread`. Terms (each derived in docs/claims/learning.md):
    - the descent's derivative against the exact one: a sum of products of degree <= 3 in the weights (each off by
      a relative eta) and N = d_k + 3 T + d_v + 8 roundings on its longest path, against its sum of |terms|,
      <= 4 c abs_sum value_norm^2;
    - the reference's scores against the exact ones (each off by e): the derivative D(z) = grad L(z) . z moves by
      at most e sup ||grad D||_1 <= e rho^2 (1 + 3 spread);
    - the loss's rounding at each end, E <= kappa 2 value_norm^2 (its sum of |terms|), over 2 step, twice;
    - the truncation step^2 / 6 sup |L'''| <= step^2 / 6 * 7 rho^2 spread^3 (the loss's third derivative along z:
      cumulants of the values and scores under the weights);
    - the last subtraction's and the difference's roundings, and a margin for weights that underflow (UNDERFLOW)."""
    rho2 = (2 * value_norm) ** 2
    e = score_error(d_k, c, abs_sum)
    spread = spread * (1 + 2 * U) + 2 * e  # the exact and the rounded scores' spread, from the measured one
    eta = weight_relative_error(T, 2 * c * gamma(d_k + 4) * abs_sum)
    descent = ((1 + eta) ** 3 * (1 + gamma(d_k + 3 * T + d_v + 8)) - 1) * 4 * c * abs_sum * value_norm**2
    base = e * rho2 * (1 + 3 * spread)
    largest = c * abs_sum * (1 + gamma(d_k + 3))  # |z_j|
    eta_end = weight_relative_error(T, U * (1 + step) * 2 * (largest + spread))  # lambda z and its shift rounded
    loss = ((1 + eta_end) ** 2 * (1 + gamma(T + 2)) ** 2 * (1 + gamma(d_v + 1)) - 1) * 2 * value_norm**2
    rounding = loss / step * (1 + U) + U * rho2 * spread
    truncation = step**2 / 6 * 7 * rho2 * spread**3
    underflow = 8 * T * UNDERFLOW * (c * abs_sum + 1 / step + 1) * (value_norm**2 + 1)
    return (descent + base + rounding + truncation + underflow) * (1 + U) * OWN_ARITHMETIC


# The checks, each named once (claims.learning gives each the lesson's sentence it serves).
WEIGHTS = "largest |scaled head's weights - softmax(K q / sqrt(d_k))| at the runs' start (an independent softmax)"
GRADIENT = ("largest |descent's derivative of L along q - central finite difference of L(lambda q)| at the runs' "
            "start, {head} head")
HEADS = {"inv_sqrt_dk": ("scaled", "d_k"), "none": ("unscaled", None)}


def _worst(ratios: dict) -> int:
    """The d_k whose measurement is furthest into its bound (the first such, in sweep order)."""
    return max(ratios, key=lambda d: (ratios[d], -d))


def weights_check(R: Results, ds: list[int], T: int, runs: int) -> Check:
    """Premise 1 at the d_k furthest into its rounding bound."""
    src = "learning.csv"
    err = {d: R.value(src, d_k=d, scale="inv_sqrt_dk", statistic="start_weight_error") for d in ds}
    bound = {d: weight_bound(T, d, float(R.value(src, d_k=d, scale="inv_sqrt_dk", statistic="start_score_abs_sum")))
             for d in ds}
    d = _worst({d: float(err[d]) / bound[d] for d in ds})
    where = f"at d_k={d}: "
    note = where + (f"the scaled head's weights differ from softmax(K q / sqrt(d_k)) by {number(float(err[d]))} "
                    f"where rounding allows {number(bound[d])}" if float(err[d]) > bound[d] else
                    f"largest difference {number(float(err[d]))}, rounding allows {number(bound[d])}")
    if d == 1:
        note += " (at d_k = 1 every scale is 1: no scale can be told from the lesson's)"
    return Check("B10", WEIGHTS, f"d_k={ds[0]}..{ds[-1]}, runs={runs}, T={T}", "not above", 0.0, float(err[d]),
                 "rounding", src, tolerance=bound[d], cell=err[d].cell, note=note)


def gradient_check(R: Results, ds: list[int], T: int, runs: int, head: str) -> Check:
    """Premise 2 for `head` at the d_k furthest into its bound; not measured where no run's finite difference
    exceeds the bound at any d_k and none departs beyond it (a saturated unscaled head: nothing to resolve)."""
    src = "learning.csv"
    words, lesson = HEADS[head]
    name = GRADIENT.format(head=words)

    def got(d, statistic):
        return R.value(src, d_k=d, scale=head, statistic=statistic)

    err = {d: got(d, "start_gradient_error") for d in ds}
    bound = {d: gradient_bound(T, d, min(d, D_V_MAX), 1 / math.sqrt(d) if lesson else 1.0,
                               *(float(got(d, s)) for s in ("start_score_abs_sum", "start_score_spread",
                                                            "start_value_norm", "finite_difference_step")))
             for d in ds}
    ratios = {d: float(err[d]) / bound[d] for d in ds}
    parameters = f"d_k={ds[0]}..{ds[-1]}, runs={runs}, T={T}"
    resolved = [d for d in ds if float(got(d, "start_derivative_size")) > bound[d]]
    if not resolved and max(ratios.values()) <= 1:
        largest = max(ds, key=lambda d: float(got(d, "start_derivative_size")))
        return missing("B10", name, parameters, src,
                       f"no run's derivative resolvable: the largest finite difference, "
                       f"{number(float(got(largest, 'start_derivative_size')))} at d_k={largest}, is within what "
                       f"truncation and rounding allow ({number(bound[largest])})")
    d = _worst(ratios)
    size = number(float(got(d, "start_derivative_size")))
    note = f"at d_k={d}: " + (
        f"the descent's derivative of the loss along q differs from a central finite difference by "
        f"{number(float(err[d]))} where truncation and rounding allow {number(bound[d])} (largest |dL/dlambda| "
        f"{size})" if ratios[d] > 1 else
        f"largest difference {number(float(err[d]))}, truncation and rounding allow {number(bound[d])} (largest "
        f"|dL/dlambda| {size}; resolved at d_k={', '.join(str(x) for x in resolved)})")
    return Check("B10", name, parameters, "not above", 0.0, float(err[d]), "rounding", src, tolerance=bound[d],
                 cell=err[d].cell, note=note)


def premise_checks(R: Results, ds: list[int], runs: int) -> list[Check]:
    """B10's premise checks: the scaled head's weights, and the gradient of each head (values of width
    min(d_k, D_V_MAX), as the experiment's)."""
    T = int(R.first("learning.csv", "T"))
    return [weights_check(R, ds, T, runs)] + [gradient_check(R, ds, T, runs, head) for head in HEADS]
