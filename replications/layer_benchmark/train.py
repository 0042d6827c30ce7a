"""One task of the benchmark: every unit of the plan (family x matched width) trained with the same tuning budget,
then timed; writes one json of results.

Per unit: the lr sweep (every lr of the task's grid, first seed, scored on the validation split), the lr with the
lowest validation loss, then the other seeds at that lr (the sweep's run at that lr is the first seed's model).
Each seed's test loss and metric are recorded, and the same at init (the untrained control the claims compare with).
Then, in this process and back to back, each unit's forward and forward+backward time on one fixed batch (best of
`repeats`, shared.pipeline.benchmarking), with the rest of the machine's load over those timings (shared.pipeline.job).
"""
import time

import torch

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.benchmarking import best_seconds, synchronizer
from shared.pipeline.job import busy_cpu_seconds, machine, other_load
from shared.pipeline.run import start_run
from shared.train.lr_sweep import optimal_on_grid

from .common import image_data, loss_of, plan, score, spec_of, story_data, teacher_data, timing_input, train_one
from .model import block_of, build


def load_task_data(task_cfg, path):
    kind = task_cfg["kind"]
    if kind == "image":
        return image_data(path, task_cfg["val_fraction"])
    if kind == "regression":
        return teacher_data(task_cfg)
    return story_data(path, task_cfg)


def fresh_model(run, spec, seed):
    seed_everything(run.seed(seed, "init"))  # a unit's init depends only on the seed
    return build(spec).to(run.device)


def train_unit(run, kind, t, spec, data, seeds, lrs):
    def trained(seed, lr):  # the same data order for every family and lr at a seed: paired comparisons
        model = fresh_model(run, spec, seed)
        init = score(kind, model, data, "test")
        return train_one(kind, model, data, t, lr, run.generator(seed, "order")), init

    sweep = {}
    for lr in lrs:
        model, init = trained(seeds[0], lr)
        sweep[lr] = (model, init, score(kind, model, data, "val")[0])
    _, best = optimal_on_grid(lrs, [v[2] for v in sweep.values()])  # the grid point; NaN losses count as inf
    lr = lrs[best]
    runs = {seeds[0]: sweep[lr][:2]} | {seed: trained(seed, lr) for seed in seeds[1:]}
    per_seed = {}
    for seed, (model, init) in runs.items():
        loss, metric = score(kind, model, data, "test")
        per_seed[seed] = {"test_loss": loss, "test_metric": metric, "init_loss": init[0], "init_metric": init[1]}
    return {"lr_sweep": {f"{k:g}": v[2] for k, v in sweep.items()}, "lr": lr, "seeds": per_seed,
            "params_built": sum(p.numel() for p in block_of(runs[seeds[0]][0]).parameters())}


def throughput(run, kind, t, specs, timing, vocab):
    """{unit index: (forward s, forward+backward s)} per batch, and the machine's other load over the timings."""
    sync, x = synchronizer(run.device), timing_input(kind, t, timing["batch"], vocab).to(run.device)
    y = torch.zeros(len(x), dtype=torch.long if kind == "image" else torch.float, device=run.device)
    y = y[:, None] if kind == "regression" else y
    busy0, cpu0, t0 = busy_cpu_seconds(), time.process_time(), time.perf_counter()
    seconds = {}
    for i, spec in enumerate(specs):
        model = fresh_model(run, spec, 0)

        def forward():
            with torch.no_grad():
                model(x[:, :-1]) if kind == "lm" else model(x)

        def both():
            model.zero_grad(set_to_none=True)
            loss_of(kind, model, x, y).backward()

        seconds[i] = (best_seconds(forward, timing["repeats"], sync), best_seconds(both, timing["repeats"], sync))
    wall = time.perf_counter() - t0
    load = {"other_load": other_load(busy0, busy_cpu_seconds(), time.process_time() - cpu0, wall),
            "wall_s": round(wall, 2), "threads": torch.get_num_threads(), "machine": machine()}
    return seconds, load


def main():
    run = start_run("results", optional=("data",))  # no data file for the generated teacher-student task
    p = run.params  # the tier's config, less the other tasks
    task = p["task"]
    t = p["tasks"][task]
    kind = t["kind"]
    data = load_task_data(t, run.args.data[0] if run.args.data else None)
    vocab = data.get("vocab") if kind == "lm" else None
    units = plan(p, task)
    specs = [spec_of(p, task, unit, vocab) for unit in units]
    for unit, spec in zip(units, specs):
        start = time.perf_counter()
        unit.update(train_unit(run, kind, t, spec, data, p["seeds"], t["lrs"]))
        unit["train_s"] = round(time.perf_counter() - start, 2)
        print(f"{task} {unit['family']} w{unit['width']}: lr {unit['lr']:g}, "
              + ", ".join(f"{s['test_metric']:.4f}" for s in unit["seeds"].values()), flush=True)
    seconds, load = throughput(run, kind, t, specs, p["timing"], vocab)
    for i, unit in enumerate(units):
        unit["forward_s"], unit["fwdbwd_s"] = seconds[i]
    meta = run.meta([{"name": f"{u['family']}-w{u['width']}", "seed": s} for u in units for s in p["seeds"]],
                    experiment=task)
    write_json(run.args.results, {**meta, "task": task, "kind": kind, "units": units, "timing": {**p["timing"],
                                                                                                  **load}})
    print(f"{task}: {len(units)} units, {meta['wall_seconds']:.1f} s; timing load {load['other_load']}")


if __name__ == "__main__":
    main()
