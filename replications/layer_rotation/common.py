"""What this paper's scripts share: the data (flat images in [0, 1], optionally the first `per_class` training images
of each class), the run specs of the three experiments, and the training of one run (SGD or Adam, with or without
Layca, a step schedule), which records every layer's rotation and the test accuracy after each epoch."""
import torch
import torch.nn.functional as F

from shared.data import images
from shared.nn.layer_rotation import kernels, layer_rotation, snapshot
from shared.train.evaluate import accuracy
from shared.train.layca import Layca, alpha_multipliers
from shared.train.loop import epoch_batches, epochwise, fit

GROUPS = ("grid", "standard", "mnist")


def load_data(path, per_class=0):
    """MNIST flat in [0, 1] (as the paper's x / 255); with `per_class`, the first per_class training images of each
    class (section 6 reduces MNIST to 1,000 a class)."""
    data = images.load_images(path, layout="flat")
    if per_class:
        y = data["y_train"]
        keep = torch.cat([(y == c).nonzero().flatten()[:per_class] for c in y.unique()]).sort().values
        data["x_train"], data["y_train"] = data["x_train"][keep], y[keep]
    return data


def tag(exponent):
    """An exponent as a metric key may hold it (2.5 -> 2p5)."""
    return f"{exponent:g}".replace(".", "p")


def rate(exponent):
    """The paper's learning rates are powers of 3: 3^-exponent."""
    return 3.0 ** -exponent


def specs(cfg, group):
    """One spec per run of `group`. grid: Layca-SGD over alpha x rho(0) (section 4); standard: SGD over lr, with and
    without weight decay, Adam, Adam + Layca (section 5); mnist: Layca-SGD on section 6's 784-784-10 MLP."""
    e = cfg[group]
    base = {"group": group, "d_input": cfg["d_input"], "n_classes": cfg["n_classes"], "hidden": e["hidden"],
            "alpha": 0.0, "weight_decay": 0.0}
    out = []
    for seed in e["seeds"]:
        if group == "grid":
            out += [{**base, "name": f"layca-a{a:+g}-lr3^-{k:g}-seed{seed}", "seed": seed, "opt": "sgd", "layca": True,
                     "lr": rate(k), "exponent": k, "alpha": a} for a in e["alphas"] for k in e["exponents"]]
        elif group == "mnist":
            out += [{**base, "name": f"layca-lr3^-{k:g}-seed{seed}", "seed": seed, "opt": "sgd", "layca": True,
                     "lr": rate(k), "exponent": k} for k in e["exponents"]]
        else:
            out += [{**base, "name": f"sgd-lr3^-{k:g}-wd{wd:g}-seed{seed}", "seed": seed, "opt": "sgd",
                     "layca": False, "lr": rate(k), "exponent": k, "weight_decay": wd}
                    for k in e["sgd_exponents"] for wd in (0.0, e["weight_decay"])]
            out += [{**base, "name": f"adam-seed{seed}", "seed": seed, "opt": "adam", "layca": False,
                     "lr": e["adam_lr"]},
                    {**base, "name": f"adam-layca-seed{seed}", "seed": seed, "opt": "adam", "layca": True,
                     "lr": rate(e["adam_layca_exponent"]), "exponent": e["adam_layca_exponent"]}]
    return out


def optimizer(model, spec):
    """Layca: one parameter group per kernel at lr x its alpha multiplier (the rest frozen by Layca). Otherwise the
    base optimizer on every parameter, weight decay (torch's coupled L2, as Keras' l2 regulariser) on the kernels."""
    ks = [p for _, p in kernels(model)]
    others = [p for p in model.parameters() if p.ndim < 2]
    make = (lambda groups: torch.optim.SGD(groups, lr=spec["lr"])) if spec["opt"] == "sgd" else (
        lambda groups: torch.optim.Adam(groups, lr=spec["lr"]))
    if spec["layca"]:
        rates = [spec["lr"] * m for m in alpha_multipliers(len(ks), spec["alpha"])]
        return Layca(make([{"params": [p], "lr": r} for p, r in zip(ks, rates)] + [{"params": others}]), ks)
    return make([{"params": ks, "weight_decay": spec["weight_decay"]}, {"params": others, "weight_decay": 0.0}])


def step_decay(epochs, milestones, factor):
    """lr x factor at each milestone (a fraction of the epochs), held through each epoch."""
    bounds = [round(m * epochs) for m in milestones]
    return lambda base, epoch, _: base * factor ** sum(epoch >= b for b in bounds)



def train_run(model, spec, data, e, generator):
    """Train one run on its seed's batches; return its history: per epoch the train loss, the test accuracy and
    each kernel's rotation from the initialisation (input layer first)."""
    x, y = data["x_train"], data["y_train"]
    per_epoch = len(x) // e["batch_size"]
    init = snapshot(model)
    history = {"train_loss": [], "test_acc": [], "rotation": []}
    total = [0.0]

    def on_step(step, loss):
        total[0] += loss.item()
        if (step + 1) % per_epoch == 0:
            history["train_loss"].append(total[0] / per_epoch)
            history["test_acc"].append(accuracy(model, data["x_test"], data["y_test"], chunk=1000, count_flops=False))
            history["rotation"].append(list(layer_rotation(model, init).values()))
            total[0] = 0.0

    batches = ((x[i], y[i]) for i in epoch_batches(len(x), e["batch_size"], generator, x.device))
    model.train()
    fit(model, batches, steps=e["epochs"] * per_epoch,
        loss_fn=lambda m, b: F.cross_entropy(m(b[0]), b[1]), make_optimizer=lambda m: optimizer(m, spec),
        lr_policy=epochwise(step_decay(e["epochs"], e["milestones"], e["decay"]), per_epoch, e["epochs"]),
        on_step=on_step)
    return history


def initial(spec):
    """The untrained model of a run, as train.py built it (its init depends on the seed only)."""
    from shared.io.runtime import seed_everything
    from shared.pipeline.run import derive_seed

    from .model import build
    seed_everything(derive_seed(spec["seed"], "init"))
    return build(spec)


def final_state(models, specs, data):
    """Per run: test accuracy of the saved weights, and each kernel's rotation from the rebuilt initialisation
    (input layer first), with that initial model."""
    acc, rotation, inits = {}, {}, {}
    for name, model in models.items():
        inits[name] = initial(specs[name])
        acc[name] = accuracy(model, data["x_test"], data["y_test"], chunk=1000, count_flops=False)
        rotation[name] = list(layer_rotation(model, dict(kernels(inits[name]))).values())
    return acc, rotation, inits
