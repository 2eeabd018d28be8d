"""One module per experiment; each `run_*` function returns a tidy table."""
