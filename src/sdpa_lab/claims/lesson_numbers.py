"""The numbers the lesson printed: the expected values of the replication claims (A1-A3)."""

LESSON_VARIANCE = {  # d_k: (raw variance printed to 3 places, scaled to 4)
    4: (3.988, 0.9971), 16: (15.891, 0.9932), 64: (64.249, 1.0039), 256: (256.391, 1.0015)}
LESSON_RAW_SCORES = (-3.12, 13.41, -27.0, 12.41, 2.39, 24.29, -1.23, -2.77)  # 2 places
LESSON_SCALED_SCORES = (-0.2, 0.84, -1.69, 0.78, 0.15, 1.52, -0.08, -0.17)  # 2 places
LESSON_UNSCALED_WEIGHTS = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)  # 4 places
LESSON_SCALED_WEIGHTS = (0.0634, 0.1781, 0.0142, 0.1673, 0.0894, 0.3514, 0.0713, 0.0648)  # 4 places
LESSON_COLLAPSE = {  # quantity: (printed value, places)
    "unscaled_max_weight": (1.0, 4), "unscaled_entropy": (0.0003, 4),
    "scaled_max_weight": (0.3514, 4), "scaled_entropy": (1.7909, 4), "uniform_entropy": (2.0794, 4)}
LESSON_WEIGHTS_6X6 = (  # 3 places
    (0.057, 0.41, 0.13, 0.21, 0.104, 0.09),
    (0.072, 0.606, 0.025, 0.089, 0.079, 0.128),
    (0.172, 0.162, 0.096, 0.093, 0.185, 0.291),
    (0.116, 0.108, 0.216, 0.123, 0.173, 0.263),
    (0.056, 0.104, 0.27, 0.301, 0.05, 0.219),
    (0.1, 0.083, 0.496, 0.134, 0.107, 0.081),
)
LESSON_STRONGEST_LINKS = {1: 1, 5: 2}  # query row -> key it attends to most
