"""Train the stand-in language model: shared.nn.transformer.Transformer with ReGLU MLPs on the registry's synthetic
stories (next-token loss, AdamW, warm-up then linear decay: shared.train.language_model.train_lm)."""
from shared.data.tokens import load_tokens
from shared.io.files import write_json
from shared.io.runtime import seed_everything
from shared.pipeline.run import start_run
from shared.train.language_model import LMSchedule, fixed_windows, train_lm

from .model import build


def main():
    run = start_run("data", "checkpoint", "history")
    p = run.params["lm"]
    train_tokens, val_tokens, tokenizer = load_tokens(run.args.data)
    t = p["train"]
    spec = {"name": "lm", "seed": t["seed"], "kind": "lm", "mlp": p["mlp"], "model": p["model"],
            "vocab_size": tokenizer.vocab_size}
    seed_everything(run.seed(t["seed"], "init"))
    model = build(spec)
    schedule = LMSchedule(steps=t["steps"], batch_size=t["batch_size"], lr=t["lr"], warmup=t["warmup"],
                          eval_every=t["eval_every"])
    val = fixed_windows(val_tokens, t["eval_windows"], model.n_ctx + 1)
    history = train_lm(model, train_tokens, val, schedule, t["seed"], run.device)
    meta = run.save(run.args.checkpoint, {"lm": model.cpu()}, [spec], experiment="lm",
                    parameters=sum(q.numel() for q in model.parameters()), final=history[-1])
    write_json(run.args.history, {**meta, "history": history})
    print(f"lm: {meta['parameters']} parameters, val loss {history[-1]['val_loss']:.4f}, "
          f"{meta['wall_seconds']:.1f} s on {meta['device']}")


if __name__ == "__main__":
    main()
