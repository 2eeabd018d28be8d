"""sdpa-lab: the claims of a lesson on scaled dot-product attention, re-measured and decided."""

__all__ = ["softmax", "entropy", "scaled_dot_product_attention"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # Loaded on first use, not on `import sdpa_lab`: every module of the package imports it first,
    # and the light ones (the config check, the grader's rubric) should not pay for NumPy.
    if name in __all__:
        from sdpa_lab import attention

        return getattr(attention, name)
    raise AttributeError(f"module 'sdpa_lab' has no attribute {name!r}")
