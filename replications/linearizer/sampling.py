"""Sampling the one-step model: many solver steps, or one matrix.

In the flow's latent the sampling ODE is linear, dz/dt = L(t) z with L(t) = (A_t - I) / (1 - t). As in the
released sampler it runs from t = 0 to 1 - 1/T in T - 1 steps of h = 1/T, so 1 / (1 - t) stays finite. Every
explicit step is then z <- M_k z, and B = M_{T-2} ... M_0 is the whole trajectory: one sample costs g_data^-1(B
g_noise(eps)), a Linearizer with matrix B.

Step matrices:
  euler        M = I + h L(t)
  rk4          the classical Runge-Kutta step as a matrix: K1 = L(t), K2 = L(t + h/2)(I + h/2 K1),
               K3 = L(t + h/2)(I + h/2 K2), K4 = L(t + h)(I + h K3), M = I + h/6 (K1 + 2 K2 + 2 K3 + K4)
  released_rk  the released code's "rk" matrix I + h (L(t) + 4 L(t + h/2) + L(t + h)) / 6: the stage products
               are missing, so it is a first-order step and does not equal the iterative RK4 it is compared with.
"""
import torch

from shared.nn.linearizer import Linearizer

METHODS = ("euler", "rk4", "released_rk")


def step_times(steps):
    return [k / steps for k in range(steps - 1)], 1.0 / steps


def velocity_matrix(model, t):
    a = model.time_matrix.matrix(t)
    return (a - torch.eye(a.shape[0], dtype=a.dtype, device=a.device)) / (1.0 - t)


def velocity_times(model, t, x):
    """L(t) @ x for an (n, m) matrix x through A_t's rank-r factors: O(n m r), not O(n^2 m)."""
    left, right = model.time_matrix.factors(torch.tensor([t], dtype=x.dtype, device=x.device))
    return (left[0] @ (right[0].T @ x) - x) / (1.0 - t)


def step_matrix(model, t, h, method):
    l1 = velocity_matrix(model, t)
    eye = torch.eye(l1.shape[0], dtype=l1.dtype, device=l1.device)
    if method == "euler":
        return eye + h * l1
    if method == "released_rk":
        return eye + h * (l1 + 4 * velocity_matrix(model, t + h / 2) + velocity_matrix(model, t + h)) / 6
    if method == "rk4":
        k2 = velocity_times(model, t + h / 2, eye + h / 2 * l1)
        k3 = velocity_times(model, t + h / 2, eye + h / 2 * k2)
        k4 = velocity_times(model, t + h, eye + h * k3)
        return eye + h / 6 * (l1 + 2 * k2 + 2 * k3 + k4)
    raise ValueError(f"unknown method {method!r} (allowed: {', '.join(METHODS)})")


@torch.no_grad()
def collapse(model, steps, method):
    """B = M_{T-2} ... M_0: the whole T-step trajectory as one matrix."""
    times, h = step_times(steps)
    b = None
    for t in times:
        m = step_matrix(model, t, h, method)
        b = m if b is None else m @ b
    return b


def one_step_generator(model, matrix):
    """eps -> g_data^-1(B g_noise(eps)): sampling as a single Linearizer."""
    return Linearizer(matrix, model.noise_space, model.data_space)


@torch.no_grad()
def integrate(model, z, steps, method):
    """The same ODE solved step by step on latents (batch, n), through the model's own A_t z (the training path),
    not through `velocity_matrix` / `velocity_times`: an independent computation from `collapse`."""
    times, h = step_times(steps)

    def velocity(t, z):
        return (model.time_matrix.apply(torch.tensor([t], dtype=z.dtype, device=z.device), z) - z) / (1.0 - t)

    for t in times:
        if method == "euler":
            z = z + h * velocity(t, z)
        elif method == "rk4":
            k1 = velocity(t, z)
            k2 = velocity(t + h / 2, z + h / 2 * k1)
            k3 = velocity(t + h / 2, z + h / 2 * k2)
            k4 = velocity(t + h, z + h * k3)
            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        else:
            raise ValueError(f"iterative solving supports euler and rk4, not {method!r}")
    return z


@torch.no_grad()
def many_steps(model, eps, steps, method):
    return model.data_space.decode(integrate(model, model.noise_space.encode(eps), steps, method))
