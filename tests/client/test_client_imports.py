"""`xmemo.client` needs httpx and pydantic only (the `client` extra): in a subprocess where
every other third-party package (numpy, tiktoken, boto3, Powertools, pydantic-settings,
PyJWT, ...) and every service module of `xmemo` (the store, tools, config, ...) is
unimportable, the client still imports and works against the local gateway."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.e2e

# What `pip install 'xmemo[client]'` brings: httpx and pydantic and their own dependencies.
ALLOWED_PACKAGES = {
    "httpx", "httpcore", "h11", "anyio", "sniffio", "idna", "certifi",
    "pydantic", "pydantic_core", "typing_extensions", "annotated_types", "typing_inspection",
}
# The modules of `xmemo` the client may use: itself, the shapes it shares with the service.
ALLOWED_XMEMO = ("xmemo", "xmemo.client", "xmemo.errors", "xmemo.models", "xmemo.results", "xmemo.credentials")

SCRIPT = textwrap.dedent(
    """
    import importlib.abc, importlib.machinery, json, os, sys, sysconfig

    before = set(sys.modules)  # what the interpreter loaded at start-up (site, .pth hooks)
    allowed, allowed_xmemo = set(json.loads(sys.argv[1])), tuple(json.loads(sys.argv[2]))
    installed = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    refused = []

    def third_party(top):
        spec = importlib.machinery.PathFinder.find_spec(top)
        where = (spec.origin or "") if spec and spec.origin else str(next(iter(spec.submodule_search_locations or []), "")) if spec else ""
        return any(where.startswith(d) for d in installed)

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            top = name.partition(".")[0]
            if top == "xmemo":
                ok = name == "xmemo" or any(name == a or name.startswith(a + ".") for a in allowed_xmemo)
            else:
                ok = top in allowed or top in sys.stdlib_module_names or not third_party(top)
            if not ok:
                refused.append(name)
                raise ModuleNotFoundError(f"blocked: {name}", name=name)
            return None

    sys.meta_path.insert(0, Blocker())
    from xmemo.client import XMemo

    with XMemo(os.environ["GW_URL"], token=os.environ["GW_TOKEN"]) as m:
        ref = m.remember("imported with httpx and pydantic only").memory.reference
        assert m.recall("httpx and pydantic only").results[0].reference == ref
    new = set(sys.modules) - before
    loaded = sorted({n.partition(".")[0] for n in new if n.partition(".")[0] == "xmemo" or third_party(n.partition(".")[0])})
    loaded += sorted(n for n in sys.modules if n.startswith("xmemo."))
    print(json.dumps({"loaded": loaded, "refused": sorted(set(refused))}))
    """
)


def test_the_client_imports_and_works_with_httpx_and_pydantic_only(gateway, user):
    env = {**os.environ, "GW_URL": gateway.url, "GW_TOKEN": gateway.token(user)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(sorted(ALLOWED_PACKAGES)), json.dumps(ALLOWED_XMEMO)],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    packages = {n for n in report["loaded"] if "." not in n}
    assert packages <= ALLOWED_PACKAGES | {"xmemo"} and {"httpx", "pydantic", "xmemo"} <= packages
    assert "xmemo.client" in report["loaded"] and "xmemo.results" in report["loaded"]
    for heavy in ("numpy", "tiktoken", "boto3", "aws_lambda_powertools", "opensearchpy", "xmemo.store", "xmemo.tools", "xmemo.config"):
        assert heavy not in report["loaded"]


def test_the_blocker_does_block(gateway):
    """The same subprocess refuses a service module: the test above cannot pass vacuously."""
    probe = SCRIPT.replace("from xmemo.client import XMemo", "import xmemo.tools")
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(sorted(ALLOWED_PACKAGES)), json.dumps(ALLOWED_XMEMO)],
        env={**os.environ, "GW_URL": gateway.url, "GW_TOKEN": "unused"}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode != 0 and "blocked: " in done.stderr

