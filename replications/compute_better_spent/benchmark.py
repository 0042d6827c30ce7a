"""Achieved FLOP/s of the BTT (rank 1) and Monarch (4 blocks) layers over a dense layer of equal FLOPs, forward and
forward+backward, measured in the same process (shared.pipeline.benchmarking: best-of-n, synchronised). For each
structured width d (square d x d layer) the dense layer has width round(sqrt(macs)), so both do (nearly) the same
multiply-adds; the FLOP/s of each uses its own exact count (2 x MACs forward, 6 x MACs forward+backward).

    snakemake --cores 2 benchmarks --config benchmark_quick_suite=false -R compute_better_spent_benchmark
"""
import math
import os

import torch

from shared.io.files import write_json
from shared.io.runtime import describe
from shared.nn.parametrization import factor_table, initialize
from shared.nn.structured import build
from shared.pipeline.benchmarking import best_seconds, synchronizer
from shared.pipeline.provenance import collect
from shared.pipeline.run import start_run

CASES = [("btt", {"rank": 1}), ("monarch", {"blocks": 4})]


def layer(structure, d, device, **opts):
    module = build(structure, d, d, **opts)
    initialize(factor_table({"l": module}, "mup"), torch.Generator().manual_seed(0))
    return module.to(device)


def rates(module, batch, device, sync, repeats):
    x = torch.randn(batch, module.d_in, device=device)
    xg = x.clone().requires_grad_(True)

    def forward():
        with torch.no_grad():
            module(x)

    def both():
        module(xg).sum().backward()

    macs = module.macs() * batch
    return {"macs": module.macs(), "fwd_flops": 2 * macs / best_seconds(forward, repeats, sync),
            "fwdbwd_flops": 6 * macs / best_seconds(both, repeats, sync)}


def main():
    run = start_run("out")
    p, device = run.params, run.device
    sync = synchronizer(device)
    rows = []
    for d in p["widths"]:
        for structure, opts in CASES:
            s = rates(layer(structure, d, device, **opts), p["batch"], device, sync, p["repeats"])
            dense_d = round(math.sqrt(s["macs"]))
            ref = rates(layer("dense", dense_d, device), p["batch"], device, sync, p["repeats"])
            rows.append({"structure": structure, **opts, "width": d, "dense_width": dense_d, "macs": s["macs"],
                         "dense_macs": ref["macs"], "batch": p["batch"],
                         "fwd_flops_ratio": s["fwd_flops"] / ref["fwd_flops"],
                         "fwdbwd_flops_ratio": s["fwdbwd_flops"] / ref["fwdbwd_flops"],
                         "fwd_gflops": s["fwd_flops"] / 1e9, "dense_fwd_gflops": ref["fwd_flops"] / 1e9,
                         "fwdbwd_gflops": s["fwdbwd_flops"] / 1e9, "dense_fwdbwd_gflops": ref["fwdbwd_flops"] / 1e9})
            print(rows[-1], flush=True)
    write_json(run.args.out, {
        "what": "achieved FLOP/s of BTT (r=1) and Monarch (b=4) d x d layers over a dense layer of equal MACs, "
                "forward and forward+backward, same process",
        "cases": rows, "device": describe(device), "torch_threads": torch.get_num_threads(),
        "loadavg": list(os.getloadavg()), "provenance": collect(device=describe(device)),
    })


if __name__ == "__main__":
    main()
