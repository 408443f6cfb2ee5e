"""Finding and loading libtftrain.so.0, the C library every class of the package calls."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

#: The environment variable that names another libtftrain to load (a build tree's
#: ``build/lib/libtftrain.so``) instead of the one the wheel carries.
LIBRARY_ENV = "TFTRAIN_LIBRARY"

#: ``TFT_API_VERSION`` of the C header this package is written against
#: (MAJOR * 10000 + MINOR * 100 + PATCH): 0.2.0 (training.init_from's refit and the
#: backtest, tft_backtest_run).
REQUIRED_API_VERSION = 200


def library_path() -> Path:
    """``$TFTRAIN_LIBRARY`` when set, else the ``libtftrain.so.0`` installed beside this module."""
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return Path(override)
    return Path(__file__).with_name("libtftrain.so.0")


def load_library() -> ctypes.CDLL:
    """Loads libtftrain, which loads LibTorch and Arrow as shared libraries (their Python
    packages are never imported), and checks that its C API is one this package can call.

    ``ctypes.CDLL``, not ``PyDLL``: every call releases the GIL, so another Python thread runs
    (and trains) while one trains.
    """
    path = library_path()
    try:
        library = ctypes.CDLL(os.fspath(path))
    except OSError as error:
        raise ImportError(
            f"tftrain: cannot load {path}: {error}. The wheel's libtftrain finds LibTorch and "
            f"Arrow in the torch and pyarrow packages installed beside it (the versions the "
            f"package pins); ${LIBRARY_ENV} names another build of the library."
        ) from error
    library.tft_api_version.restype = ctypes.c_int
    library.tft_api_version.argtypes = []
    check_api_version(library.tft_api_version(), path)
    return library


def check_api_version(found: int, path: Path) -> None:
    """Raises ``ImportError`` unless a library of API version ``found`` can run this package:
    the same major version (before 1.0 the same minor too) and no older than it needs."""
    def parts(version: int) -> tuple:
        return version // 10000, version // 100 % 100, version % 100

    major, minor, _ = parts(found)
    need_major, need_minor, _ = parts(REQUIRED_API_VERSION)
    compatible = major == need_major and (major > 0 or minor == need_minor)
    if not compatible or found < REQUIRED_API_VERSION:
        shown = ".".join(str(p) for p in parts(found))
        needed = ".".join(str(p) for p in parts(REQUIRED_API_VERSION))
        raise ImportError(
            f"tftrain: {path} has C API {shown}; this package needs {needed} or a compatible "
            f"newer one"
        )
