# Datasets from the registry (shared/data/registry.py): local copies first, then the download cache, then the
# network. A file that fails its sha256 is deleted and nothing downstream runs.
rule prepare_dataset:
    output:
        "data/prepared/{dataset}.safetensors",
    log:
        "logs/data/{dataset}.log",
    resources:
        mem_mb=16000,  # CelebA: a 1.4 GB zip decoded into a 2.5 GB array
        runtime=120,
    params:
        python=sys.executable,
        cache=config.get("data_dir", "data/raw"),
    shell:
        "{params.python:q} -m shared.data prepare {wildcards.dataset} {output:q} --cache {params.cache:q} > {log:q} 2>&1"
