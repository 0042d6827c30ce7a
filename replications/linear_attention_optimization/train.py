"""Train the linear Transformer with SGD (momentum 0.9) and Adam (AdamW, betas (0.9, 0.9), no weight decay), both
with global-norm clipping, one model per optimiser and seed, on fresh prompts every step (one setting per job;
shared.train.loop.fit with a stream of batches).

Along training it records the test loss, the robust condition number R_med of the full Hessian diagonal at the
configured checkpoints (both optimisers), and, for Adam, the gradient norm and the directional smoothness along
the actual update u_t = (theta_{t+1} - theta_t)/||.|| at theta_t (the official code's protocol, shared/train/diagnostics.py).
"""
import copy
import itertools

import torch

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train import diagnostics as diag
from shared.train.loop import fit

from .common import loss_fn, sampler, test_batch
from .model import build


def optimiser(name, params, lr):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=0.0)
    return torch.optim.AdamW(params, lr=lr, betas=(0.9, 0.9), weight_decay=0.0)


def train_one(model, opt_name, setting, p, seed, run):
    s = p["setting"]
    sample = sampler(p["d"], p["n"], s["covariates"], p["gamma_shape"])
    gen = run.generator(seed, "data")  # the same prompt stream for both optimisers of a seed
    test = test_batch(s, p, p["test_size"])
    dbatch = (test[0][: p["diag_size"]], test[1][: p["diag_size"]])
    hist = {"step": [], "test_loss": [], "rmed_step": [], "rmed": [], "smooth_step": [], "grad_norm": [],
            "smoothness": []}
    before = {}  # the weights before a tracked update, and the gradient norm there

    def tracked(step):
        return opt_name == "adam" and step < p["smooth_steps"] and step % p["smooth_every"] == 0

    def observe(step):  # diagnostics of the weights after `step` updates
        if step % p["log_every"] == 0 or step == p["steps"]:
            with torch.no_grad():
                hist["step"].append(step)
                hist["test_loss"].append(float(loss_fn(model, test)))
        if step in p["rmed_steps"]:
            hist["rmed_step"].append(step)
            hist["rmed"].append(diag.hessian_condition(model, loss_fn, dbatch))
        if step < p["steps"] and tracked(step):
            before["model"] = copy.deepcopy(model)
            before["grad_norm"] = float(diag.flat_grad(before["model"], loss_fn(before["model"], dbatch)).norm())

    def after_update(step, loss):  # smoothness along the update just taken, then the new weights' diagnostics
        if tracked(step):
            direction = diag.flat_parameters(model) - diag.flat_parameters(before["model"])
            if direction.norm() > 0:
                hist["smooth_step"].append(step)
                hist["grad_norm"].append(before["grad_norm"])
                hist["smoothness"].append(diag.directional_smoothness(before["model"], loss_fn, dbatch, direction))
        observe(step + 1)

    observe(0)
    fit(model, (sample(p["batch"], gen) for _ in itertools.count()), steps=p["steps"], loss_fn=loss_fn,
        make_optimizer=lambda m: optimiser(opt_name, m.parameters(), s[f"lr_{opt_name}"]), clip=s["clip"],
        on_step=after_update)
    return hist


def main():
    run = start_run("checkpoint", "history")
    p = run.params
    s = p["setting"]
    models, specs, history = {}, [], {}
    for seed in p["seeds"]:
        for opt_name in ("sgd", "adam"):
            spec = {"name": f"{opt_name}_seed{seed}", "seed": seed, "optimizer": opt_name, "d": p["d"],
                    "layers": s["layers"], "init_std": p["init_std"], "covariates": s["covariates"]}
            seed_everything(run.seed(seed, "init"))  # both optimisers start from the same init
            model = build(spec).to(run.device)
            history[spec["name"]] = train_one(model, opt_name, s, p, seed, run)
            models[spec["name"]] = model.cpu()
            specs.append(spec)
    final = {name: h["test_loss"][-1] for name, h in history.items()}
    meta = run.save(run.args.checkpoint, models, specs, experiment=p["name"], final=final)
    write_json(run.args.history, {**meta, "history": history})
    print(f"{p['name']}: {meta['wall_seconds']:.1f} s; " + ", ".join(f"{n} {v:.4g}" for n, v in final.items()))


if __name__ == "__main__":
    main()
