"""Progress of a long run: a tqdm bar when tqdm is installed, or the caller's own callable."""

import time

try:
    from tqdm.auto import tqdm as _tqdm
except ImportError:  # tqdm is optional
    _tqdm = None

# A run shorter than this shows no bar (as the CLI's bar, which appears after one second).
_QUIET_SECONDS = 1.0


class ProgressBar:
    """Called by the engine with the fraction done (0..1), from one thread at a time."""

    def __init__(self, always=False, description=None):
        self._always = always
        self._description = description
        self._start = time.monotonic()
        self._bar = None

    def __call__(self, fraction):
        if self._bar is None:
            if not self._always and time.monotonic() - self._start < _QUIET_SECONDS:
                return
            self._bar = _tqdm(total=100, unit="%", desc=self._description, leave=False,
                              bar_format="{l_bar}{bar}| {n:.0f}% [{elapsed}<{remaining}]")
        self._bar.n = min(100.0, 100.0 * fraction)
        self._bar.refresh()

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def make_progress(progress, description):
    """The callable the engine calls, or None: progress is None (a bar for a long run when tqdm
    is installed), True (a bar from the start), False (none) or a callable taking the fraction."""
    if progress is False:
        return None
    if callable(progress):
        return progress
    if _tqdm is None:
        return None
    return ProgressBar(always=progress is True, description=description)
