"""Train one model of this paper (the one-step flow-matching Linearizer or the projective one) on one dataset.

Adam with gradient clipping (shared.train.loop.fit). Writes a safetensors checkpoint (its run spec, device, wall
time and provenance in the metadata: `Run.save`) and a JSON loss history. Batches, times and noise come from one CPU
generator seeded by the run's seed, so a run's numbers do not depend on the device's RNG; the held-out loss uses
noise of its own stream, the same at every log.
"""
import torch

from shared.io.files import write_json
from shared.io.runtime import generator, seed_everything
from shared.pipeline.run import start_run
from shared.train.loop import fit, with_replacement
from shared.train.progress import Progress

from .common import as_float, load_data
from .model import build


def batch_losses(model, kind, x1, rng, tcfg, device):
    if kind == "projective":  # Gaussian noise: the source the off-data term maps onto the data
        draws = tcfg.get("noise_draws", 0)
        noise = torch.randn(draws, *x1.shape[1:], generator=rng).to(device) if draws else None
        return model.loss(x1, noise, tcfg.get("noise_weight", 0.0))
    sigma = tcfg["sigma"]
    b, n = x1.shape[0], model.n
    x0 = torch.randn(x1.shape, generator=rng).to(device)
    t = torch.rand(b, generator=rng).to(device)
    latent_noise = (torch.randn(b, n, generator=rng).to(device), torch.randn(b, n, generator=rng).to(device))
    return model.loss(x1, x0, t, latent_noise, sigma)


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # {"name", "kind", "dataset", "model": {...}, "train": {...}, "seed", "device"}
    kind, tcfg, device = p["kind"], p["train"], run.device
    data, shape, scale = load_data(run.args.data)
    spec = {"name": p["name"], "seed": p["seed"], "kind": kind, "dataset": p["dataset"], "shape": list(shape),
            "model": p["model"], "train": tcfg}
    seed_everything(spec["seed"])  # the init stream is the run's seed itself
    model = build(spec).to(device)
    rng = generator(p["seed"])  # batches, times and noise (a CPU generator, as the shared trainer's data order)
    x_train = data["x_train"]
    held_out = as_float(data["x_test"][: tcfg["batch_size"]], scale).to(device)
    history, terms = [], {}

    def loss_fn(model, x1):  # the batch's times and noise come after its indices, from the same generator
        loss, terms["train"] = batch_losses(model, kind, x1, rng, tcfg, device)
        return loss

    def log(step, loss):
        step += 1
        if step % tcfg["log_every"] == 0 or step == tcfg["steps"]:
            model.eval()
            with torch.no_grad():  # the same objective on a fixed held-out batch, the same noise at every log
                held_out_rng = run.generator(p["seed"], "held_out")
                _, test_terms = batch_losses(model, kind, held_out, held_out_rng, tcfg, device)
            history.append({"step": step, **{f"train_{k}": v.item() for k, v in terms["train"].items()},
                            **{f"test_{k}": v.item() for k, v in test_terms.items()}})
            bar.set_loss(loss.item())
            model.train()

    bar = Progress(tcfg["steps"], spec["name"])  # a bar on a terminal, timestamped lines in a log file
    model.train()
    batches = (as_float(x_train[idx], scale).to(device)
               for idx in with_replacement(len(x_train), tcfg["batch_size"], rng))
    fit(model, batches, steps=tcfg["steps"], loss_fn=loss_fn,
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=tcfg["lr"]), clip=tcfg["clip"], on_step=log,
        progress=bar)
    meta = run.save(run.args.checkpoint, {spec["name"]: model.cpu()}, [spec], experiment=kind)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{spec['name']}: {tcfg['steps']} steps, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
