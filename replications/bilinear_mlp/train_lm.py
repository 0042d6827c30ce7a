"""Train one small transformer (section 5, App I) with the MLP named by the rule: bilinear, ReGLU or SwiGLU."""
import time

from language import build_lm, load_tokens

from shared.io.checkpoints import save_models
from shared.io.files import write_json
from shared.io.runtime import describe, pick_device, seed_everything
from shared.pipeline.provenance import collect
from shared.pipeline.scripts import parse_args
from shared.train.language_model import LMSchedule, fixed_windows, train_lm


def main():
    args = parse_args("data", "checkpoint", "history")
    p = args.params  # {"mlp", "model", "train", "device"}
    train_tokens, val_tokens, tokenizer = load_tokens(args.data)
    t = p["train"]
    spec = {"mlp": p["mlp"], "model": p["model"], "vocab_size": tokenizer.vocab_size}
    seed_everything(t["seed"])  # init depends only on the seed: the three MLP variants start from the same draw
    model = build_lm(spec)
    schedule = LMSchedule(steps=t["steps"], batch_size=t["batch_size"], lr=t["lr"], betas=tuple(t["betas"]),
                          weight_decay=t["weight_decay"], warmup=t["warmup"], eval_every=t["eval_every"])
    val = fixed_windows(val_tokens, t["eval_windows"], model.n_ctx + 1)
    device = pick_device(p["device"])
    t0 = time.perf_counter()
    history = train_lm(model, train_tokens, val, schedule, t["seed"], device)
    wall = time.perf_counter() - t0
    meta = {"spec": spec, "seed": t["seed"], "device": describe(device), "wall_seconds": wall,
            "parameters": sum(q.numel() for q in model.parameters()), "final": history[-1],
            "provenance": collect(config=p, device=describe(device))}
    save_models(args.checkpoint, {"model": model}, meta)
    write_json(args.history, {**meta, "history": history})
    print(f"{p['mlp']}: {meta['parameters']} parameters, val loss {history[-1]['val_loss']:.4f}, "
          f"{history[-1]['tokens'] / history[-1]['train_seconds']:.0f} tokens/s, {wall:.1f} s on {describe(device)}")


if __name__ == "__main__":
    main()
