"""One experiment of the deep linear MLP (float64, full-batch GD on fixed data); writes its result arrays.
Not on shared.train.loop.fit: the training is the paper's subject, written out (an exact one-step polynomial in eta,
and plain GD under muP's per-layer multipliers in model.gd_losses), with no optimizer, batches or schedule.

onestep:   for each scheme (muP, SP, NTP), depth L, width n and init seed: one gradient, then the exact one-step
           output as a degree-L polynomial in eta (shared.train.lr_sweep.step_polynomial from L + 1 forward
           passes), and eta*_n = the argmin of the polynomial loss on a fine grid (minimise_on_grid). Also the
           identity checks: the polynomial against a direct step at a fresh eta, and the init variances as built.
multistep: muP only: the loss after t GD steps on a linear grid of eta in [low, high] x eta*_inf, re-run per eta.
The arrays go into the pipeline's safetensors checkpoint (a `results` module of buffers) and a json history.
"""
import numpy as np
import torch

from shared.io.files import write_json
from shared.pipeline.run import start_run
from shared.train.lr_sweep import evaluate_polynomial, minimise_on_grid, step_polynomial

from .common import Results, eta_inf, kernel, make_data
from .model import build, gd_losses, hidden_grads, one_step_output

EXPECTED_VAR = {  # init variance of (W_0, W_l, V) per scheme: the paper's muP, and SP / NTP-in-SP-form
    "mup": lambda d, n: (1 / d, 1 / n, 1 / n ** 2),
    "sp": lambda d, n: (1 / d, 1 / n, 1 / n),
    "ntp": lambda d, n: (1 / d, 1 / n, 1 / n),
}


def init_model(run, spec):
    model = build(spec)
    model.init(run.generator(spec["seed"], f"init/L{spec['depth']}/n{spec['n']}"))  # drawn on the CPU, same per scheme
    return model.to(run.device)


def init_table_error(model):
    """max |init_std^2 / expected variance - 1| over the layers of the table as built."""
    w0, wl, v = EXPECTED_VAR[model.scheme](model.d, model.n)
    want = {"w0.weight": w0, "v.weight": v}
    return max(abs(r["init_std"] ** 2 / want.get(r["name"], wl) - 1) for r in model.rows)


def onestep(run, p, x, y):
    o, m = p["onestep"], x.shape[0]
    shape = (len(p["schemes"]), len(o["depths"]), len(o["widths"]), len(o["seeds"]))
    out = {k: np.full(shape, np.nan) for k in ("eta_star", "loss_star", "phi1_err", "higher", "f0_rms", "poly_err",
                                                "table_err", "hidden_var", "eta_ntk_pred")}
    out["eta_inf"] = np.array([eta_inf(x.cpu(), y.cpu(), depth) for depth in o["depths"]])
    coeffs = {}
    runs = []
    for a, scheme in enumerate(p["schemes"]):
        for b, depth in enumerate(o["depths"]):
            target = depth / m * kernel(x) @ y  # the muP limit of phi_1
            for c, n in enumerate(o["widths"]):
                for e, seed in enumerate(o["seeds"]):
                    spec = {"name": f"{scheme}_L{depth}_n{n}_seed{seed}", "seed": seed, "scheme": scheme,
                            "depth": depth, "n": n, "d": x.shape[1]}
                    runs.append(spec)
                    model = init_model(run, spec)
                    grads = hidden_grads(model, x, y)
                    # Chebyshev nodes on [0, scale]: scale near the optimum keeps the Vandermonde solve well posed
                    scale = out["eta_inf"][b] / (n if scheme == "sp" else 1)
                    poly = step_polynomial(lambda eta: one_step_output(model, x, grads, eta).cpu().numpy(),
                                           depth, scale)
                    yy = y.cpu().numpy()

                    def loss_at(etas, poly=poly):
                        return 0.5 * ((evaluate_polynomial(poly, etas) - yy) ** 2).mean(axis=1)

                    eta, loss = minimise_on_grid(loss_at, o["low"], o["high"], o["points"], o["refine"])
                    fresh = o["identity_eta"] * scale
                    direct = one_step_output(model, x, grads, fresh).cpu().numpy()
                    via_poly = evaluate_polynomial(poly, [fresh])[0]
                    with torch.no_grad():
                        f0 = model(x)
                        r0 = y - f0
                        kr = kernel(x) @ r0
                    idx = (a, b, c, e)
                    out["eta_star"][idx], out["loss_star"][idx] = eta, loss
                    out["phi1_err"][idx] = float(np.linalg.norm(poly[1] - target.cpu().numpy()) / float(target.norm()))
                    out["higher"][idx] = float(np.linalg.norm(poly[2:]) / np.sqrt(m))
                    out["f0_rms"][idx] = float(f0.pow(2).mean().sqrt())
                    out["poly_err"][idx] = float(np.abs(direct - via_poly).max() / np.abs(direct).max())
                    out["table_err"][idx] = init_table_error(model)
                    out["hidden_var"][idx] = float(model.hidden[0].weight.var() * n)  # n Var(W_1): 1 as drawn
                    out["eta_ntk_pred"][idx] = float(m / depth * (r0 @ kr) / (kr @ kr))  # lazy limit with f0 kept
                    coeffs[spec["name"]] = poly
                    print(f"{spec['name']}: eta* = {eta:.5g}", flush=True)
    return out, runs, {k: v.tolist() for k, v in coeffs.items() if k.split("_n")[1].split("_")[0] == str(min(o["widths"]))}


def multistep(run, p, x, y):
    o = p["multistep"]
    base = eta_inf(x.cpu(), y.cpu(), o["depth"])
    grid = np.linspace(o["low"] * base, o["high"] * base, o["points"])
    steps = max(o["steps"])
    losses = np.full((len(o["steps"]), len(o["widths"]), len(o["seeds"]), len(grid)), np.nan)
    runs = []
    for c, n in enumerate(o["widths"]):
        for e, seed in enumerate(o["seeds"]):
            spec = {"name": f"mup_L{o['depth']}_n{n}_seed{seed}", "seed": seed, "scheme": "mup",
                    "depth": o["depth"], "n": n, "d": x.shape[1]}
            runs.append(spec)
            model = init_model(run, spec)
            for g, eta in enumerate(grid):
                per_step = gd_losses(model, x, y, float(eta), steps)
                losses[:, c, e, g] = [per_step[t - 1] for t in o["steps"]]
            print(f"{spec['name']}: done", flush=True)
    return {"grid": grid, "losses": losses, "eta_inf": np.array(base)}, runs, {}


def main():
    run = start_run("checkpoint", "history")
    p = run.params
    torch.set_default_dtype(torch.float64)
    x, y = (t.to(run.device) for t in make_data(p["data"]))
    arrays, runs, extra = {"onestep": onestep, "multistep": multistep}[p["experiment"]](run, p, x, y)
    meta = run.save(run.args.checkpoint, {"results": Results(arrays)}, runs, experiment=p["experiment"])
    write_json(run.args.history, {**meta, "coefficients_smallest_width": extra})
    print(f"{len(runs)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
