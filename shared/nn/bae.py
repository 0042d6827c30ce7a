"""Bilinear autoencoders (Dooms & Gauderis 2025, "Finding Manifolds With Bilinear Autoencoders"; code tdooms/bae,
whose Aug-2025 commit a1c3e08 the losses here equal: its HEAD 28012c9 changed them, see the paper's deviations.md).

A unit-norm input x is encoded by n quadratic latents and decoded in the lifted space X = x x^T:

    f_j = (l_j . x)(r_j . x)          X_hat = sum_j c_j B_j,  B_j = l_j r_j^T

with c = f (vanilla, ordered) or c = D^T D f (mixed, combined: a bottleneck D mixes latents so that groups of
them can share a manifold). Since <X, B_j> = f_j and <B_i, B_j> = K_ij = (l_i . l_j)(r_i . r_j), the error
||X - X_hat||_F^2 has a closed form in n x n quantities, never d x d ones. The ordered kinds average that error
over all n prefixes j <= k, which orders latents by importance (Matryoshka style).
"""
import torch
from torch import nn

KINDS = ("vanilla", "ordered", "mixed", "combined")


class BilinearAutoencoder(nn.Module):
    def __init__(self, d, n, kind="vanilla", bottleneck=None):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.d, self.n, self.kind = d, n, kind
        self.mixed = kind in ("mixed", "combined")
        self.ordered = kind in ("ordered", "combined")
        if bottleneck is not None and not self.mixed:
            raise ValueError(f"bottleneck only applies to mixed/combined, not {kind!r}")
        self.left = nn.Parameter(nn.init.orthogonal_(torch.empty(n, d)))
        self.right = nn.Parameter(nn.init.orthogonal_(torch.empty(n, d)))
        if self.mixed:
            self.bottleneck = 2 * d if bottleneck is None else bottleneck
            self.down = nn.Parameter(nn.init.orthogonal_(torch.empty(self.bottleneck, n)))

    # Derived on the fly in the parameters' dtype rather than stored as buffers: a buffer built in float32 keeps
    # float32 rounding after .double(), which float64 checks of the closed forms would see.
    def _ranks(self):
        return torch.arange(1, self.n + 1, dtype=torch.float64, device=self.left.device)

    @property
    def weights(self):
        """w_j = (n - j + 1) / n: the fraction of the n prefixes that contain latent j."""
        return ((self.n - self._ranks() + 1) / self.n).to(self.left.dtype)

    @property
    def tail(self):
        """tau_j = sum_{k>=j} 1/k: latent j's density weight when each prefix k pays its mean density over j <= k."""
        return self._ranks().reciprocal().flip(0).cumsum(0).flip(0).to(self.left.dtype)

    @staticmethod
    def normalize(a):
        return a / a.norm(dim=-1, keepdim=True)

    def latents(self, x):
        return (x @ self.left.T) * (x @ self.right.T)

    def forward(self, a):
        return self.latents(self.normalize(a))

    def coefficients(self, f):
        return (f @ self.down.T) @ self.down if self.mixed else f

    def kernel(self):
        return (self.left @ self.left.T) * (self.right @ self.right.T)

    def lifted_error(self, x, f=None):
        """Per-sample training error: ||X - X_hat||^2 (vanilla, mixed) or its mean over all n prefixes (ordered kinds).

        Pass f = latents(x) when it is already computed. The leading ||X||^2 = ||x||^4 is 1 for the unit inputs
        used throughout; it is kept exact so the closed form matches the explicit one for any x.
        """
        f = self.latents(x) if f is None else f
        c, k = self.coefficients(f), self.kernel()
        cross = c * f  # <X, c_j B_j>; for mixed, sum_j c_j f_j = ||D f||^2
        if self.ordered:  # pair (i, j) is in the n - max(i, j) + 1 prefixes that contain both
            k = k * torch.minimum(self.weights[:, None], self.weights[None, :])
            cross = cross * self.weights
        return x.pow(2).sum(-1).square() - 2 * cross.sum(-1) + ((c @ k) * c).sum(-1)

    def reconstruction_error(self, x, prefix=None):
        """Per-sample ||X - sum_{j<=k} c_j B_j||_F^2 for the first k = prefix latents (all when None): what
        evaluation reports for every kind."""
        k = self.n if prefix is None else prefix
        f = self.latents(x)
        c = self.coefficients(f)[:, :k]
        return x.pow(2).sum(-1).square() - 2 * (c * f[:, :k]).sum(-1) + ((c @ self.kernel()[:k, :k]) * c).sum(-1)

    def prefix_errors(self, x, ks):
        """reconstruction_error for each prefix length in ks at once -> (len(ks), batch), by cumulative sums."""
        f = self.latents(x)
        c, k = self.coefficients(f), self.kernel()
        # adding latent j to the prefix adds c_j^2 K_jj + 2 c_j sum_{i<j} c_i K_ij to the quadratic term
        step = c * (c @ (torch.triu(k) + torch.triu(k, diagonal=1)))
        errors = x.pow(2).sum(-1, keepdim=True).square() + (step - 2 * c * f).cumsum(-1)
        return errors[:, torch.as_tensor(ks, device=x.device) - 1].T

    def explicit_error(self, x, prefix=None):
        """reconstruction_error computed by forming the d x d matrices: a reference for tests and small d only."""
        k = self.n if prefix is None else prefix
        c = self.coefficients(self.latents(x))[:, :k]
        target = x[:, :, None] * x[:, None, :]
        recon = torch.einsum("bj,jd,je->bde", c, self.left[:k], self.right[:k])
        return (target - recon).pow(2).sum((-2, -1))

    @staticmethod
    def hoyer_density(f):
        """Per latent, over the batch: (||v||_1 / ||v||_2 - 1) / (sqrt(N) - 1); 0 for one active sample, 1 when all
        N samples have the same magnitude, and unchanged by scaling. An all-zero column counts as 0."""
        l1, l2 = f.abs().sum(0), f.norm(dim=0)
        ratio = l1 / l2.clamp_min(torch.finfo(f.dtype).tiny)  # clamped so the unselected branch has finite gradients
        return torch.where(l2 > 0, ratio - 1, torch.zeros_like(l2)) / (f.shape[0] ** 0.5 - 1)

    def density_penalty(self, f):
        """Mean density; the ordered kinds average each prefix's mean density over all prefixes, = mean(H * tau)."""
        h = self.hoyer_density(f)
        return (h * self.tail).mean() if self.ordered else h.mean()

    def loss(self, a, alpha=0.0, warmup=1.0):
        """(mean lifted error + alpha * warmup * density penalty, metrics) for raw activations a (normalised here)."""
        x = self.normalize(a)
        f = self.latents(x)
        error = self.lifted_error(x, f).mean()
        total = error + alpha * warmup * self.density_penalty(f)
        return total, {"error": error.detach(), "density": self.hoyer_density(f).mean().detach()}

    @torch.no_grad()
    def quadratic_forms(self, idx=None, dtype=torch.float64):
        """Symmetric Q_j = (l_j r_j^T + r_j l_j^T) / 2, so that x^T Q_j x = f_j -> (n_sel, d, d)."""
        idx = slice(None) if idx is None else idx
        left, right = self.left[idx].to(dtype), self.right[idx].to(dtype)
        outer = left[:, :, None] * right[:, None, :]
        return (outer + outer.transpose(-1, -2)) / 2


