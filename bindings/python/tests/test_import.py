"""``import tftrain`` loads libtftrain and, through it, LibTorch and Arrow as shared libraries,
without importing the torch or pyarrow Python packages."""

from __future__ import annotations

import json
import subprocess
import sys


def test_import_loads_shared_libraries_only() -> None:
    probe = (
        "import json, sys, tftrain\n"
        "maps = open('/proc/self/maps').read()\n"
        "print(json.dumps({'modules': sorted(m for m in ('torch', 'pyarrow', 'pandas', 'numpy')\n"
        "                                    if m in sys.modules),\n"
        "                  'libtorch_cpu': 'libtorch_cpu.so' in maps,\n"
        "                  'libarrow': 'libarrow.so' in maps,\n"
        "                  'version': tftrain.__version__, 'api': tftrain.api_version()}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    seen = json.loads(result.stdout)
    assert seen["modules"] == []
    assert seen["libtorch_cpu"] and seen["libarrow"]
    major, minor, patch = (int(p) for p in seen["version"].split("."))
    assert seen["api"] == major * 10000 + minor * 100 + patch
