"""The image classifiers: patches -> one linear embedding shared by all patches -> X (S tokens, C channels) ->
`depth` mixing blocks of one kind -> mean over tokens -> linear head. Only the block differs between kinds:

  mixer     shared.nn.mixer.MixerBlock: token then channel mixing (the paper's Mixer)
  rp_mixer  the same with fixed random permutations around each mixing MLP (RP-Mixer, the paper's section 5)
  sw_mlp    the block's wide MLP on vec(X) (width S C, hidden expansion S C) with unstructured random masks of the
            Mixer's densities 1/C (token layers) and 1/S (channel layers): the same width and non-zero weights,
            no weight sharing (SW-MLP, the paper's Fig. 1a)
  dense     a residual dense MLP on vec(X) whose hidden width matches the Mixer block's parameter count
  none      no block (embedding and head only): the baseline that shows what the mixing adds
"""
from torch import nn

from shared.nn.mixer import ACTIVATIONS, MaskedLinear, MixerBlock, effective_layers, unvec, vec

KINDS = ("mixer", "rp_mixer", "sw_mlp", "dense", "none")


def mixer_block_params(tokens, channels, expansion):
    """Parameters of one MixerBlock (weights and biases of its four nn.Linear)."""
    return sum(2 * expansion * n * n + expansion * n + n for n in (tokens, channels))


def dense_hidden(tokens, channels, expansion):
    """The hidden width of the dense residual MLP on vec(X) whose parameters (2 d h + h + d) are closest to the
    Mixer block's."""
    d = tokens * channels
    return max(1, round((mixer_block_params(tokens, channels, expansion) - d) / (2 * d + 1)))


class SparseWideBlock(nn.Module):
    """The Mixer block's wide MLP on vec(X) with each of its four layers an unstructured MaskedLinear of the same
    shape and density (1/C, 1/C, 1/S, 1/S); masks drawn from `seed`."""

    def __init__(self, tokens, channels, expansion, act, seed):
        super().__init__()
        d, s, c = tokens * channels, tokens, channels
        self.tokens, self.act = tokens, act
        self.layers = nn.ModuleList([MaskedLinear(d, expansion * d, 1 / c, seed), MaskedLinear(expansion * d, d, 1 / c,
                                     seed + 1), MaskedLinear(d, expansion * d, 1 / s, seed + 2),
                                     MaskedLinear(expansion * d, d, 1 / s, seed + 3)])

    def forward(self, x):
        v, fn = vec(x), ACTIVATIONS[self.act]
        for up, down in (self.layers[:2], self.layers[2:]):
            v = v + down(fn(up(v)))
        return unvec(v, self.tokens)


class DenseWideBlock(nn.Module):
    """A residual dense MLP on vec(X): v + W2 act(W1 v + b1) + b2."""

    def __init__(self, tokens, channels, hidden, act):
        super().__init__()
        self.tokens, self.act = tokens, act
        self.up, self.down = nn.Linear(tokens * channels, hidden), nn.Linear(hidden, tokens * channels)

    def forward(self, x):
        v = vec(x)
        return unvec(v + self.down(ACTIVATIONS[self.act](self.up(v))), self.tokens)


def make_block(spec, index):
    s, c, e, act = spec["tokens"], spec["channels"], spec["expansion"], spec["act"]
    seed = 1000 * spec["seed"] + 10 * index  # masks and permutations: fixed by the run's seed and the block's place
    if spec["kind"] in ("mixer", "rp_mixer"):
        return MixerBlock(s, c, e, act, permuted=spec["kind"] == "rp_mixer", seed=seed)
    if spec["kind"] == "sw_mlp":
        return SparseWideBlock(s, c, e, act, seed)
    if spec["kind"] == "dense":
        return DenseWideBlock(s, c, dense_hidden(s, c, e), act)
    return nn.Identity()


class PatchClassifier(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.patch = spec["patch"]
        self.embed = nn.Linear(spec["in_channels"] * self.patch ** 2, spec["channels"])
        self.blocks = nn.Sequential(*[make_block(spec, i) for i in range(spec["depth"])])
        self.head = nn.Linear(spec["channels"], spec["n_classes"])

    def tokens(self, images):
        """(B, c, H, W) -> (B, S, c p p): non-overlapping p x p patches, row by row."""
        p = self.patch
        x = images.unfold(2, p, p).unfold(3, p, p)  # (B, c, H/p, W/p, p, p)
        return x.permute(0, 2, 3, 1, 4, 5).flatten(3).flatten(1, 2)

    def forward(self, images):
        return self.head(self.blocks(self.embed(self.tokens(images))).mean(1))


def n_params(model):
    """Trainable numbers that can be non-zero (a MaskedLinear counts its mask's ones)."""
    masked = {id(p) for m in model.modules() if isinstance(m, MaskedLinear) for p in m.parameters()}
    return (sum(m.n_params() for m in model.modules() if isinstance(m, MaskedLinear))
            + sum(p.numel() for p in model.parameters() if id(p) not in masked))


def block_nonzeros(model):
    """Non-zero weights of the blocks' layers on vec(X) (biases excluded): the effective MLP's connections."""
    total = 0
    for block in model.blocks:
        if isinstance(block, MixerBlock):
            total += sum(int((w != 0).sum()) for w, _ in effective_layers(block))
        elif isinstance(block, SparseWideBlock):
            total += sum(int((layer.weight * layer.mask != 0).sum()) for layer in block.layers)
        elif isinstance(block, DenseWideBlock):
            total += block.up.weight.numel() + block.down.weight.numel()
    return total


def build(spec):
    """A model from a run spec; the caller seeds torch first, so the init depends on the run's seed only."""
    return PatchClassifier(spec)

