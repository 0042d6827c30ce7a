"""What this paper's scripts share: the XOR data, the run specs of the three experiments, the image data and the
training of a head (minibatch Adam, cross-entropy), the parameter counts the arms declare, and the prototype
read-out (correlation of a head's rows with the class-mean images)."""
import torch
import torch.nn.functional as F

from shared.data import images
from shared.nn.tversky import tversky_params
from shared.train.classifier import fit_classifier
from shared.train.loop import fit

# ---------------------------------------------------------------- XOR

XOR_X = torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
XOR_Y = torch.tensor([0, 1, 1, 0])


def xor_specs(cfg):
    x = cfg["xor"]
    return ([{"name": f"tversky-k{k}-seed{s}", "arch": "xor", "layer": "tversky", "features": k, "seed": s}
             for k in x["features"] for s in x["seeds"]]
            + [{"name": f"linear-seed{s}", "arch": "xor", "layer": "linear", "features": 0, "seed": s}
               for s in x["seeds"]])


def forever(batch):
    while True:
        yield batch


def train_xor(model, steps, lr):
    """Full-batch Adam on the cross-entropy of the four points; the losses per step."""
    losses = []
    fit(model, forever((XOR_X, XOR_Y)), steps=steps, loss_fn=lambda m, b: F.cross_entropy(m(b[0]), b[1]),
        make_optimizer=lambda m: torch.optim.Adam(m.parameters(), lr=lr),
        on_step=lambda s, loss: losses.append(loss.item()))
    return losses


# ---------------------------------------------------------------- MNIST heads

def mlp_params(d_in, hidden, n_classes):
    return d_in * hidden + hidden + hidden * n_classes + n_classes


def matched_hidden(e):
    """The width of the ReLU MLP whose parameter count is closest to the Tversky head's."""
    budget = tversky_params(e["d_input"], e["n_classes"], e["features"])
    return min(range(1, 1025), key=lambda h: abs(mlp_params(e["d_input"], h, e["n_classes"]) - budget))


def image_arms(e):
    """(arm, layer, declared parameter count)."""
    h = matched_hidden(e)
    return [("tversky", "tversky", tversky_params(e["d_input"], e["n_classes"], e["features"])),
            ("linear", "linear", e["d_input"] * e["n_classes"] + e["n_classes"]),
            ("mlp_matched", "mlp", mlp_params(e["d_input"], h, e["n_classes"]))]


def image_specs(cfg):
    e = cfg["images"]
    return [{"name": f"{arm}-seed{s}", "arm": arm, "arch": "images", "layer": layer, "d_in": e["d_input"],
             "n_classes": e["n_classes"], "features": e["features"], "init_scale": e["init_scale"],
             "hidden": matched_hidden(e), "params": params, "seed": s}
            for arm, layer, params in image_arms(e) for s in e["seeds"]]


def load_image_data(path):
    """Flat images, pixels in [0, 1] (not centred: a prototype is then an image in the inputs' own space)."""
    return images.load_images(path, layout="flat")


def train_head(model, data, e, generator, device):
    """Adam at a constant rate, cross-entropy, a fresh permutation of the training images per epoch; the mean loss
    per epoch (shared.train.classifier)."""
    return fit_classifier(model, data["x_train"], data["y_train"], batch_size=e["batch_size"], epochs=e["epochs"],
                          lr=e["lr"], generator=generator, device=device, cosine=False)


def class_means(x, y, n_classes):
    return torch.stack([x[y == c].mean(0) for c in range(n_classes)])


def row_correlations(rows, means):
    """(n_rows, n_classes) Pearson correlation of each row (as an image) with each class-mean image."""
    r = rows - rows.mean(1, keepdim=True)
    m = means - means.mean(1, keepdim=True)
    return (r / r.norm(dim=1, keepdim=True)) @ (m / m.norm(dim=1, keepdim=True)).T


def head_rows(model):
    """The rows a head compares an input with: Tversky prototypes, or the linear classifier's weight rows."""
    return (model.prototypes if hasattr(model, "prototypes") else model.weight).detach().double()


# ---------------------------------------------------------------- LM

def lm_specs(cfg, vocab_size):
    m = cfg["lm"]
    return [{"name": head, "arch": "lm", "head": head, "features": m["features"], "init_scale": m["init_scale"],
             "model": m["model"], "vocab_size": vocab_size, "seed": m["train"]["seed"]} for head in m["heads"]]


def lm_params(spec):
    """Trainable numbers of model.TverskyLM from the sizes: the shared transformer without its unembedding, plus the
    head's own (linear: V d; tied: none; tversky: K d + 3)."""
    m, v, d = spec["model"], spec["vocab_size"], spec["model"]["d_model"]
    block = 4 * d * d + 3 * d * m["d_hidden"]  # qkv + out; SwiGLU up (2 d h) and down (h d)
    base = v * d + m["n_layer"] * block
    return base + {"linear": v * d, "tied": 0, "tversky": spec["features"] * d + 3}[spec["head"]]
