"""Write scikit-learn's bundled 8x8 digits as one safetensors file (shared.data.prepare_digits: 1,797 images, no
download; the last test_fraction of each class, by position, is the test set). The other tasks' data comes from
the shared prepare_dataset rule (data/prepared/<name>.safetensors) or is generated in train.py."""
from shared.data import prepare_digits
from shared.pipeline.run import start_run


def main():
    run = start_run("out")  # params: {"test_fraction": ...}
    arrays = prepare_digits(run.args.out, run.params["test_fraction"])
    print({k: v.shape for k, v in arrays.items()})


if __name__ == "__main__":
    main()
