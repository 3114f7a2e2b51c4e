"""Tenant isolation, property-based: random principals (owners, teams, scopes), random
memories in random boundaries, random calls of every tool through the gateway with real
signed tokens. After every call the answer is checked against the ground-truth model:

- no marker or reference of a memory the caller may not see appears anywhere in the raw
  answer (body, error text, headers), whatever the call;
- list / search answers are exactly the visible matching set, counts (`deleted`, the
  retrieval plan's candidates, the pack's used + dropped) are exactly the visible ones;
- a reference the caller cannot see gets the same 404 body as one that never existed;
- `forget` deletes exactly what the caller may reach: after each example the store itself
  (the SQLite file, or the OpenSearch index read with a bare `match_all`) is compared with
  the model (nothing else deleted, nothing lost, FTS in step).

Run on both stores (SQLite; OpenSearch = osmem-server): REST and MCP (`tools/call` on
`/mcp/full`) through the gateway in-process (many cases, fast), and through the gateway
subprocess over real HTTP."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from xmemo.config import Settings
from xmemo.errors import NotFound
from xmemo.models import MEMORY_TYPES
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore

from . import cases
from .model import MARKER, REFERENCE, VOCAB, Caller, Filters, R, T, W, World, loose_match, strict_match
from .surfaces import HttpGateway, InProcessGateway, McpFull, OpenSearchIndex, stored_in

STEPS = 50  # calls per generated world
# worlds per surface and store, each store the same: 2,000 REST and 600 MCP in-process, and
# 600 REST and 600 MCP over HTTP (the gateway subprocess)
PLANS = {("rest-inprocess", "sqlite"): 40, ("mcp-inprocess", "sqlite"): 12, ("rest-http", "sqlite"): 12, ("mcp-http", "sqlite"): 12,
         ("rest-inprocess", "opensearch"): 40, ("mcp-inprocess", "opensearch"): 12, ("rest-http", "opensearch"): 12,
         ("mcp-http", "opensearch"): 12}
NOT_FOUND = {"error": {"code": "not_found", "message": NotFound().message}}
FAKE_REF = "mem_00000000000000000000000000"
BUCKETS, PROJECTS, TAGS = ("default", "b1", "b2"), ("p1", "p2"), ("k1", "k2")


# ---------------------------------------------------------------------------------------
# generated worlds
@st.composite
def worlds(draw):
    """Names unique to the example, chosen to collide where collisions are dangerous: an
    owner called like another owner's project boundary, a team named like an owner."""
    n = uuid.uuid4().hex[:6]
    owners = [f"u{n}a", f"u{n}b", f"u{n}a/project:p1"]
    teams = [f"t{n}x", f"t{n}y", f"u{n}b"]
    callers = []
    for i in range(4):
        callers.append(
            Caller(
                label=f"c{i}",
                owner=draw(st.sampled_from(owners)),
                teams=frozenset(draw(st.lists(st.sampled_from(teams), max_size=2, unique=True))),
                scopes=frozenset(draw(st.sets(st.sampled_from([R, W, T]), min_size=1))),
            )
        )
    contents = []
    for i in range(5):
        words = draw(st.lists(st.sampled_from(VOCAB), min_size=2, max_size=3, unique=True))
        contents.append(" ".join(words) + f" qz{n}{i}")
    return n, callers, teams, contents


def maybe(draw, values, none_weight: int = 3):
    """None most of the time (each filter narrows; several at once rarely match anything)."""
    return draw(st.sampled_from([None] * none_weight * len(values) + list(values)))


def filters(draw, teams, caller: Caller, *, reads: bool = True) -> Filters:
    mine = sorted(caller.teams)
    return Filters(
        team=maybe(draw, mine * 2 + list(teams), 1) if mine else maybe(draw, teams, 2),
        project=maybe(draw, PROJECTS),
        bucket=maybe(draw, BUCKETS),
        type=maybe(draw, MEMORY_TYPES[:3]),
        tags=tuple(t for t in [maybe(draw, TAGS)] if t),
        include_temporary=draw(st.booleans()) if reads else False,
    )


