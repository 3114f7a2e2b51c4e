"""The benign corpus at scale: over 100,000 turns and sentences of everyday conversation and
pasted technical text, none written by the project, to measure how much ordinary text the
capture policy changes. Built from what is already on the machine, never committed: the
cache lives outside the repository (`~/.cache/xmemo/policy-benign/`, or `--cache`).

Parts, each with its source and licence:
- `locomo`: the LoCoMo conversations' turns, observations and session summaries
  (`../shared/data/locomo`; CC BY-NC 4.0, used for evaluation only).
- `aws_api_docs`: sentences of the AWS API reference shipped in botocore's service models
  (PyPI `botocore`, Apache-2.0): keys, tokens, secrets, passwords and credentials as a
  topic, and configuration that names them without holding one.
- `python_docs`: docstring paragraphs of the Python standard library (PSF-2.0, the
  interpreter's own files) and of the installed packages whose licence is permissive
  (MIT, BSD, Apache-2.0, PSF, ISC: read from each distribution's metadata).
- `python_code`: source lines of those same files (tests excluded) that name pass, key,
  token, secret, credential or password: code and configuration pasted into a note.
Texts are deduplicated; every part is sampled with a fixed seed, so a rebuild on the same
installed versions gives the same corpus."""

from __future__ import annotations

import ast
import gzip
import hashlib
import html
import importlib.metadata as md
import json
import random
import re
import sysconfig
from pathlib import Path
from typing import Iterator

DEFAULT_CACHE = Path.home() / ".cache" / "xmemo" / "policy-benign"
DEFAULT_LOCOMO = Path(__file__).resolve().parents[5] / ".." / "shared" / "data" / "locomo" / "locomo_dev.json"
LICENCES = {
    "locomo": "LoCoMo (snap-research/locomo), CC BY-NC 4.0: evaluation use",
    "aws_api_docs": "PyPI botocore service models, Apache-2.0",
    "python_docs": "Python standard library (PSF-2.0) and installed PyPI packages with MIT/BSD/Apache-2.0/PSF/ISC licences",
    "python_code": "the same files as python_docs",
}
CAPS = {"locomo": 40_000, "aws_api_docs": 60_000, "python_docs": 30_000, "python_code": 20_000}
COLLIDING = re.compile(r"(?i)pass|key|token|secret|credential|password|auth")
_PERMISSIVE = re.compile(r"(?i)\b(?:MIT|BSD|Apache|PSF|Python Software Foundation|ISC|Unlicense|0BSD|HPND)\b")
_TAG = re.compile(r"<[^>]+>")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'`])")


def _sentences(text: str) -> Iterator[str]:
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        for s in _SENTENCE_END.split(para):
            if 20 <= len(s) <= 2000:
                yield s


def locomo(path: Path) -> Iterator[str]:
    if not path.exists():
        return
    for conv in json.loads(path.read_text(encoding="utf-8")):
        for key, turns in conv["conversation"].items():
            if isinstance(turns, list):
                for t in turns:
                    if t.get("text"):
                        yield t["text"]
        for part in ("observation", "session_summary", "event_summary"):
            yield from _strings(conv.get(part))


def _strings(value) -> Iterator[str]:
    if isinstance(value, str):
        if len(value) >= 20:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def aws_api_docs() -> Iterator[str]:
    try:
        import botocore
    except ImportError:
        return
    for model in sorted(Path(botocore.__file__).parent.joinpath("data").glob("*/*/service-2.json*")):
        raw = gzip.decompress(model.read_bytes()) if model.suffix == ".gz" else model.read_bytes()
        for doc in _docs(json.loads(raw)):
            text = html.unescape(_TAG.sub(" ", doc.replace("</p>", "\n\n").replace("<li>", "\n\n")))
            yield from _sentences(text)


def _docs(node) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "documentation" and isinstance(v, str):
                yield v
            else:
                yield from _docs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _docs(v)


def _permissive_roots() -> list[Path]:
    roots = [Path(sysconfig.get_paths()["stdlib"])]
    for dist in sorted(md.distributions(), key=lambda d: (d.metadata["Name"] or "").lower()):
        meta = dist.metadata
        licence = " ".join(filter(None, [meta.get("License-Expression"), (meta.get("License") or "")[:200], *(meta.get_all("Classifier") or [])]))
        if not _PERMISSIVE.search(licence) or (meta["Name"] or "").lower() == "xmemo":
            continue
        for f in dist.files or ():
            top = str(f).split("/")[0]
            if f.suffix == ".py" and not top.endswith((".dist-info", ".data")):
                root = Path(dist.locate_file(top))
                if root not in roots:
                    roots.append(root)
    return roots


def _python_files() -> Iterator[Path]:
    for root in _permissive_roots():
        files = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for f in files:
            parts = set(f.parts)
            if parts & {"test", "tests", "testing", "idlelib", "site-packages"} - set(root.parts) or "test_" in f.name:
                continue
            yield f


def python_texts() -> tuple[list[str], list[str]]:
    docs: list[str] = []
    code: list[str] = []
    for f in _python_files():
        try:
            source = f.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                doc = ast.get_docstring(node)
                if doc:
                    docs.extend(p.strip() for p in re.split(r"\n\s*\n", doc) if 20 <= len(p.strip()) <= 2000)
        code.extend(line.strip() for line in source.splitlines() if 12 <= len(line.strip()) <= 300 and COLLIDING.search(line))
    return docs, code


PARTS = tuple(CAPS)


def build(cache: Path = DEFAULT_CACHE, locomo_path: Path = DEFAULT_LOCOMO, seed: int = 45, parts: tuple[str, ...] = PARTS) -> dict:
    """Build the corpus (the named parts) into `cache/benign.jsonl` and `cache/manifest.json`;
    returns the manifest."""
    docs, code = python_texts() if {"python_docs", "python_code"} & set(parts) else ([], [])
    makers = {"locomo": lambda: list(locomo(locomo_path.resolve())), "aws_api_docs": lambda: list(aws_api_docs()),
              "python_docs": lambda: docs, "python_code": lambda: code}
    parts = {name: makers[name]() for name in parts}
    seen: set[str] = set()
    rows: list[dict] = []
    counts = {}
    for name, texts in parts.items():
        unique = [t for t in dict.fromkeys(texts) if t not in seen]
        random.Random(seed).shuffle(unique)
        chosen = sorted(unique[: CAPS[name]])
        seen.update(chosen)
        counts[name] = len(chosen)
        rows.extend({"source": name, "text": t} for t in chosen)
    cache.mkdir(parents=True, exist_ok=True)
    body = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
    (cache / "benign.jsonl").write_text(body, encoding="utf-8")
    manifest = {"texts": len(rows), "parts": counts, "licences": LICENCES, "sha256": hashlib.sha256(body.encode()).hexdigest(),
                "colliding_texts": sum(1 for r in rows if COLLIDING.search(r["text"]))}
    (cache / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return manifest


def load(cache: Path = DEFAULT_CACHE, locomo_path: Path = DEFAULT_LOCOMO, parts: tuple[str, ...] = PARTS) -> tuple[list[dict], dict]:
    """The corpus (built first if the cache is empty) and its manifest."""
    if not (cache / "benign.jsonl").exists():
        build(cache, locomo_path, parts=parts)
    rows = [json.loads(line) for line in (cache / "benign.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return rows, json.loads((cache / "manifest.json").read_text(encoding="utf-8"))
