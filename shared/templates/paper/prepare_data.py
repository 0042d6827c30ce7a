"""Write the dataset of this paper as one safetensors file (shared.data.prepare_digits: through write_safetensors,
with the content digest that read_prepared checks).

scikit-learn's bundled 8x8 digits ship inside the package (installed with mlxtend), so nothing is downloaded.
The split is by position within each class, never by RNG, so it does not depend on a seed.
"""
from shared.data import prepare_digits
from shared.pipeline.run import start_run


def main():
    run = start_run("out")  # params: {"dataset": ..., "test_fraction": ...}
    if run.params["dataset"] != "digits":
        raise SystemExit(f"unknown dataset {run.params['dataset']!r}")
    arrays = prepare_digits(run.args.out, run.params["test_fraction"])
    print({k: v.shape for k, v in arrays.items()})


if __name__ == "__main__":
    main()
