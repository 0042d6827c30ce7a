"""What the scripts share: the word task as tensors, checkpoints, and the theory side (rank bounds, fusion cover)."""
import numpy as np
import torch

from shared.data.groups import all_pairs, by_name, irreps, letter_counts, real_components, word_table

# Real CP ranks of the real algebra blocks of R[G] (dossier 2.3): (kind, complex irrep dim) -> rank of the block's
# multiplication tensor. 1x1 real: 1; C as an R-algebra: 3; M_2(R): 7 (Strassen, exact); H: 8; M_3(R): <= 23
# (Laderman, an upper bound). The block-sum bound of a group is the sum over its real components.
BLOCK_RANK = {("real", 1): 1, ("complex", 1): 3, ("real", 2): 7, ("quaternionic", 2): 8, ("real", 3): 23}


def task(group_name, word):
    """(group, a, b, labels): every pair of the table, row-major, and the word's value as the label."""
    group = by_name(group_name)
    a, b = all_pairs(group.order)
    labels = torch.as_tensor(word_table(group, word)).reshape(-1).long()
    return group, a, b, labels


def block_sum_bound(group):
    """Upper bound on the real CP rank of delta_{G,ab}: sum of the block ranks of its real components (None if a
    block is not in BLOCK_RANK), and the same without the trivial block (the centred target)."""
    parts = [BLOCK_RANK.get((c.kind, c.irrep_dim)) for c in real_components(group)]
    if any(p is None for p in parts):
        return None, None
    return sum(parts), sum(parts) - parts[0]


def tensor_power_components(group, component, power):
    """Indices of the real components present in zeta^{(x) power}, zeta the real irreducible representation of one
    real component: its character is the sum of its complex members' characters (chi + conj(chi) for a complex
    pair), the character of the power is that to the power, decomposed by inner products with the irreps'
    characters; a real component is present when any of its member irreps is. power 0 is the trivial rep."""
    found = irreps(group)
    comps = real_components(group)
    n = group.order
    chi = sum(found[k].character for k in comps[component].members) ** power
    return {j for j, c in enumerate(comps)
            if any(abs(np.vdot(found[k].character, chi) / n) > 1e-8 for k in c.members)}


def fusion_cover(group, word):
    """The combinatorial fusion cover: {(phi, psi, zeta): phi in zeta^{(x) n_a}, psi in zeta^{(x) n_b}}."""
    n_a, n_b = letter_counts(word)
    comps = real_components(group)
    cover = set()
    for z in range(len(comps)):
        for phi in tensor_power_components(group, z, n_a):
            for psi in tensor_power_components(group, z, n_b):
                cover.add((phi, psi, z))
    return cover


def centred_error(model, a, b, labels):
    """Per member: max |centred logits - (one-hot - 1/n)| over every pair (an exact fit is < 0.1)."""
    with torch.no_grad():
        logits = model(a, b).double()
        logits = logits - logits.mean(-1, keepdim=True)
        target = torch.nn.functional.one_hot(labels, logits.shape[-1]).double() - 1.0 / logits.shape[-1]
        return (logits - target).abs().amax((1, 2))
