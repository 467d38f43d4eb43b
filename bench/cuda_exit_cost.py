#!/usr/bin/env python3
"""What a process pays the CUDA driver at exit (issue 25's small jobs): a child that starts the
driver and the primary context through ctypes, then leaves by a normal exit (the driver's teardown
runs) or by os._exit (none of the process's exit handlers run); both timed from outside, best of 5."""
import subprocess
import sys
import time

CHILD = """
import ctypes, os, sys
cu = ctypes.CDLL("libcuda.so.1")
assert cu.cuInit(0) == 0
dev = ctypes.c_int(); ctx = ctypes.c_void_p()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
p = ctypes.c_void_p(); assert cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 26)) == 0
if sys.argv[1] == "fast":
    os._exit(0)
"""


def best(mode, runs=5):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", CHILD, mode], check=True)
        times.append(time.perf_counter() - t)
    return min(times)


if __name__ == "__main__":
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    py = time.perf_counter() - t0
    normal, fast = best("normal"), best("fast")
    print(f"python alone {py:.3f} s; driver + context + 64 MB, normal exit {normal:.3f} s, os._exit {fast:.3f} s: "
          f"the teardown at exit {normal - fast:+.3f} s")
