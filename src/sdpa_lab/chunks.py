"""How much the streamed experiments hold at once: chunks of about CHUNK_ELEMENTS floats per array."""

from __future__ import annotations

# 2**20 float64 = 8 MiB per array: memory stays bounded whatever the number of samples.
CHUNK_ELEMENTS = 1 << 20


def chunk_rows(row_elements: int) -> int:
    """Rows per chunk, each row holding `row_elements` floats, so that a chunk holds about CHUNK_ELEMENTS."""
    return max(1, CHUNK_ELEMENTS // row_elements)
