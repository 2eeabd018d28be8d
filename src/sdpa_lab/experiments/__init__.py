"""One module per experiment: each `*_rows` function measures and returns its table as rows
(what the jobs write, without pandas), and its `<experiment>_tables(settings, trial_scores)`
is what the experiment's rule runs (declared at the module's end, `DECLARED`, of
`declaration.Experiment`s; `registry` gathers them all). `trial_scores` holds the draws
the entropy, ranking and gradient experiments share."""
