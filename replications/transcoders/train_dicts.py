"""Transcoders and SAEs of the language model's MLPs: for each analysed layer, on the MLP input -> output pairs of
`train_tokens` training positions, a ReLU transcoder (input -> output) and an SAE of the MLP output (output ->
output) per L1 coefficient of the grid, same width, loss, steps and seed. One checkpoint."""
import torch

from shared.data.tokens import load_tokens
from shared.io.files import write_json
from shared.pipeline.run import start_run
from shared.io.smoke import capped
from shared.train.language_model import random_windows
from shared.train.transcoder import train_transcoder

from .common import load_checkpoint


@torch.no_grad()
def activations(lm, windows, layer, batch_size):
    """MLP input and output of `layer` at every position but the first of each window (shared.train.language_model
    .mlp_activations, one batch of windows per step, so that a smoke run reads a few batches)."""
    ins, outs, n = [], [], -(-len(windows) // batch_size)
    for i in capped(range(n), n, "activations"):
        cache = {}
        lm(windows[i * batch_size:(i + 1) * batch_size], cache=cache, layers={layer})
        ins.append(cache[layer, "mlp_in"][:, 1:].flatten(0, 1))
        outs.append(cache[layer, "mlp_out"][:, 1:].flatten(0, 1))
    return torch.cat(ins), torch.cat(outs)


def main():
    run = start_run("data", "lm", "checkpoint", "history")
    p = run.params["dicts"]
    (lm,), _, _ = (lambda m: (list(m[0].values()), m[1], m[2]))(load_checkpoint(run.args.lm, run.device))
    train_tokens, _, _ = load_tokens(run.args.data)
    n_windows = -(-p["train_tokens"] // (lm.n_ctx - 1))
    windows = random_windows(train_tokens, n_windows, lm.n_ctx, run.generator(p["seed"], "windows")).to(run.device)
    d = lm.embed.weight.shape[1]
    models, specs, history = {}, [], {}
    for layer in p["layers"]:
        x, y = activations(lm, windows, layer, p["activation_batch"])
        x, y = x[:p["train_tokens"]], y[:p["train_tokens"]]
        for kind, (src, dst) in (("transcoder", (x, y)), ("sae", (y, y))):
            for i, l1 in enumerate(p["l1"]):
                name = f"{kind}_L{layer}_l1_{i}"
                init = run.seed(p["seed"], f"init_{kind}_{layer}")  # one init per layer and kind, every l1
                tc, log = train_transcoder(src, dst, p["expansion"] * d, steps=p["steps"],
                                           batch_size=p["batch_size"], lr=p["lr"], seed=init, device=run.device,
                                           l1=l1, warmup=p["warmup"], sae=kind == "sae", progress=False, label=name)
                models[name] = tc.cpu()
                specs.append({"name": name, "kind": kind, "layer": layer, "l1": l1, "l1_index": i, "seed": p["seed"],
                              "init_seed": init, "d_in": d, "d_out": d, "n_features": p["expansion"] * d})
                history[name] = log["history"]
                print(f"{name}: mse {log['history'][-1]['mse']:.4g}, {log['wall_seconds']:.1f} s", flush=True)
        del x, y
        if run.device.type == "cuda":
            torch.cuda.empty_cache()
    meta = run.save(run.args.checkpoint, models, specs, experiment="dicts")
    write_json(run.args.history, {**meta, "history": history})


if __name__ == "__main__":
    main()
