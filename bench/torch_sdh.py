"""PyTorch peer for the SDH benchmark: cdist + bucketize + bincount on the GPU, in row chunks,
on the same kind of points (uniform in the unit cube), unique pairs per second."""
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
    logn = int(sys.argv[1]) if len(sys.argv) > 1 else 18
    n = 1 << logn
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
    print(f"pytorch cdist+bucketize+bincount,{n},256,{s:.4f},{pairs / s * 1e-9:.2f},0")


if __name__ == "__main__":
    main()
