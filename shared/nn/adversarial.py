"""Adversarial perturbations of a classifier's inputs."""
import torch
import torch.nn.functional as F


def pgd_linf(model, x, y, eps, steps, clip=(0.0, 1.0)):
    """Untargeted L-infinity PGD (Madry et al., 2018) from x, step 2.5 eps / steps, kept in the pixel range; steps=1
    with step eps is FGSM (Goodfellow et al., 2015). Returns the perturbed inputs."""
    step = eps if steps == 1 else 2.5 * eps / steps
    x_adv = x.clone()
    for _ in range(steps):
        x_adv.requires_grad_(True)
        loss = F.cross_entropy(model(x_adv), y)
        (grad,) = torch.autograd.grad(loss, x_adv)
        with torch.no_grad():
            x_adv = x + (x_adv + step * grad.sign() - x).clamp(-eps, eps)
            x_adv = x_adv.clamp(*clip)
    return x_adv.detach()


def pgd_l2(model, x, y, eps, steps, clip=(0.0, 1.0)):
    """Untargeted l2 PGD from x (rows of x are flat inputs): normalised-gradient ascent steps of 2.5 eps / steps on
    the cross-entropy, projected onto the l2 ball of radius eps and the pixel range. Returns the perturbed inputs."""
    step = 2.5 * eps / steps
    x_adv = x.clone()
    for _ in range(steps):
        x_adv.requires_grad_(True)
        loss = F.cross_entropy(model(x_adv), y)
        (grad,) = torch.autograd.grad(loss, x_adv)
        with torch.no_grad():
            x_adv = x_adv + step * grad / grad.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            delta = x_adv - x
            delta = delta * (eps / delta.norm(dim=-1, keepdim=True).clamp_min(1e-12)).clamp(max=1.0)
            x_adv = (x + delta).clamp(*clip)
    return x_adv.detach()
