"""Every statistic on the GPU (backend='cuda') equal to the CPU's, and Ctrl-C stopping a GPU run.
Skipped where the module has no CUDA backend or no GPU is visible."""

import _thread
import time

import numpy as np
import pytest

import twobody as tb
from support import gpu_usable


pytestmark = pytest.mark.skipif(not gpu_usable(), reason="no CUDA backend or no GPU")


def same(cpu, gpu, what):
    assert cpu.columns.keys() == gpu.columns.keys(), what
    for name, c in cpu.columns.items():  # every column the same bits, counts and sums alike
        np.testing.assert_array_equal(gpu.columns[name], c, err_msg=f"{what}: {name}")
    if cpu.matrix is not None:
        np.testing.assert_array_equal(gpu.matrix, cpu.matrix, err_msg=f"{what}: matrix")


def both(f, *args, **kwargs):
    return f(*args, backend="cpu", **kwargs), f(*args, backend="cuda", **kwargs)


def test_every_statistic_equals_the_cpu(rng):
    a = rng.random((3000, 3)) * 100
    b = rng.random((2000, 3)) * 100
    w = rng.random(3000) + 0.5
    edges = tb.log_bins(0.5, 20, 12)
    sky = np.column_stack([rng.random(3000) * 60, rng.random(3000) * 40 - 20])
    sky_r = np.column_stack([rng.random(6000) * 60, rng.random(6000) * 40 - 20])
    field = rng.random(2000)
    cases = {
        "paircount": lambda **k: tb.paircount(a, edges, data2=b, box=100.0, ravg=True, **k),
        "paircount weighted": lambda **k: tb.paircount(a, edges, weights=w, **k),
        "sdh": lambda **k: tb.sdh(a, nbins=64, **k),
        "rdf": lambda **k: tb.rdf(a, edges, 100.0, **k),
        "angular": lambda **k: tb.angular(sky, tb.log_bins(0.1, 10, 10), **k),
        "xi box": lambda **k: tb.xi(a, edges, box=100.0, **k),
        "xi randoms jackknife": lambda **k: tb.xi(a, edges, randoms=b, jackknife=4, **k),
        "wtheta": lambda **k: tb.wtheta(sky, tb.log_bins(0.1, 10, 10), randoms=sky_r, jackknife=4, **k),
        "rppi": lambda **k: tb.rppi(a, edges, 20.0, npibins=4, box=100.0, **k),
        "smu": lambda **k: tb.smu(a, edges, 5, **k),
        "wp": lambda **k: tb.wp(a, edges, 20.0, npibins=4, box=100.0, **k),
        "xi_smu": lambda **k: tb.xi_smu(a, edges, 4, box=100.0, multipoles=True, **k),
        "kk": lambda **k: tb.kk(a, w, edges, **k),
        "nk": lambda **k: tb.nk(a, b, field, edges, **k),
        "neighbours": lambda **k: tb.neighbours(a, 5.0, rmin=1.0, box=100.0, **k),
        "matrix": lambda **k: tb.matrix(a[:500], data2=b[:300], **k),
        "kde": lambda **k: tb.kde(a, 2.0, **k),
    }
    for what, f in cases.items():
        cpu, gpu = f(backend="cpu"), f(backend="cuda")
        assert gpu.backend == "cuda", what
        same(cpu, gpu, what)
    g_cpu = tb.md.rdf(np.stack([a, a[::-1]]), box=100.0, rmax=20.0, nbins=40, backend="cpu")
    g_gpu = tb.md.rdf(np.stack([a, a[::-1]]), box=100.0, rmax=20.0, nbins=40, backend="cuda")
    np.testing.assert_array_equal(g_gpu.npairs, g_cpu.npairs)


