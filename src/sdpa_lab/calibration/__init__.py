"""The calibration study: do the claims' tolerances do what they promise?

Every statistical check says "k standard errors, so a correct run fails by chance less than once in
1 / ALPHA_FAMILY runs". The study reruns the seeded experiments over many independent seeds,
decides every claim on every run, and records what each check measured (`study`); it summarises
the runs per check family (`summary`) and writes reports/calibration.html (`report`). A broken
arm reruns the same seeds with the package's attention deliberately broken in the one place the
forward and the experiments share (a wrong default scale, or a Jacobian without its -p p^T term),
to measure how often the claims catch it.
"""
