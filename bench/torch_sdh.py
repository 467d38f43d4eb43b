"""PyTorch peer for the SDH benchmark: cdist + bucketize + bincount on the GPU, in row chunks,
unique pairs per second. With --points FILE (an N x 3 .npy, e.g. `twobody generate uniform -n N
--box 1 --seed 1000+log2(N)`, the very points of twobody_gpu_bench's SDH rows) on those points, as
float32; else on torch.rand points of the same kind (uniform in the unit cube).

  python3 bench/torch_sdh.py [LOGN] [--points FILE]"""
import sys
import time

import torch


def sdh(x, edges, chunk=2048):
    n = x.shape[0]
    hist = torch.zeros(len(edges) + 1, dtype=torch.int64, device=x.device)
    for i0 in range(0, n, chunk):
        d = torch.cdist(x[i0:i0 + chunk], x[i0:])  # rows i, columns j >= i0
        rows = torch.arange(i0, min(i0 + chunk, n), device=x.device)[:, None]
        cols = torch.arange(i0, n, device=x.device)[None, :]
        b = torch.bucketize(d[cols > rows], edges, right=True)
        hist += torch.bincount(b, minlength=len(edges) + 1)
    return hist


def main():
    args = sys.argv[1:]
    points = None
    if "--points" in args:
        k = args.index("--points")
        points = args[k + 1]
        del args[k:k + 2]
    logn = int(args[0]) if args else 18
    n = 1 << logn
    if points:
        import numpy as np
        p = np.load(points)
        if p.ndim != 2 or p.shape[1] != 3 or p.shape[0] != n:
            sys.exit(f"{points}: expected {n} x 3 points, found {p.shape}")
        x = torch.from_numpy(np.ascontiguousarray(p, dtype=np.float64)).to("cuda").to(torch.float32)
    else:
        g = torch.Generator(device="cuda").manual_seed(logn)
        x = torch.rand(n, 3, device="cuda", generator=g, dtype=torch.float32)
    edges = torch.linspace(0, 3 ** 0.5 * 1.000001, 257, device="cuda")
    sdh(x[:4096], edges)
    torch.cuda.synchronize()
    t = time.perf_counter()
    h = sdh(x, edges)
    torch.cuda.synchronize()
    s = time.perf_counter() - t
    pairs = n * (n - 1) / 2
    assert int(h.sum()) == pairs
    name = "pytorch cdist+bucketize+bincount" + (" (same points)" if points else "")
    print(f"{name},{n},256,{s:.4f},{pairs / s * 1e-9:.2f},0")


if __name__ == "__main__":
    main()
