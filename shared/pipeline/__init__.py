"""The workflow side: papers as Snakemake modules, config and schemas, claims, reports, provenance, the run contract."""
