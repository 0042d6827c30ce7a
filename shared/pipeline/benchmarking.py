"""Speed measured as ratios within one run: best-of-n timings and the machine's own fp32 matmul peak."""
import time

import torch


def synchronizer(device):
    """A function that waits for the device's queued work (kernels run asynchronously on CUDA)."""
    return (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)


def best_seconds(fn, repeats, sync):
    """Best wall time of `repeats` calls of fn, after one warm-up call."""
    fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return best


def matmul_peak(device, sync, shapes):
    """(best FLOP/s, {shape: FLOP/s}) of fp32 matmuls of the given (m, k, n) shapes on this device."""
    rates = {}
    for m, k, n in shapes:
        a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
        rates[f"{m}x{k}x{n}"] = 2 * m * k * n / best_seconds(lambda: a @ b, 10, sync)
    return max(rates.values()), rates
