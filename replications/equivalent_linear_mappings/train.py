"""Train the SwiGLU transformer on the synthetic stories; save it with its own initial weights (the random-init
control C2) in one safetensors checkpoint, and the loss history."""
import copy

from shared.data.tokens import load_tokens
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.language_model import LMSchedule, fixed_windows, train_lm

from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params  # {"model", "train", "device"}
    train_tokens, val_tokens, tokenizer = load_tokens(run.args.data)
    t = p["train"]
    spec = {"seed": t["seed"], "model": p["model"], "vocab_size": tokenizer.vocab_size}
    seed_everything(run.seed(t["seed"], "init"))
    model = build(spec)
    init = copy.deepcopy(model)
    schedule = LMSchedule(steps=t["steps"], batch_size=t["batch_size"], lr=t["lr"], warmup=t["warmup"],
                          eval_every=t["eval_every"])
    val = fixed_windows(val_tokens, t["eval_windows"], model.n_ctx + 1)
    history = train_lm(model, train_tokens, val, schedule, t["seed"], run.device)
    specs = [{**spec, "name": "trained"}, {**spec, "name": "init"}]
    meta = run.save(run.args.checkpoint, {"trained": model, "init": init}, specs, final=history[-1],
                    parameters=sum(q.numel() for q in model.parameters()))
    write_json(run.args.history, {**meta, "history": history})
    print(f"val loss {history[-1]['val_loss']:.4f}, {meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
