"""A statistic of the softmax weights whose finite-d_k expectation a claim asks for, declared beside the claim.

The built-in statistics (claims.expectations.STATISTICS: the Jacobian norm, its log10, the entropy) are computed
there; a claim that needs another declares it on its `Claim` (`statistics=`), and the expectations find it through
the registry (registry.declared_statistic), so adding one edits no other module.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Statistic:
    """h(p) per row of softmax weights: `of_weights(p, rest)` with p = softmax(s) and rest = 1 - p (computed without
    cancellation), both (m, T), gives (m,). Its name is the `statistic` of the expectations it is asked by."""

    name: str
    of_weights: Callable[[np.ndarray, np.ndarray], np.ndarray] = field(repr=False)

    @property
    def key(self) -> int:
        """What keys its seeded draws: from its name alone, so declaring another statistic moves none of its
        numbers (the built-ins are keyed 0, 1, 2, by their place)."""
        return zlib.crc32(self.name.encode()) | 1 << 32  # above any built-in's place
