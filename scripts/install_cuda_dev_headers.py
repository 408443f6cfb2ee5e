"""Installs the C headers a CUDA build of tftrain compiles against that the torch wheel lacks.

c10d's ProcessGroupNCCL.hpp (src/distributed) includes NCCL's nccl.h and, through
ATen/cuda/CUDAContext.h, the headers of cuBLAS, cuSPARSE, cuSOLVER and CCCL (nv/target). The
torch wheel depends on the pip packages that carry them, at pinned versions, but those packages
are mostly shared libraries (about 1 GB) that a build never links: ProcessGroupNCCL itself is
compiled into libtorch_cuda. So this downloads exactly those pins and unpacks only their
`nvidia/*/include/` folders into the venv's site-packages, where a full install would put them
(and where cmake/TftTorch.cmake and src/distributed look). A marker file records the pins, so
a second run does nothing.

Run with the venv's python: `$venv/bin/python scripts/install_cuda_dev_headers.py`.
"""
import importlib.metadata
import pathlib
import re
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

# The packages whose headers c10d's NCCL header needs, by their wheel files' name prefixes.
HEADER_PACKAGES = re.compile(r"nvidia[-_](nccl|cublas|cusparse|cusolver|cuda[-_]cccl)([-_]cu\d+)?"
                             r"([-_=<>~!]|$)")
CUDA_TOOLKIT_EXTRAS = "cublas,cusparse,cusolver,cccl"


def requirements_from_torch():
    """The torch wheel's own pins for those packages (empty for a CPU-only wheel)."""
    wanted = []
    for requirement in importlib.metadata.requires("torch") or []:
        spec = requirement.split(";")[0].strip()
        toolkit = re.match(r"cuda-toolkit\[[^\]]*\]\s*(==\s*[0-9.]+)", spec)
        if toolkit:  # CUDA 13 wheels: one meta-package with extras
            wanted.append(f"cuda-toolkit[{CUDA_TOOLKIT_EXTRAS}]{toolkit.group(1).replace(' ', '')}")
        elif HEADER_PACKAGES.match(spec):
            wanted.append(spec.replace(" ", ""))
    return wanted


def main():
    requirements = requirements_from_torch()
    if not requirements:
        print("install_cuda_dev_headers: this torch wheel needs no CUDA libraries; nothing to do")
        return 0
    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    marker = site / "nvidia" / ".tftrain-dev-headers"
    pins = "\n".join(requirements) + "\n"
    if marker.is_file() and marker.read_text() == pins:
        return 0
    print(f"install_cuda_dev_headers: headers of {' '.join(requirements)}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tftrain-cuda-headers-") as download_dir:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", download_dir,
                        *requirements], check=True)
        unpacked = 0
        for wheel in sorted(pathlib.Path(download_dir).glob("*.whl")):
            if not HEADER_PACKAGES.match(wheel.name):
                continue
            with zipfile.ZipFile(wheel) as archive:
                headers = [name for name in archive.namelist()
                           if re.match(r"nvidia/[^/]+/include/.", name)]
                archive.extractall(site, headers)
                unpacked += len(headers)
    if unpacked == 0:
        print("install_cuda_dev_headers: the downloaded wheels held no headers", file=sys.stderr)
        return 1
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(pins)
    print(f"install_cuda_dev_headers: {unpacked} files under {site / 'nvidia'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
