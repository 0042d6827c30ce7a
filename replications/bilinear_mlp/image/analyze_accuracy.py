"""Test accuracy of bilinear vs ReGLU vs ReLU layers at equal width, and with vs without biases (A3, A5)."""
from shared.io.files import read_json
from shared.pipeline.run import start_run, write_metrics


def main():
    run = start_run("history", "metrics", "arrays")
    args = run.args
    run = read_json(args.history)
    acc = {name: 100.0 * h[-1]["test_acc"] for name, h in run["history"].items()}  # last epoch, as the paper
    metrics = {f"acc_{name}": value for name, value in acc.items()}
    metrics["bilinear_minus_reglu"] = acc["bilinear"] - acc["reglu"]
    metrics["bilinear_minus_relu"] = acc["bilinear"] - acc["relu"]
    metrics["nobias_minus_bias"] = acc["bilinear"] - acc["bilinear_bias"]
    curves = {f"test_acc_{n}": [row.get("test_acc", float("nan")) for row in h] for n, h in run["history"].items()}
    write_metrics(args.metrics, metrics, run, arrays=curves, arrays_path=args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
