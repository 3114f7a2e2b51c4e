"""The test suite; `ROOT` is the repository (where `xmemo serve` finds template.yaml)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
