"""Per seed: pretrain the GPT-2-style stand-in on the stories (every LN real), measure sigma_avg per LN site and
position class (BOS vs the rest) on training windows and freeze it into every FakeLayerNorm, then fine-tune three
copies from it on the same batches: control (LN kept), gradual (the paper's order, fired from fit's on_step hook),
all_at_once. Saves the four models per seed and the histories (losses, each removal event's loss before and right
after it, sigma)."""
import copy

from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.nn.norm_removal import RemovalSchedule, measure_sigma, set_sigma
from shared.pipeline.run import start_run
from shared.train.language_model import evaluate_lm, random_windows
from shared.train.loop import fit
from shared.train.schedules import warmup_cosine_lr

import torch

from .common import ARMS, load_text, spec_of, val_windows
from .model import build
from .pipeline import events


def train(model, tokens, t, gen, device, on_step=None):
    """AdamW (betas 0.9, 0.95, weight decay 0.1, clip 1.0) with warm-up then cosine decay, as nanoGPT; the mean
    training loss of every step is returned."""
    losses = []
    batches = (random_windows(tokens, t["batch_size"], model.n_ctx, gen).to(device) for _ in range(t["steps"]))

    def step_hook(step, loss):
        losses.append(loss.item())
        if on_step is not None:
            on_step(step, loss)

    model.to(device).train()
    fit(model, batches, steps=t["steps"], loss_fn=lambda m, b: m.loss(b), clip=1.0,
        make_optimizer=lambda m: torch.optim.AdamW(m.parameters(), lr=t["lr"], betas=(0.9, 0.95), weight_decay=0.1),
        lr_policy=lambda base, step: warmup_cosine_lr(base, step, t["steps"], t["warmup"], 0.0),
        on_step=step_hook)
    return losses


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params
    f, e = p["finetune"], p["eval"]
    train_tokens, val_tokens, tokenizer = load_text(run.args.data)
    n_ctx = p["model"]["n_ctx"]
    val = val_windows(val_tokens, e["val_windows"], n_ctx).to(run.device)
    models, specs, history = {}, [], {}
    for seed in p["seeds"]:
        seed_everything(run.seed(seed, "init"))
        spec = spec_of(p["model"], tokenizer.vocab_size, seed, "pretrained")
        model = build(spec)
        pre_losses = train(model, train_tokens, p["pretrain"], run.generator(seed, "pretrain_data"), run.device)
        sigma_in = random_windows(train_tokens, e["sigma_windows"], n_ctx, run.generator(seed, "sigma_windows"))
        sigma = measure_sigma(model, model.inputs(sigma_in.to(run.device)))
        set_sigma(model, sigma)
        pre_val = evaluate_lm(model, val)
        models[spec["name"]], h = model, {"pretrain_loss": pre_losses, "pretrained_val": pre_val, "sigma": sigma}
        specs.append(spec)
        print(f"seed {seed}: pretrained val {pre_val:.4f}", flush=True)
        for arm in ARMS:
            m = copy.deepcopy(model)
            curve, fired = [(0, pre_val)], []
            jump = {}
            sched = RemovalSchedule(m, events(p, arm),
                                    before=lambda s, site: jump.setdefault(s, evaluate_lm(m, val)),
                                    callback=lambda s, site: fired.append(
                                        {"step": s, "site": site, "before": jump[s], "after": evaluate_lm(m, val)}))
            sched.start()

            def on_step(step, loss, m=m, sched=sched, curve=curve):
                sched.on_step(step)
                if (step + 1) % f["eval_every"] == 0 or step + 1 == f["steps"]:
                    curve.append((step + 1, evaluate_lm(m, val)))

            losses = train(m, train_tokens, f, run.generator(seed, "finetune_data"), run.device, on_step)
            sched.finish()  # a no-op (check(): every event falls inside the steps), except in a capped smoke run
            aspec = spec_of(p["model"], tokenizer.vocab_size, seed, arm)
            models[aspec["name"]] = m
            specs.append(aspec)
            h[arm] = {"train_loss": losses, "val_curve": curve, "events": fired, "val": evaluate_lm(m, val)}
            print(f"seed {seed} {arm}: val {h[arm]['val']:.4f}", flush=True)
        history[str(seed)] = h
    meta = run.save(run.args.checkpoint, {k: v.cpu() for k, v in models.items()}, specs, experiment="removal")
    write_json(run.args.history, {**meta, "history": history})
    print(f"{len(models)} models, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
