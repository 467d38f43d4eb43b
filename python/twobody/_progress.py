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
        self._last = 0.0
        self._count = 1

    def __call__(self, fraction):
        # A statistic of several counts (DD, DR, RR, ...) reports each count's fraction in turn:
        # a fall is the next count, shown as such rather than as the bar going back.
        if fraction < self._last - 0.25:
            self._count += 1
            if self._bar is not None:
                self._bar.reset(total=100)  # (the time left is the new count's)
                self._bar.set_description(self._label(), refresh=False)
        self._last = fraction
        if self._bar is None:
            if not self._always and time.monotonic() - self._start < _QUIET_SECONDS:
                return
            self._bar = _tqdm(total=100, unit="%", desc=self._label(), leave=False,
                              bar_format="{l_bar}{bar}| {n:.0f}% [{elapsed}<{remaining}]")
        self._bar.n = min(100.0, 100.0 * fraction)
        self._bar.refresh()

    def _label(self):
        return self._description if self._count == 1 else f"{self._description} (count {self._count})"

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