def body_of(f: Filters) -> dict:
    out = {k: v for k, v in vars(f).items() if v not in (None, (), False)}
    if "tags" in out:
        out["tags"] = list(out["tags"])
    return out


# ---------------------------------------------------------------------------------------
class Run:
    """One generated world driven through one surface, checked call by call."""

    def __init__(self, surface, world: World, callers: list[Caller], teams, contents, draw):
        self.s, self.world, self.teams, self.contents, self.draw = surface, world, teams, contents, draw
        self.callers = [
            Caller(c.label, c.owner, c.teams, c.scopes, surface.token(c.owner, sorted(c.scopes), sorted(c.teams))) for c in callers
        ]
        self.log: list[str] = []

    # -- the invariant every answer must keep -----------------------------------------------
    def check_no_leak(self, c: Caller, answer, request_text: str, written: str | None = None) -> None:
        markers, refs = self.world.allowed_tokens(c)
        if written is not None:  # the memory this very call created: the writer's own
            refs.add(written)
        echoed_m, echoed_r = set(MARKER.findall(request_text)), set(REFERENCE.findall(request_text))
        leaked_m = set(MARKER.findall(answer.raw)) - markers - echoed_m
        leaked_r = set(REFERENCE.findall(answer.raw)) - refs - echoed_r
        assert not leaked_m and not leaked_r, f"LEAK to {c}: markers {leaked_m} refs {leaked_r}\n{self.trace()}\n{answer.text[:2000]}"

    def check_error(self, answer, status: int, code: str) -> None:
        assert answer.status == status, f"expected {status} {code}, got {answer.status}: {answer.text[:500]}\n{self.trace()}"
        body = answer.json()
        assert set(body) == {"error"} and body["error"]["code"] == code and isinstance(body["error"]["message"], str), answer.text

    def trace(self) -> str:
        return "calls so far:\n  " + "\n  ".join(self.log[-12:])

    def call(self, c: Caller, method: str, path: str, *, query=None, body=None, check: bool = True):
        self.log.append(f"{c.label}({c.owner} teams={sorted(c.teams)} scopes={sorted(c.scopes)}) {method} {path} {query or ''} {json.dumps(body) if body else ''}")
        answer = self.s.call(c.token, method, path, query=query, body=body)
        if check:
            self.check_no_leak(c, answer, path + json.dumps(query) + json.dumps(body))
        return answer

    # -- one random call ----------------------------------------------------------------------
    def step(self) -> None:
        draw = self.draw
        c = draw(st.sampled_from(self.callers))
        op = draw(st.sampled_from(["remember", "remember", "remember", "recall", "search", "context", "list", "get", "forget_ref", "forget_filter"]))
        getattr(self, op)(c)
        cases.record(self.key)

    def _scope_gate(self, c: Caller, answer, scope: str) -> bool:
        if scope not in c.scopes:
            self.check_error(answer, 403, "insufficient_scope")
            return True
        return False

    def remember(self, c: Caller) -> None:
        draw, w = self.draw, self.world
        # skewed towards few distinct places and contents, so duplicates happen often
        content = draw(st.sampled_from(self.contents[:2] * 3 + self.contents[2:]))
        team = draw(st.none() | st.none() | st.sampled_from(self.teams))
        project = draw(st.sampled_from([None, None, None, *PROJECTS]))
        bucket = draw(st.sampled_from(BUCKETS[:2] * 2 + BUCKETS[2:]))
        mtype = draw(st.sampled_from(MEMORY_TYPES[:3]))
        tags = tuple(draw(st.lists(st.sampled_from(TAGS), max_size=2, unique=True)))
        temporary = draw(st.booleans())
        known = sorted(w.memories)
        supersedes = draw(st.none() | st.none() | st.just(FAKE_REF) | (st.sampled_from(known) if known else st.none()))
        body = {"content": content, "bucket": bucket, "type": mtype, "tags": list(tags), "temporary": temporary}
        body.update({k: v for k, v in {"team": team, "project": project, "supersedes": supersedes}.items() if v})
        a = self.call(c, "POST", "/v1/memories", body=body, check=False)
        self._remembered(c, a, body)
        # its own new memory, or the existing reference a duplicate answers with (SPEC §3)
        self.check_no_leak(c, a, json.dumps(body), a.json()["memory"]["reference"] if a.status in (200, 201) else None)

    def _remembered(self, c: Caller, a, body: dict) -> None:
        w = self.world
        team, project, bucket, supersedes = body.get("team"), body.get("project"), body["bucket"], body.get("supersedes")
        content, temporary, mtype, tags = body["content"], body["temporary"], body["type"], tuple(body["tags"])
        if self._scope_gate(c, a, W):
            return
        if team is not None and team not in c.teams:
            return self.check_error(a, 403, "team_mismatch")
        if supersedes is not None:
            target = w.gettable(c, supersedes)
            if target is None:
                assert a.json() == NOT_FOUND, f"{a.text}\n{self.trace()}"
                return
        holder = f"team:{team}" if team else f"owner:{c.owner}"
        dup = w.duplicate_of(holder, project, bucket, temporary, content)
        if dup is not None:
            assert a.status == 200 and a.json()["duplicate"] and a.json()["memory"]["reference"] == dup.ref, f"{a.text}\n{self.trace()}"
            if R not in c.scopes or (dup.temporary and T not in c.scopes):  # may not read it: own write echoed
                shown = a.json()["memory"]
                assert (shown["owner"], shown["tags"], shown["type"]) == (c.owner, list(tags), mtype), f"{a.text}\n{self.trace()}"
            return
        assert a.status == 201, f"{a.text}\n{self.trace()}"
        ref = a.json()["memory"]["reference"]
        w.add(ref=ref, holder=holder, project=project, bucket=bucket, type=mtype, tags=tags, temporary=temporary, content=content, supersedes=supersedes)
        if supersedes is not None:
            w.memories[supersedes].superseded = True

    def _read_gate(self, c: Caller, a, f: Filters) -> bool:
        if self._scope_gate(c, a, R):
            return True
        if f.team is not None and f.team not in c.teams:
            self.check_error(a, 403, "team_mismatch")
            return True
        if f.include_temporary and T not in c.scopes:
            self.check_error(a, 403, "insufficient_scope")
            return True
        assert a.status == 200, f"{a.text}\n{self.trace()}"
        return False

    def _query(self) -> str:
        draw = self.draw
        words = draw(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=2, unique=True))
        marker = MARKER.findall(draw(st.sampled_from(self.contents)))
        return draw(st.sampled_from([" ".join(words), marker[0], f"{words[0]} {marker[0]}"]))

    def search(self, c: Caller) -> None:
        f, q = filters(self.draw, self.teams, c), self._query()
        limit = self.draw(st.sampled_from([2, 50]))
        a = self.call(c, "POST", "/v1/search", body={"query": q, "limit": limit, **body_of(f)})
        if self._read_gate(c, a, f):
            return
        expected = {m.ref for m in self.world.readable(c, f) if strict_match(q, m.content)}
        got = [r["reference"] for r in a.json()["results"]]
        assert set(got) <= expected and len(got) == min(limit, len(expected)), f"{got} vs {expected}\n{self.trace()}"
        assert a.json()["retrieval_plan"]["lexical"]["candidates"] == min(limit, len(expected))

    def recall(self, c: Caller) -> None:
        f, q = filters(self.draw, self.teams, c), self._query()
        limit = self.draw(st.sampled_from([1, 20]))
        a = self.call(c, "POST", "/v1/recall", body={"query": q, "limit": limit, **body_of(f)})
        if self._read_gate(c, a, f):
            return
        expected = {m.ref for m in self.world.readable(c, f) if loose_match(q, m.content)}
        got = [r["reference"] for r in a.json()["results"]]
        assert set(got) <= expected and len(got) == min(limit, len(expected)), f"{got} vs {expected}\n{self.trace()}"
        assert a.json()["retrieval_plan"]["lexical"]["candidates"] == min(60, len(expected))

    def context(self, c: Caller) -> None:
        f, q = filters(self.draw, self.teams, c), self._query()
        max_items = self.draw(st.sampled_from([1, 8]))
        a = self.call(c, "POST", "/v1/context", body={"query": q, "max_items": max_items, "max_tokens": 200, **body_of(f)})
        if self._read_gate(c, a, f):
            return
        expected = {m.ref for m in self.world.readable(c, f) if loose_match(q, m.content)}
        pack = a.json()
        got = [i["reference"] for i in pack["items"]]
        assert set(got) <= expected, f"{got} vs {expected}\n{self.trace()}"
        assert pack["budget"]["used_items"] + pack["budget"]["dropped"] == min(60, len(expected)), f"{pack['budget']} vs {len(expected)}\n{self.trace()}"

    def list(self, c: Caller) -> None:
        f = filters(self.draw, self.teams, c)
        limit = self.draw(st.sampled_from([1, 3, 100]))
        query = {k: v for k, v in body_of(f).items()} | {"limit": limit}
        if "include_temporary" in query:
            query["include_temporary"] = "true"
        a = self.call(c, "GET", "/v1/memories", query=query)
        if self._read_gate(c, a, f):
            return
        expected = [m.ref for m in self.world.readable(c, f)]
        body = a.json()
        assert [m["reference"] for m in body["memories"]] == expected[:limit], f"{body}\n{expected}\n{self.trace()}"
        assert (body["next_cursor"] is not None) == (len(expected) > limit)

    def _some_ref(self) -> str:
        known = sorted(self.world.memories)
        return self.draw(st.just(FAKE_REF) | (st.sampled_from(known) if known else st.just(FAKE_REF)))

    def get(self, c: Caller) -> None:
        ref = self._some_ref()
        a = self.call(c, "GET", f"/v1/memories/{ref}")
        if self._scope_gate(c, a, R):
            return
        m = self.world.gettable(c, ref)
        if m is None:
            assert a.status == 404 and a.json() == NOT_FOUND, f"{a.text}\n{self.trace()}"
        else:
            assert a.status == 200 and a.json()["memory"]["reference"] == ref and a.json()["memory"]["content"] == m.content

    def forget_ref(self, c: Caller) -> None:
        ref = self._some_ref()
        a = self.call(c, "DELETE", f"/v1/memories/{ref}")
        if self._scope_gate(c, a, W):
            return
        m = self.world.memories.get(ref)
        reachable = m is not None and ref not in self.world.deleted and self.world.may_see(c, m)
        if not reachable:
            assert a.status == 404 and a.json() == NOT_FOUND, f"{a.text}\n{self.trace()}"
            return
        assert a.status == 200 and a.json() == {"deleted": 1}, f"{a.text}\n{self.trace()}"
        self.world.deleted.add(ref)

    def forget_filter(self, c: Caller) -> None:
        f = filters(self.draw, self.teams, c, reads=False)
        body = body_of(f)
        if not body:
            body, f = {"bucket": "b1"}, Filters(bucket="b1")
        a = self.call(c, "POST", "/v1/forget", body=body)
        if self._scope_gate(c, a, W):
            return
        if f.team is not None and f.team not in c.teams:
            return self.check_error(a, 403, "team_mismatch")
        doomed = self.world.readable(c, f, live_only=False, include_temporary=T in c.scopes)
        assert a.status == 200 and a.json() == {"deleted": len(doomed)}, f"{a.text} vs {len(doomed)}\n{self.trace()}"
        self.world.deleted.update(m.ref for m in doomed)

    # -- after the example: the file itself ----------------------------------------------
    def check_store(self, ledger: dict[str, str | None]) -> None:
        """Everything written and not deleted, in this example and every earlier one, is
        stored exactly once, with its FTS row and holder; nothing the models did not delete
        is gone (forget reached no further). `ledger`: reference → holder, None = deleted."""
        ledger.update({m.ref: (None if m.ref in self.world.deleted else m.holder) for m in self.world.memories.values()})
        rows = stored_in(self.s)
        alive = {ref: holder for ref, holder in ledger.items() if holder is not None}
        missing = set(alive) - set(rows)
        assert not missing, f"deleted beyond reach or lost: {missing}\n{self.trace()}"
        ghosts = {r for r, holder in ledger.items() if holder is None and r in rows}
        assert not ghosts, f"forget answered but left: {ghosts}"
        for ref, holder in alive.items():
            assert rows[ref] == (holder, 1), (ref, rows[ref], holder)


