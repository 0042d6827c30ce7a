# Datasets from the registry in shared/data.py: local copies first, then the download cache, then the network.
# A file that fails its sha256 is deleted and nothing downstream runs.
rule prepare_dataset:
    output:
        "data/prepared/{dataset}.safetensors",
    params:
        cache=config.get("data_dir", "data/raw"),
    log:
        "logs/data/{dataset}.log",
    shell:
        "{PY:q} -m shared.data prepare {wildcards.dataset} {output:q} --cache {params.cache:q} 2> {log:q}"
