"""sdpa-lab: the claims of a lesson on scaled dot-product attention, re-measured and decided."""

from sdpa_lab.attention import entropy, scaled_dot_product_attention, softmax

__all__ = ["softmax", "entropy", "scaled_dot_product_attention"]
__version__ = "0.1.0"
