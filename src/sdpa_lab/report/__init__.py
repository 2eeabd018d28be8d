"""The report: figures (`figures`), the self-contained HTML report (`html`), its provenance (`provenance`),
and what the Snakemake rules run (`jobs`)."""
