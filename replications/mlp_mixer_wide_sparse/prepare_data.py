"""Write scikit-learn's 8x8 digits as one safetensors file for the digits experiments (shared.data.prepare_digits:
bundled with scikit-learn, nothing is downloaded; the split is by position within each class, so it depends on no
seed)."""
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
