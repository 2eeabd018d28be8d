"""What the Snakemake workflow needs around its jobs, and nothing a job computes.

- `code_inputs`: the package files each rule runs, as its code inputs (paths relative to the workflow);
- `cost`: what a run will cost before any job, and the gate that refuses a costly one;
- `hooks`: what the workflow's onstart hook does besides the cost gate;
- `cluster`: which rule ran out of memory on a SLURM cluster (the onerror hook).

Standard library only: the Snakefile imports these when it is parsed, on every snakemake call.
"""
