"""Pieces several test files share: whether a GPU runs, and whether the engine releases the GIL."""
import threading
import time

import numpy as np

import twobody as tb


def gpu_usable():
    """The CUDA backend is built and a device answers (a tiny paircount on it)."""
    if "cuda" not in tb.available_backends():
        return False
    try:
        tb.paircount(np.random.default_rng(0).random((10, 3)), [0, 0.5], backend="cuda")
        return True
    except tb.BackendError:
        return False


def assert_gil_released(run):
    """While `run()` works on another thread, pure Python on this one keeps running: it does only
    when the engine holds no GIL (checked when the run lasts long enough to tell)."""
    done = threading.Event()
    ticks = 0

    def work():
        run()
        done.set()

    t = threading.Thread(target=work)
    start = time.monotonic()
    t.start()
    while not done.is_set():
        ticks += 1  # pure Python: runs only while the engine's thread does not hold the GIL
        time.sleep(0.001)
    t.join()
    if time.monotonic() - start > 0.05:
        assert ticks > 10
