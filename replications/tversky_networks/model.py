"""The models of tversky_networks, each built from a run spec (`build(spec)`; the caller seeds torch first):

  * `xor`: one layer 2 -> 2 (a logit per class): a Tversky projection (two prototypes, a bank of K features) or a
    linear layer with a bias;
  * `images`: a head on MNIST pixels 784 -> 10: a Tversky projection (10 prototypes, K features, inputs and
    prototypes L2-normalised), the linear classifier (nn.Linear with bias), or a ReLU MLP 784 -> h -> 10 whose width h
    gives the Tversky head's parameter count (the linear layers at equal parameters);
  * `lm`: shared.nn.transformer.Transformer (imported, not edited) whose unembedding is the untied linear layer
    (`linear`, the shared model's default), the token embedding itself (`tied`, weight tying), or a Tversky projection
    whose prototypes ARE the token embeddings (`tversky`: the parameter-sharing variant; only its bank of K features
    and alpha, beta, theta are new parameters).
"""
from torch import nn

from shared.nn.transformer import Transformer
from shared.nn.tversky import TverskyProjection

LM_HEADS = ("linear", "tied", "tversky")


class TverskyLM(Transformer):
    """The shared transformer with its unembedding replaced (Transformer.forward calls self.unembed(norm(h)))."""

    def __init__(self, vocab_size, head, features, init_scale, **model):
        super().__init__(vocab_size, mlp="swiglu", **model)
        if head not in LM_HEADS:
            raise ValueError(f"head {head!r}: choose from {LM_HEADS}")
        del self.unembed  # the method below takes its place
        self.head = head
        d = self.embed.weight.shape[1]
        if head == "linear":
            self.out = nn.Linear(d, vocab_size, bias=False)
            nn.init.normal_(self.out.weight, std=0.02)  # the shared model's GPT-2 init
        elif head == "tversky":
            self.out = TverskyProjection(d, vocab_size, features, own_prototypes=False, init_scale=init_scale)

    def unembed(self, h):
        if self.head == "tied":
            return h @ self.embed.weight.T
        if self.head == "tversky":
            return self.out(h, prototypes=self.embed.weight)
        return self.out(h)


def build(spec):
    kind = spec["arch"]
    if kind == "xor":
        if spec["layer"] == "tversky":
            return TverskyProjection(2, 2, spec["features"])
        return nn.Linear(2, 2)
    if kind == "images":
        if spec["layer"] == "tversky":
            return TverskyProjection(spec["d_in"], spec["n_classes"], spec["features"], normalize=True,
                                     init_scale=spec["init_scale"])
        if spec["layer"] == "linear":
            return nn.Linear(spec["d_in"], spec["n_classes"])
        return nn.Sequential(nn.Linear(spec["d_in"], spec["hidden"]), nn.ReLU(),
                             nn.Linear(spec["hidden"], spec["n_classes"]))
    if kind == "lm":
        return TverskyLM(spec["vocab_size"], spec["head"], spec["features"], spec["init_scale"], **spec["model"])
    raise ValueError(f"arch {kind!r}")


def n_params(model):
    return sum(p.numel() for p in model.parameters())
