"""Mixer vs SW-MLP vs RP-Mixer vs a dense MLP of the Mixer's parameters vs no block (claims F1-F4, F7, controls
K1-K2), and the effective-MLP identities on the trained weights (I1-I3).

Accuracies are means over the seeds on the whole test split. The identities run the trained Mixer and RP-Mixer
blocks of every seed in float64 on embedded test images against their wide sparse MLP (shared.nn.mixer)."""
import statistics

import numpy as np
import torch

from shared.nn.mixer import MixerBlock, density, effective_layers, vec, wide_forward
from shared.pipeline.run import load_models, start_run, write_metrics
from shared.train.evaluate import accuracy

from .common import load_image_data
from .model import KINDS, block_nonzeros


def main():
    run = start_run("checkpoint", "history", "data", "metrics", "arrays")
    p = run.params
    data = load_image_data(run.args.data)
    x, y = data["x_test"], data["y_test"]
    models, specs, meta = load_models(run.args.checkpoint)
    seeds = sorted({s["seed"] for s in specs.values()})
    acc = {name: accuracy(model, x, y, chunk=500) for name, model in models.items()}

    def by(kind, seed):
        return next(n for n, s in specs.items() if s["kind"] == kind and s["seed"] == seed)
    mean = {kind: statistics.fmean(acc[by(kind, s)] for s in seeds) for kind in KINDS}
    m = {f"acc_{kind}": v for kind, v in mean.items()}
    m["mixer_sw_gap_abs"] = abs(mean["mixer"] - mean["sw_mlp"])
    m["rp_sw_gap_abs"] = abs(mean["rp_mixer"] - mean["sw_mlp"])
    m["noblock_sw_gap_abs"] = abs(mean["none"] - mean["sw_mlp"])
    m["rp_minus_mixer"] = mean["rp_mixer"] - mean["mixer"]
    m["mixer_minus_dense"] = mean["mixer"] - mean["dense"]
    m["noblock_minus_dense"] = mean["none"] - mean["dense"]
    m["closer_to_sw_margin"] = abs(mean["mixer"] - mean["dense"]) - abs(mean["mixer"] - mean["sw_mlp"])
    m["noblock_closer_to_sw_margin"] = abs(mean["none"] - mean["dense"]) - abs(mean["none"] - mean["sw_mlp"])
    m["mixer_minus_noblock"] = mean["mixer"] - mean["none"]
    m["acc_min_with_block"] = min(acc[by(kind, s)] for kind in KINDS if kind != "none" for s in seeds)

    # identities: each trained Mixer / RP-Mixer block against its wide sparse MLP, float64
    rel, dens_err = [], []
    n = p["identity_inputs"]
    for kind in ("mixer", "rp_mixer"):
        for s in seeds:
            model = models[by(kind, s)].double()
            h = model.embed(model.tokens(x[:n].double()))
            for block in model.blocks:
                want = vec(block(h))
                got = wide_forward(effective_layers(block), vec(h), block.act)
                rel.append(float((got - want).abs().max() / want.abs().max()))
                dens = [density(w) for w, _ in effective_layers(block)]
                wanted = [1 / block.channels] * 2 + [1 / block.tokens] * 2
                dens_err.append(max(abs(a - b) for a, b in zip(dens, wanted)))
                h = block(h)
    m["effective_mlp_rel_err"] = max(rel)
    m["density_abs_err"] = max(dens_err)
    m["sw_minus_mixer_nonzeros"] = max(abs(block_nonzeros(models[by("sw_mlp", s)]) - block_nonzeros(
        models[by("mixer", s)])) for s in seeds)

    first = {kind: specs[by(kind, seeds[0])] for kind in KINDS}
    info = {"test_images": len(x), "seeds": seeds, "identity_inputs": n,
            "params": {kind: spec["params"] for kind, spec in first.items()},
            "block_nonzeros": {kind: block_nonzeros(models[by(kind, seeds[0])]) for kind in KINDS},
            "effective_width": first["mixer"]["tokens"] * first["mixer"]["channels"],
            "mixer_blocks": sum(isinstance(b, MixerBlock) for b in models[by("mixer", seeds[0])].blocks)}
    arrays = {"kinds": np.array(KINDS), "acc": np.array([[acc[by(k, s)] for s in seeds] for k in KINDS])}
    write_metrics(run.args.metrics, m, meta, info=info, arrays=arrays, arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    main()
