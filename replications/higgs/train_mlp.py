"""Train the MLP (shared.train.supervised.train: AdamW, cross-entropy, per-epoch cosine) on MNIST-5k (quick) / MNIST
(full); write one safetensors checkpoint and its history."""
from shared.data import images
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.supervised import EpochSchedule, Run, train

from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    m = p["mlp"]
    data = images.load_images(run.args.data, layout="flat", normalise="centre")
    spec = {"name": "mlp", "kind": "mlp", "seed": m["seed"], "d_input": m["d_input"], "hidden": m["hidden"],
            "n_classes": m["n_classes"]}
    seed_everything(run.seed(m["seed"], "init"))
    model = build(spec)
    schedule = EpochSchedule(epochs=m["epochs"], batch_size=m["batch_size"], lr=m["lr"])
    history = train({"mlp": model}, [Run("mlp", m["seed"], 0.0, 0.0)], data, schedule, run.device)
    meta = run.save(run.args.checkpoint, {"mlp": model}, [spec], final=history["mlp"][-1])
    write_json(run.args.history, {**meta, "history": history})
    print(f"test acc {history['mlp'][-1]['test_acc']:.4f}, {meta['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
