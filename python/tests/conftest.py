# Paths for the tests: the source tree, and the stagger binary of the same build (ctest sets both).
import os
import pathlib

import pytest

SOURCE_DIR = pathlib.Path(os.environ.get("STAGGER_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BINARY = pathlib.Path(os.environ.get("STAGGER_BINARY", SOURCE_DIR / "build" / "stagger"))


@pytest.fixture
def scenes():
    return SOURCE_DIR / "scenes"


@pytest.fixture
def binary():
    return BINARY
