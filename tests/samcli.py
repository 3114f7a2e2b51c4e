"""The SAM CLI of .venv and the environment it runs in for the tests (no AWS credentials, a
fixed region, no telemetry, the template's Python runtime on PATH for `sam build`)."""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import ROOT
from xmemo.local.template import load_template

TEMPLATE = ROOT / "template.yaml"
SAM = Path(sys.executable).with_name("sam")


def template_runtime() -> str:
    return load_template(TEMPLATE)["Globals"]["Function"]["Runtime"]  # e.g. python3.13


def template_architecture() -> str:
    (arch,) = load_template(TEMPLATE)["Globals"]["Function"]["Architectures"]
    return arch


def sam_env() -> dict[str, str]:
    """A copy of the environment the SAM CLI runs in. It is read from `os.environ` once, from
    the main thread: tests/sam_local's worker threads must not iterate `os.environ` while
    pytest rewrites PYTEST_CURRENT_TEST in it (a KeyError mid-iteration)."""
    return dict(_sam_env())


@functools.cache
def _sam_env() -> dict[str, str]:
    env = {**os.environ, "AWS_DEFAULT_REGION": "us-east-1", "SAM_CLI_TELEMETRY": "0"}
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        env.pop(name, None)
    runtime = template_runtime()
    on_path = shutil.which(runtime, path=env.get("PATH"))
    if on_path is None or subprocess.run([on_path, "--version"], capture_output=True).returncode != 0:  # pyenv shims fail
        root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
        version = runtime.removeprefix("python")
        found = sorted(glob.glob(f"{root}/versions/{version}*/bin/{runtime}"))
        assert found, f"sam build needs {runtime} on PATH (or under pyenv); none found"
        env["PATH"] = f"{Path(found[-1]).parent}{os.pathsep}{env['PATH']}"
    return env


@functools.cache
def sam_build() -> Path:
    """`sam build` of template.yaml, once per test run (the integration test checks what it
    packaged; tests/sam_local runs it in Lambda containers)."""
    out = Path(tempfile.mkdtemp(prefix="xmemo-sam-build-"))
    result = subprocess.run([str(SAM), "build", "-t", str(TEMPLATE), "--build-dir", str(out / "build"), "--cache-dir", str(out / "cache")],
                            cwd=ROOT, env=sam_env(), capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return out / "build"


NO_VALUE = {"Ref": "AWS::NoValue"}


def resolve_no_value_ifs(template: dict, overrides: dict[str, str]) -> dict:
    """The template with every `Fn::If` that has an `AWS::NoValue` branch decided, for the
    given parameters. SAM CLI's resolver gives up on those (it resolves both branches and
    rejects the None of NoValue), and leaves them as they are: an environment variable then
    becomes "" (OAuthFunction lost XMEMO_PUBLIC_BASE_URL) and a layer is dropped (EmbedderLayer).
    The conditions are evaluated by SAM CLI's own resolver."""
    from samcli.lib.intrinsic_resolver.intrinsic_property_resolver import IntrinsicResolver
    from samcli.lib.intrinsic_resolver.intrinsics_symbol_table import IntrinsicsSymbolTable
    from samcli.lib.providers.sam_base_provider import SamBaseProvider

    params = SamBaseProvider._get_parameter_values(template, overrides)
    resolver = IntrinsicResolver(template=template, symbol_resolver=IntrinsicsSymbolTable(template=template, logical_id_translator=params))

    def decide(node):
        if isinstance(node, dict) and list(node) == ["Fn::If"] and NO_VALUE in node["Fn::If"][1:]:
            condition, if_true, if_false = node["Fn::If"]
            chosen = if_true if resolver.intrinsic_property_resolver({"Fn::If": [condition, True, False]}, ignore_errors=False) else if_false
            return decide(chosen)
        if isinstance(node, dict):
            return {k: v for k, v in ((k, decide(v)) for k, v in node.items()) if v != NO_VALUE}
        if isinstance(node, list):
            return [v for v in (decide(v) for v in node) if v != NO_VALUE]
        return node

    return {**template, **{part: decide(template[part]) for part in ("Globals", "Resources") if part in template}}
