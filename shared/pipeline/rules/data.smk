# Datasets from the registry (shared/data/registry.py): local copies first, then the download cache, then the
# network. A file that fails its sha256 is deleted and nothing downstream runs. The cache is --config data_dir=...,
# else $REPLICATIONS_DATA_DIR, else data/raw: an empty --cache= leaves the choice to the job, so that moving the cache
# through the environment is not a changed param that would prepare (and retrain) everything again. A failed job's
# log (which file, each source tried and why it failed, where to put it by hand) reaches the console through the
# Snakefile's onerror handler (profiles/default keeps Snakemake's own error block, and show-failed-logs' copy, off it).
import time

DATA_RUN_STARTED = time.time()  # the Snakefile's onerror handler shows the logs of the data jobs that failed since


rule prepare_dataset:
    output:
        "data/prepared/{dataset}.safetensors",
    log:
        "logs/data/{dataset}.log",
    resources:
        # CelebA: a 1.4 GB zip decoded into a 2.5 GB array; TinyStories: 2.2 GB of text tokenized. The others (the
        # quick tier's among them) fit in far less, and a Slurm job asking for more memory than a node has is refused
        mem_mb=lambda w: 16000 if w.dataset in ("celeba_64", "tinystories") else 4000,
        runtime=120,  # downloads included
    params:
        python=sys.executable,
        cache=config.get("data_dir", ""),
    shell:
        "{params.python:q} -m shared.data prepare {wildcards.dataset} {output:q} --cache={params.cache:q} > {log:q} 2>&1"