# Weights-only manifold analysis (mixed/combined): latents whose bottleneck columns align are read together.


@torch.no_grad()
def mixing_gram(model):
    """G = Dhat^T Dhat with unit-norm columns of D (n x n, float64): G_ij = cosine of latents i, j in the bottleneck."""
    if not model.mixed:
        raise ValueError(f"mixing_gram needs a mixed or combined model, got {model.kind!r}")
    down = model.down.double()
    down = down / down.norm(dim=0, keepdim=True)
    return down.T @ down


def effective_dimension(G):
    """Per row: (sum_j |G_ij|^4)^2 / sum_j |G_ij|^8, a participation ratio of how many latents a latent mixes with."""
    g4 = G.abs().pow(4)
    return g4.sum(-1).square() / g4.square().sum(-1)


@torch.no_grad()
def composite_form(model, i, G, neighbours=10, signed=False):
    """(Q, members): Q = sym(sum_j w_j l_j r_j^T) over the `neighbours` latents most aligned with i (largest |G_ij|,
    i included and first). w_j = |G_ij|, as the released analysis weights them (figures/manifold.py, at a1c3e08 and
    at 28012c9); signed=True takes w_j = G_ij, which flips the form of a latent anti-aligned with i in the bottleneck."""
    scores = G[i].abs().clone()
    scores[i] = float("inf")  # i leads even if another column duplicates it
    members = scores.topk(min(neighbours, len(scores))).indices
    weights = G[i, members] if signed else G[i, members].abs()
    Q = (weights[:, None, None] * model.quadratic_forms(members, dtype=G.dtype)).sum(0)
    return Q, members


def top_subspace(Q, k=3):
    """The k eigenpairs of Q with the largest |eigenvalue| (float64), sorted by |eigenvalue| -> (values, vectors)."""
    values, vectors = torch.linalg.eigh(Q.double())
    order = values.abs().argsort(descending=True)[:k]
    return values[order], vectors[:, order]
