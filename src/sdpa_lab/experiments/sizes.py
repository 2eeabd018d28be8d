"""The experiments' fixed sizes, declared once: the experiments use them, and the cost model
(sdpa_lab.workflow_support.cost) counts their work with them. Standard library only: numbers, no
experiment's code (it declares no experiment: the registry skips it)."""

from sdpa_lab.validation import MAX_FORWARD_ELEMENTS

# Values are (T, d_v) with d_v = min(d_k, D_V_MAX) (gradient, learning): the loss and its gradient grow with
# d_v, and capping it keeps the values cheap at wide heads and one learning-rate grid meaningful across d_k.
D_V_MAX = 64

# Exercise 2 (entropy_sweep): one query against EXERCISE2_T keys per d_k of EXERCISE2_D_K, the lesson's sizes.
EXERCISE2_D_K = (4, 16, 64, 256)
EXERCISE2_T = 8


def gram_fits(T: int) -> bool:
    """Whether the learning descent steps through a run's (T, T) Gram matrix (T <= 2896): it then holds no more
    floats than the config checks allow any one array (validation.MAX_FORWARD_ELEMENTS, 64 MiB); past that it
    steps through the run's keys instead and holds no (T, T) array."""
    return T * T <= MAX_FORWARD_ELEMENTS
