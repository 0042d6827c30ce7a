"""Exact identities of the implicit update on the trained blocks (float64): Theorem 2.2 (D1), rank 1, minimality
(D3), partial context (D2), the gradient-step rewrite (D4), the residual variant with and without its steering bias
(D8), a GRU contextual layer, block-by-block patches of a stack (D9), and a shuffled-label control."""
import torch

from shared.nn import implicit_update as iu
from shared.pipeline.run import start_run, write_metrics

from .common import load_models, test_prompts, trained


def gap(a, b):
    return (a - b).abs().max().item()


@torch.no_grad()
def main():
    run = start_run("checkpoint", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    z, y = test_prompts(run, p)
    n = z.shape[1] - 1
    m = {k: 0.0 for k in ("noskip_gap", "minimality_rel", "partial_gap", "gd_rewrite_gap", "skip_gap_steered",
                          "gru_gap", "stack_gap")}
    m["rank_one_fraction"], m["skip_rel_gap_unsteered"], shuffle_ratios = 1.0, float("inf"), []
    for name in trained(specs, "attn") + [f"{k}_init" for k in trained(specs, "attn")]:
        model = models[name]
        W = model.mlp[0].W
        m["noskip_gap"] = max(m["noskip_gap"], gap(model(z), model.patched_prediction(z)))
        a_ctx, a_q = model.contextual(z), model.contextual(z[:, -1:])
        dW = iu.implicit_update(W, a_ctx, a_q)
        m["rank_one_fraction"] = min(m["rank_one_fraction"],
                                     (iu.numerical_rank(dW, p["identity_rtol"]) == 1).double().mean().item())
        pinv = iu.pinv_update(W, a_ctx, a_q)
        m["minimality_rel"] = max(m["minimality_rel"], (torch.linalg.matrix_norm(dW - pinv)
                                                        / torch.linalg.matrix_norm(pinv)).max().item())
        kept = torch.arange(n) >= n // 2  # Y = the first n/2 context examples
        dW_y, a_rest, _ = iu.partial_update(model.contextual, W, z[:, :-1], z[:, -1], kept)
        m["partial_gap"] = max(m["partial_gap"], gap(model(z), model.head(a_rest, dW_y)))
        prefix = iu.prefix_activations(model.contextual, z[:, :-1], z[:, -1])
        m["gd_rewrite_gap"] = max(m["gd_rewrite_gap"], gap(iu.gd_steps(W, prefix), iu.token_updates(W, prefix)))
        if name.endswith("_init"):
            continue
        gen = run.generator(0, "shuffle")
        perm = torch.stack([torch.randperm(n, generator=gen) for _ in range(len(z))])
        zs = z.clone()
        zs[:, :-1, -1] = torch.gather(z[:, :-1, -1], 1, perm)  # labels permuted among the context examples
        shuffle_ratios.append(((model(zs) - y) ** 2).mean().item() / ((model(z) - y) ** 2).mean().item())
    for name in trained(specs, "attn_skip"):
        model = models[name]
        ref = model(z)
        m["skip_gap_steered"] = max(m["skip_gap_steered"], gap(ref, model.patched_prediction(z)))
        m["skip_rel_gap_unsteered"] = min(m["skip_rel_gap_unsteered"],
                                          ((ref - model.patched_prediction(z, steering=False)).abs().mean()
                                           / ref.abs().mean()).item())
    for name in trained(specs, "gru"):
        m["gru_gap"] = max(m["gru_gap"], gap(models[name](z), models[name].patched_prediction(z)))
    for name in trained(specs, "stack"):
        m["stack_gap"] = max(m["stack_gap"], gap(models[name](z), models[name].stacked_patched_prediction(z)))
    m["shuffle_loss_ratio"] = min(shuffle_ratios)
    info = {"test_tasks": len(z), "dtype": "float64", "partial_context": "Y = the first n/2 context examples",
            "stack_layers": {k: s.get("layers", 1) for k, s in specs.items() if k.startswith("stack")}}
    write_metrics(run.args.metrics, m, meta, info=info, arrays={k: torch.tensor([float(v)]).numpy() for k, v in m.items()},
                  arrays_path=run.args.arrays)
    print(m)


if __name__ == "__main__":
    main()
