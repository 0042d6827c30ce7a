"""E3/E5: the implicit update against explicit fine-tuning of W by gradient descent on the context examples.

Per test prompt, W is fine-tuned by full-batch GD on the context examples, each fed alone as a query row (x_i, 0)
(the same context-free pass the patched model uses), for `ft_steps` steps; of `ft_lrs`, the rate with the lowest
final context loss is kept per prompt (the query is never used to choose). Compared on the query: no update (no
context), the implicit update (= the in-context prediction) and the explicit update; and the Frobenius cosine of
dW_implicit with W_explicit - W."""
import numpy as np
import torch

from shared.pipeline.run import start_run, write_metrics

from .common import load_models, test_prompts, trained


def finetune(model, z, p):
    """Per prompt: the loss on the query after every step (tasks, steps + 1) and the final W - W_0."""
    mlp = model.mlp[0]
    ctx = z[:, :-1].clone()
    ctx[:, :, -1] = 0.0
    y_ctx = z[:, :-1, -1]
    with torch.no_grad():
        a_ctx = model.contextual(ctx.reshape(-1, 1, ctx.shape[-1])).reshape(ctx.shape)  # each example alone
        a_q = model.contextual(z[:, -1:])

    def predict(Wt, a):
        return (torch.relu(torch.einsum("boi,bni->bno", Wt, a) + mlp.b) @ mlp.U.T)[..., -1]

    best = None
    for lr in p["ft_lrs"]:
        Wt = mlp.W.detach().expand(len(z), *mlp.W.shape).clone().requires_grad_(True)
        query = []
        for step in range(p["ft_steps"] + 1):
            with torch.no_grad():
                query.append(predict(Wt, a_q[:, None])[:, 0])
            if step == p["ft_steps"]:
                break
            loss = ((predict(Wt, a_ctx) - y_ctx) ** 2).mean(1)
            grad, = torch.autograd.grad(loss.sum(), Wt)
            with torch.no_grad():
                Wt -= lr * grad
        with torch.no_grad():
            final = torch.nan_to_num(((predict(Wt, a_ctx) - y_ctx) ** 2).mean(1), nan=float("inf"))
        cand = (final, torch.stack(query, 1), Wt.detach() - mlp.W)
        if best is None:
            best = cand
        else:
            better = cand[0] < best[0]
            best = tuple(torch.where(better.view(-1, *[1] * (c.dim() - 1)), c, b) for c, b in zip(cand, best))
    return best[1], best[2]


def main():
    run = start_run("checkpoint", "metrics", "arrays")
    p = run.params
    models, specs, meta = load_models(run.args.checkpoint)
    z, y = test_prompts(run, p)
    n = z.shape[1] - 1
    ratios_e, ratios_i, cosines, curves, impl_curves = [], [], [], [], []
    for name in trained(specs, "attn"):
        model = models[name]
        query_preds, dW_expl = finetune(model, z, p)
        with torch.no_grad():
            loss_none = ((model(z[:, -1:]) - y) ** 2).mean().item()
            loss_impl = ((model.patched_prediction(z) - y) ** 2).mean().item()
            loss_expl = ((query_preds[:, -1] - y) ** 2).mean().item()
            dW_impl = model.patch(z)[0]
            cos = (dW_impl * dW_expl).sum((1, 2)) / (torch.linalg.matrix_norm(dW_impl) * torch.linalg.matrix_norm(dW_expl))
            curves.append(((query_preds - y[:, None]) ** 2).mean(0).numpy())
            impl_curves.append(np.array([((model.patched_prediction(torch.cat([z[:, :i], z[:, -1:]], 1)) - y) ** 2)
                                         .mean().item() for i in range(n + 1)]))
        ratios_e.append(loss_expl / loss_none)
        ratios_i.append(loss_impl / loss_none)
        cosines.append(torch.nanmedian(cos).item())
    metrics = {"explicit_over_none": float(np.mean(ratios_e)), "implicit_over_none": float(np.mean(ratios_i)),
               "cosine_median": float(np.mean(cosines)),
               "both_below_none": bool(max(max(ratios_e), max(ratios_i)) <= 0.8)}
    arrays = {"explicit_by_step": np.mean(curves, 0), "implicit_by_context": np.mean(impl_curves, 0),
              "zero_loss": np.array([(y ** 2).mean().item()])}
    write_metrics(run.args.metrics, metrics, meta, info={"test_tasks": len(z), "ft_steps": p["ft_steps"]},
                  arrays=arrays, arrays_path=run.args.arrays)
    print(metrics)


if __name__ == "__main__":
    main()
