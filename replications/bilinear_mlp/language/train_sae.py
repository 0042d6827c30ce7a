"""Train one TopK SAE (App G.3) on the MLP input or output of one layer of the bilinear transformer.

The activations come from windows of the training stream drawn by the SAE's seed; `steps` is the sweep's base
length times the step's multiplier (App H: each SAE of the sweep trains twice as long as the previous one).
"""
from shared.data.tokens import load_tokens
from shared.io.runtime import generator
from shared.pipeline.run import start_run
from shared.train.language_model import mlp_activations, random_windows
from shared.train.sae import train_sae

from .common import load_lm


def main():
    run = start_run("lm", "data", "checkpoint")
    p = run.params  # {"sae": config, "site": mlp_in | mlp_out, "multiplier": int, "device"}
    s = p["sae"]
    lm, _ = load_lm(run.args.lm, run.device)
    train_tokens, _, _ = load_tokens(run.args.data)
    windows = random_windows(train_tokens, s["train_tokens"] // lm.n_ctx, lm.n_ctx, generator(s["seed"]))
    x_in, x_out, _ = mlp_activations(lm, windows.to(run.device), s["layer"])
    acts = {"mlp_in": x_in, "mlp_out": x_out}[p["site"]]
    steps = s["steps"] * p["multiplier"]
    n_features = s["expansion"] * acts.shape[1]
    sae, log = train_sae(acts, n_features, s["k"], steps, s["batch_size"], s["lr"], s["seed"], run.device)
    spec = {"name": f"{p['site']}_x{p['multiplier']}", "seed": s["seed"], "kind": "sae", "d_model": acts.shape[1],
            "n_features": n_features, "k": s["k"]}
    run.save(run.args.checkpoint, {spec["name"]: sae.cpu()}, [spec], site=p["site"], layer=s["layer"], steps=steps,
             multiplier=p["multiplier"], **log)
    print(f"SAE {p['site']} x{p['multiplier']}: {steps} steps, last mse {log['history'][-1]['mse']:.4f}, "
          f"{log['wall_seconds']:.1f} s")


if __name__ == "__main__":
    main()
