"""Streaming mean and variance: statistics of a long sample in bounded memory."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Moments:
    """Count, mean and sum of squared deviations (M2) of a sample."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0

    @classmethod
    def of(cls, x: np.ndarray) -> Moments:
        """The moments of one chunk."""
        x = np.asarray(x, dtype=np.float64)
        if x.size == 0:
            return cls()
        mean = float(x.mean())
        return cls(int(x.size), mean, float(np.sum((x - mean) ** 2)))

    def merge(self, other: Moments) -> Moments:
        """The moments of both samples together (Chan et al.'s pairwise update)."""
        if other.count == 0:
            return self
        if self.count == 0:
            return other
        n = self.count + other.count
        delta = other.mean - self.mean
        mean = self.mean + delta * other.count / n
        m2 = self.m2 + other.m2 + delta * delta * self.count * other.count / n
        return Moments(n, mean, m2)

    @property
    def variance(self) -> float:
        """Population variance (ddof=0), as numpy's .var() and the lesson use."""
        return self.m2 / self.count if self.count else float("nan")

    def summary(self) -> dict[str, float]:
        """Mean, sample standard deviation (ddof=1) and standard error of the mean."""
        sd = float(np.sqrt(self.m2 / (self.count - 1))) if self.count > 1 else float("nan")
        return {"mean": self.mean, "std": sd, "se": sd / np.sqrt(self.count) if self.count else float("nan")}
