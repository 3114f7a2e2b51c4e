"""The Lambda layer's `requirements.txt`, generated from pyproject's base dependencies and
its `service` extra (`make requirements`; a unit test fails when the checked-in file is stale)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

HEADER = "# Generated from pyproject.toml ([project.dependencies] + the `service` extra) by `make requirements`; do not edit.\n"


def layer_requirements(pyproject: Path) -> str:
    project = tomllib.loads(pyproject.read_text())["project"]
    deps = project["dependencies"] + project["optional-dependencies"]["service"]
    return HEADER + "".join(f"{d}\n" for d in sorted(deps, key=str.lower))


def main() -> None:
    sys.stdout.write(layer_requirements(Path(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml")))


if __name__ == "__main__":
    main()
