"""The machine's devices as a run sees them: the backends built in, the visible GPUs, and the budget
of GPU memory runs plan for (the CLI's --device-memory)."""

from . import _twobody


def available_backends() -> list:
    """The backends built into this module: 'cpu', and 'cuda' when built with CUDA."""
    return list(_twobody.available_backends())


def visible_devices() -> list:
    """The CUDA devices ``devices=`` may name: [0, 1, ..., n - 1]; [] without CUDA or a GPU."""
    return list(_twobody.visible_devices())


def set_device_memory_limit(size) -> None:
    """The GPU memory a run may plan for on each device, like the CLI's ``--device-memory``: bytes
    (an int) or a size such as ``"2G"`` or ``"512M"``; ``None`` or ``0``: what the device has free.
    Larger catalogues then stream through the device in chunks, with the same results. Process-wide,
    for every device, until set again."""
    if isinstance(size, bool) or not (size is None or isinstance(size, (int, str))):
        raise TypeError(f"set_device_memory_limit: expected bytes (int), a size such as '2G', or None; got {type(size).__name__}")
    unlimited = size is None or (isinstance(size, int) and size == 0)
    _twobody.set_device_memory_limit(0 if unlimited else _twobody.parse_memory_size(str(size), "device memory limit"))


def device_memory_limit() -> int:
    """The budget set by :func:`set_device_memory_limit` in bytes (0: none, the device's free memory)."""
    return int(_twobody.device_memory_limit())
