"""One module per experiment: each `*_rows` function measures and returns its table as rows
(what the jobs write, without pandas), and the matching `run_*` function returns it as a
DataFrame. `trial_scores` holds the draws the entropy, ranking and gradient experiments share."""
