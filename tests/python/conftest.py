"""Shared fixtures: fresh random inputs each run (the seed is printed on failure), the built CLI."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rng(request):
    seed = int.from_bytes(os.urandom(4), "little")
    request.node.user_properties.append(("seed", seed))
    print(f"seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(scope="session")
def cli():
    """The twobody command line: $TWOBODY_CLI, build/twobody, or twobody on PATH; skipped without."""
    for candidate in (os.environ.get("TWOBODY_CLI"), ROOT / "build" / "twobody", shutil.which("twobody")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    pytest.skip("no twobody command line built")