# ---------------------------------------------------------------------------------------
def drive(surface, examples: int, key: str) -> None:
    """`examples` generated worlds of STEPS calls each. Every world gets a fresh model (so
    hypothesis can replay and shrink it) over the same store, whose earlier contents are
    other tenants to it: the leak scan flags any of their markers or references."""
    ledger: dict[str, str | None] = {}

    @settings(max_examples=examples, deadline=None, database=None, print_blob=True,
              phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
    @given(worlds(), st.data())
    def prop(w, data):
        _, callers, teams, contents = w
        run = Run(surface, World(), callers, teams, contents, data.draw)
        run.key = key
        for _ in range(STEPS):
            run.step()
        run.check_store(ledger)

    prop()


def in_process_services(store_kind: str, request, tmp_path: Path) -> Services:
    if store_kind == "sqlite":
        return Services(Settings(data_dir=tmp_path, embedder="none"), SQLiteStore(tmp_path / "xmemo.sqlite3"), None)
    from xmemo.store.opensearch import OpenSearchStore

    url = request.getfixturevalue("osmem_clone").url
    settings = Settings(data_dir=tmp_path, embedder="none", store="opensearch", opensearch_url=url, opensearch_knn=False)
    return Services(settings, OpenSearchStore.from_settings(settings), None)


def run_plan(surface, store_kind: str) -> None:
    key = f"isolation[{surface.name}/{store_kind}]"
    before = cases.COUNTS[key]
    drive(surface, PLANS[(surface.name, store_kind)], key)
    ran = cases.COUNTS[key] - before
    print(f"isolation over {surface.name} on {store_kind}: {ran} cases")
    assert ran >= PLANS[(surface.name, store_kind)] * STEPS


@pytest.mark.parametrize("store_kind", ["sqlite", pytest.param("opensearch", marks=pytest.mark.integration)])
@pytest.mark.parametrize("mcp", [False, True], ids=["rest", "mcp"])
def test_isolation_in_process_gateway(tmp_path: Path, store_kind: str, mcp: bool, request, monkeypatch):
    """REST, or MCP `tools/call` on `/mcp/full`: both handlers run on the services handed
    in (the MCP function is on the same edge as REST)."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")  # no EMF lines on stdout
    svc = in_process_services(store_kind, request, tmp_path)
    surface = InProcessGateway(svc, tmp_path)
    try:
        run_plan(McpFull(surface) if mcp else surface, store_kind)
    finally:
        svc.store.close()


@pytest.mark.e2e
@pytest.mark.parametrize("store_kind", ["sqlite", pytest.param("opensearch", marks=pytest.mark.integration)])
@pytest.mark.parametrize("mcp", [False, True], ids=["rest", "mcp"])
def test_isolation_over_http(store_kind: str, mcp: bool, request):
    """The gateway subprocess (its own process-default services, as on Lambda), REST or MCP;
    on OpenSearch the ground truth is read from the index on the server itself."""
    if store_kind == "sqlite":
        surface = HttpGateway(request.getfixturevalue("security_gateway"))
    else:
        gw = request.getfixturevalue("opensearch_gateway")
        surface = HttpGateway(gw, OpenSearchIndex(gw.env["XMEMO_OPENSEARCH_URL"]))
    try:
        run_plan(McpFull(surface) if mcp else surface, store_kind)
    finally:
        surface.close()


def test_isolation_reaches_two_thousand_cases_per_store():
    """Runs last in this module: each store saw ≥ 2,000 cases over all surfaces."""
    for store_kind in ("sqlite", "opensearch"):
        total = sum(n for k, n in cases.COUNTS.items() if k.startswith("isolation[") and k.endswith(f"/{store_kind}]"))
        if total:
            assert total >= 2000, (store_kind, total)
