"""The engine's error kinds as Python exceptions (twobody::ErrorKind, include/twobody/error.hpp).

Each class also derives from the built-in exception a Python user would catch for that kind, so
``except ValueError`` catches bad data and bad requests alike.
"""


class TwobodyError(Exception):
    """Any error the twobody engine reports; ``exit_code`` is the CLI's for the same error."""

    exit_code = 1


class InputError(TwobodyError, ValueError):
    """The data: a NaN or infinite coordinate, wrong shapes or dtype, an unreadable file."""

    exit_code = 3


class ConfigError(TwobodyError, ValueError):
    """The request: bins not increasing, r_max beyond half the box, an unsupported dimension."""

    exit_code = 4


class ResourceError(TwobodyError, MemoryError):
    """Memory or output capacity exhausted (a pair list or matrix larger than allowed)."""

    exit_code = 5


class BackendError(TwobodyError, RuntimeError):
    """A backend that is not built or has no device, or a device call that failed."""

    exit_code = 6


class OutputError(TwobodyError, OSError):
    """An output that could not be written whole."""

    exit_code = 7


class InternalError(TwobodyError, RuntimeError):
    """A bug in twobody: please report it."""

    exit_code = 1


# Keyed by the engine's ErrorKind values (its exit codes).
BY_KIND = {1: InternalError, 3: InputError, 4: ConfigError, 5: ResourceError, 6: BackendError, 7: OutputError}
