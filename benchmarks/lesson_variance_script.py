import numpy as np

np.random.seed(42)
n_samples = 100_000
for d_k in [4, 16, 64, 256, 1024]:
    Q = np.random.randn(n_samples, d_k)
    K = np.random.randn(n_samples, d_k)
    scores = np.sum(Q * K, axis=1)
    raw_var = scores.var()
    scaled_var = (scores / np.sqrt(d_k)).var()
    print(f"{d_k:>4} | {raw_var:>15.3f} | {scaled_var:>.4f}")