def test_ctrl_c_stops_a_gpu_run_within_a_second(rng):
    # A weighted histogram of 2^21 points on the GPU's generic agent: tens of seconds to the end.
    a = rng.random((1 << 21, 3))
    w = rng.random(1 << 21) + 0.5
    calls = []

    def interrupt(f):
        calls.append((time.monotonic(), f))
        if len(calls) == 1:
            _thread.interrupt_main()

    with pytest.raises(KeyboardInterrupt):
        tb.paircount(a, tb.linear_bins(0, 1.8, 256), weights=w, backend="cuda", path="brute", progress=interrupt)
    stopped = time.monotonic()
    assert calls and calls[0][1] < 0.5, calls[:3]  # interrupted early in the kernel
    assert stopped - calls[0][0] < 1.0, f"{stopped - calls[0][0]:.2f} s from the Ctrl-C to the exception"
    # The device is whole afterwards.
    small = a[:2000]
    cpu, gpu = both(tb.paircount, small, [0, 0.1, 0.5], weights=w[:2000])
    same(cpu, gpu, "after the interrupt")


def test_pair_expressions_and_matrices_on_the_gpu(rng):
    # The expression's kernel generated for the GPU (NVRTC, nvJitLink): the CPU's bits, on the
    # tiles and on the cell grid of a --where on the distance; matrices too.
    a = rng.random((1200, 3)) * 10
    t = rng.integers(0, 4, 1200).astype(float)
    for emit, extra in [("sum", {}), ("histogram", {"bins": np.linspace(0, 18, 30)}), ("count", {"bins": [0, 4]}),
                        ("pairs", {"bins": [0, 2]}), ("per-point", {"per_point": "min"})]:
        for where, path in [("", "auto"), ("norm(a - b) < 2", "grid")]:
            kw = dict(columns={"t": t}, emit=emit, where=where or None, path=path, **extra)
            cpu, gpu = both(tb.custom, a, "sqrt(sum((a-b)^2)) * (1 + a.t) - b.t", **kw)
            same(cpu, gpu, f"custom {emit} where {where!r}")
    v = rng.standard_normal((300, 700))
    for kernel in ("pearson", "l2", "cosine", "sum(abs(a - b))"):
        # summation='ordered': the rule's bits; the default takes the float64 GEMM for the dot-like
        # kernels at d >= 64, within its stated bound (docs/matrices.md), here far inside 1e-12.
        cpu, gpu = both(tb.matrix, v, kernel=kernel, summation="ordered")
        np.testing.assert_array_equal(gpu, cpu, err_msg=kernel)
        np.testing.assert_allclose(tb.matrix(v, kernel=kernel, backend="cuda"), cpu, rtol=0, atol=1e-12, err_msg=kernel)


def test_a_device_memory_budget_streams_the_sets_with_the_same_counts(rng):
    """set_device_memory_limit below what the sets need in one piece: w(theta) with randoms and
    jackknife regions, every count in chunks, the same columns as without the budget."""
    data = np.column_stack([rng.random(200000) * 40, rng.random(200000) * 30 - 15])
    randoms = np.column_stack([rng.random(300000) * 40, rng.random(300000) * 30 - 15])
    edges = tb.log_bins(0.05, 3, 10)
    whole = tb.wtheta(data, edges, randoms=randoms, jackknife=8, backend="cuda")
    try:
        tb.set_device_memory_limit("16M")
        assert tb.device_memory_limit() == 16 << 20
        budget = tb.wtheta(data, edges, randoms=randoms, jackknife=8, backend="cuda")
    finally:
        tb.set_device_memory_limit(None)
    same(whole, budget, "wtheta under a 16 MiB budget")


def test_forces_equal_the_cpu(rng):
    # Forces on the GPU (Lennard-Jones in a box, Coulomb with charges, open): the CPU's bits.
    x = rng.random((4000, 3)) * 16.0
    q = rng.random(4000) * 2 - 1
    for kw in ({"cutoff": 2.5, "box": 16.0}, {"cutoff": 3.0, "potential": "coulomb", "charges": q}):
        cpu, gpu = tb.forces(x, backend="cpu", **kw), tb.forces(x, backend="cuda", **kw)
        np.testing.assert_array_equal(gpu.forces, cpu.forces)
        np.testing.assert_array_equal(gpu.energy, cpu.energy)
        np.testing.assert_array_equal(gpu.partners, cpu.partners)
        assert (gpu.total_energy, gpu.virial) == (cpu.total_energy, cpu.virial)
