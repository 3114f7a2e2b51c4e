"""Generated agent-style memories and the short questions people type about them, for
small stores (a new user's first day): seeded, several languages, three kinds of memory
(a decision, a person's preference, a procedure), each asked two ways, abbreviated
("auth decision") and paraphrased, with words the memory does not hold ("which tool did we
pick for sign-in"). Also what no memory concerns: off-topic questions (random letters come from
`locomo.abstention.nonsense_queries`).

Everything is composed from the vocabularies below (topics, tools, people, templates), so
a seed gives another set of stores with the same shape; nothing is copied from a corpus.
`xmemo bench smallstores` measures on it; `tests/retrieval/test_generated_pairs.py`
asks a few of its stores."""

from __future__ import annotations

import random
from dataclasses import dataclass

LANGUAGES = ("en", "fr", "de", "ko")
KINDS = ("decision", "preference", "procedure")

# One topic per row, per language: (the word a memory holds, what people type for it:
# an abbreviation or the short word, a paraphrase: other words for the same thing).
TOPICS: tuple[dict[str, tuple[str, str, str]], ...] = (
    {"en": ("authentication", "auth", "sign-in"), "fr": ("l'authentification", "auth", "connexion des utilisateurs"),
     "de": ("die Authentifizierung", "Auth", "Anmeldung"), "ko": ("인증", "인증", "로그인")},
    {"en": ("configuration management", "config", "settings"), "fr": ("la configuration", "config", "paramètres"),
     "de": ("die Konfiguration", "Konfig", "Einstellungen"), "ko": ("설정 관리", "설정", "환경 옵션")},
    {"en": ("documentation", "docs", "user manual"), "fr": ("la documentation", "doc", "manuel utilisateur"),
     "de": ("die Dokumentation", "Doku", "Handbuch"), "ko": ("문서화", "문서", "사용 설명서")},
    {"en": ("deployment", "deploy", "shipping releases"), "fr": ("le déploiement", "déploiement", "mise en ligne"),
     "de": ("das Deployment", "Deploy", "Auslieferung"), "ko": ("배포", "배포", "릴리스 출시")},
    {"en": ("infrastructure", "infra", "servers"), "fr": ("l'infrastructure", "infra", "serveurs"),
     "de": ("die Infrastruktur", "Infra", "Server"), "ko": ("인프라", "인프라", "서버 구성")},
    {"en": ("the repository", "repo", "source code hosting"), "fr": ("le dépôt de code", "dépôt", "hébergement du code source"),
     "de": ("das Repository", "Repo", "Quellcode-Hosting"), "ko": ("코드 저장소", "저장소", "소스 코드 호스팅")},
    {"en": ("the production environment", "prod", "live site"), "fr": ("l'environnement de production", "prod", "site en ligne"),
     "de": ("die Produktionsumgebung", "Prod", "Livesystem"), "ko": ("운영 환경", "운영", "실서비스")},
    {"en": ("the database", "db", "data storage"), "fr": ("la base de données", "BDD", "stockage des données"),
     "de": ("die Datenbank", "DB", "Datenspeicher"), "ko": ("데이터베이스", "DB", "데이터 저장소")},
    {"en": ("monitoring", "monitoring", "dashboards and alerts"), "fr": ("la supervision", "supervision", "tableaux de bord"),
     "de": ("das Monitoring", "Monitoring", "Dashboards"), "ko": ("모니터링", "모니터링", "대시보드")},
    {"en": ("backups", "backup", "data recovery"), "fr": ("les sauvegardes", "sauvegarde", "restauration des données"),
     "de": ("die Datensicherung", "Backup", "Wiederherstellung"), "ko": ("백업", "백업", "데이터 복구")},
    {"en": ("integration testing", "tests", "quality checks"), "fr": ("les tests d'intégration", "tests", "contrôle qualité"),
     "de": ("die Integrationstests", "Tests", "Qualitätssicherung"), "ko": ("통합 테스트", "테스트", "품질 검사")},
    {"en": ("logging", "logs", "audit trail"), "fr": ("la journalisation", "logs", "traces d'audit"),
     "de": ("die Protokollierung", "Logs", "Audit-Spuren"), "ko": ("로깅", "로그", "감사 기록")},
    {"en": ("payments", "payment", "billing customers"), "fr": ("les paiements", "paiement", "facturation des clients"),
     "de": ("die Zahlungsabwicklung", "Zahlung", "Kundenabrechnung"), "ko": ("결제", "결제", "고객 청구")},
    {"en": ("push notifications", "notifs", "alerting users on their phones"),
     "fr": ("les notifications push", "notifs", "alertes sur le téléphone"),
     "de": ("die Push-Benachrichtigungen", "Push", "Hinweise aufs Handy"), "ko": ("푸시 알림", "알림", "휴대폰 메시지")},
    {"en": ("code review", "review", "approving pull requests"), "fr": ("la revue de code", "revue", "relecture des demandes de fusion"),
     "de": ("das Code-Review", "Review", "Freigabe von Pull-Requests"), "ko": ("코드 리뷰", "리뷰", "풀 리퀘스트 승인")},
    {"en": ("encryption", "crypto", "protecting data at rest"), "fr": ("le chiffrement", "chiffrement", "protection des données stockées"),
     "de": ("die Verschlüsselung", "Verschlüsselung", "Schutz gespeicherter Daten"), "ko": ("암호화", "암호화", "저장 데이터 보호")},
    {"en": ("analytics", "analytics", "usage statistics"), "fr": ("l'analytique", "analytique", "statistiques d'usage"),
     "de": ("die Analytik", "Analytics", "Nutzungsstatistik"), "ko": ("분석", "분석", "사용 통계")},
    {"en": ("full-text search", "search", "finding documents"), "fr": ("la recherche plein texte", "recherche", "trouver des documents"),
     "de": ("die Volltextsuche", "Suche", "Dokumente finden"), "ko": ("전문 검색", "검색", "문서 찾기")},
    {"en": ("transactional email", "email", "sending receipts by mail"), "fr": ("les e-mails transactionnels", "mail", "envoi des reçus"),
     "de": ("der E-Mail-Versand", "Mail", "Quittungen verschicken"), "ko": ("이메일 발송", "메일", "영수증 전송")},
    {"en": ("caching", "cache", "speeding up reads"), "fr": ("la mise en cache", "cache", "accélérer les lectures"),
     "de": ("das Caching", "Cache", "schnellere Lesezugriffe"), "ko": ("캐싱", "캐시", "읽기 속도 개선")},
    {"en": ("the mobile app", "app", "phone client"), "fr": ("l'application mobile", "appli", "client téléphone"),
     "de": ("die mobile Anwendung", "App", "Handy-Client"), "ko": ("모바일 앱", "앱", "휴대폰 클라이언트")},
    {"en": ("job scheduling", "sched", "running tasks at night"), "fr": ("la planification des tâches", "planif", "tâches de nuit"),
     "de": ("die Job-Planung", "Jobs", "nächtliche Aufgaben"), "ko": ("작업 스케줄링", "스케줄", "야간 작업 실행")},
)

TOOLS = (
    "Cognito", "Keycloak", "Vault", "Terraform", "Pulumi", "Grafana", "Prometheus", "Postgres", "Redis", "Kafka",
    "Jenkins", "Sentry", "Okta", "Ansible", "Nomad", "Datadog", "Mailgun", "Stripe", "Airflow", "Bitbucket",
    "Metabase", "Memcached", "Typesense", "Loki", "Helm", "Restic", "Playwright", "Firebase", "Gerrit", "Tink",
)
PEOPLE = ("Alice", "Bruno", "Chloé", "Dmitri", "Eun-ji", "Farid", "Greta", "Hiro", "Inès", "Jonas", "Min-seo", "Priya")

# Per language and kind: memory templates, then (abbreviated, paraphrased) question templates.
# {topic} {abbr} {para} {tool} {person}
TEMPLATES: dict[str, dict[str, tuple[tuple[str, ...], str, str]]] = {
    "en": {
        "decision": (("We decided to use {tool} for {topic}.", "The team chose {tool} for {topic} after the trial."),
                     "{abbr} decision", "which tool did we pick for {para}"),
        "preference": (("{person} prefers {tool} for {topic}.", "For {topic}, {person} would rather work with {tool}."),
                       "{person} {abbr} pref", "what does {person} like using for {para}"),
        "procedure": (("Before changing {topic}, open a ticket and get {person}'s approval.",
                       "Changes to {topic} are applied with {tool} only after {person} signs off."),
                      "{abbr} change process", "steps to modify our {para}"),
    },
    "fr": {
        "decision": (("Nous avons décidé d'utiliser {tool} pour {topic}.", "L'équipe a retenu {tool} pour {topic} après l'essai."),
                     "décision {abbr}", "quel outil avons-nous choisi pour {para}"),
        "preference": (("{person} préfère {tool} pour {topic}.", "Pour {topic}, {person} aime mieux travailler avec {tool}."),
                       "préférence {abbr} de {person}", "qu'est-ce que {person} aime utiliser pour {para}"),
        "procedure": (("Avant de modifier {topic}, ouvrir un ticket et obtenir l'accord de {person}.",
                       "Les changements sur {topic} passent par {tool}, après validation de {person}."),
                      "procédure {abbr}", "comment changer {para}"),
    },
    "de": {
        "decision": (("Wir haben uns für {tool} entschieden, zuständig für {topic}.", "Das Team hat nach dem Test {tool} für {topic} gewählt."),
                     "{abbr} Entscheidung", "welches Werkzeug nehmen wir für {para}"),
        "preference": (("{person} bevorzugt {tool} für {topic}.", "Für {topic} arbeitet {person} am liebsten mit {tool}."),
                       "{person} {abbr} Vorliebe", "was nutzt {person} gern für {para}"),
        "procedure": (("Vor Änderungen an {topic}: Ticket anlegen und Freigabe von {person} holen.",
                       "Änderungen an {topic} werden mit {tool} eingespielt, erst nach Freigabe durch {person}."),
                      "{abbr} Änderungsablauf", "wie ändern wir {para}"),
    },
    "ko": {
        "decision": (("우리 팀은 {topic}에 {tool} 사용하기로 결정했다.", "시범 운영 후 {topic} 도구로 {tool} 채택."),
                     "{abbr} 결정", "{para} 때 뭐 쓰기로 했지"),
        "preference": (("{person}님은 {topic} 작업에 {tool} 선호.", "{topic}에서는 {person}님이 {tool} 쓰는 걸 좋아한다."),
                       "{person} {abbr} 선호", "{person}님이 {para}에 즐겨 쓰는 것"),
        "procedure": (("{topic} 변경 전에는 티켓을 만들고 {person}님 승인을 받는다.",
                       "{topic} 변경은 {person}님 승인 후 {tool}로 적용한다."),
                      "{abbr} 변경 절차", "{para} 바꾸려면 어떻게 해"),
    },
}

# Questions about what no memory of these stores concerns (everyday life, not work), per language.
OFF_TOPIC: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "en": (("how long should I boil {x}", "best place to buy {x}", "is {x} healthy for dogs", "history of {x}"),
           ("spinach", "chestnuts", "wool socks", "a kayak", "saffron", "tulip bulbs", "a violin", "lentils")),
    "fr": (("combien de temps cuire {x}", "où acheter {x}", "histoire de {x}", "recette avec {x}"),
           ("des lentilles", "des châtaignes", "un violon", "du safran", "des tulipes", "un kayak")),
    "de": (("wie lange kocht man {x}", "wo kauft man {x}", "Geschichte von {x}", "Rezept mit {x}"),
           ("Linsen", "Kastanien", "eine Geige", "Safran", "Tulpen", "ein Kajak")),
    "ko": (("{x} 얼마나 삶아야 해", "{x} 어디서 사", "{x}의 역사", "{x} 요리법"),
           ("시금치", "밤", "바이올린", "사프란", "튤립", "카약")),
}


@dataclass(frozen=True)
class Pair:
    """One memory and the two questions that should find it."""

    memory: str
    abbreviated: str
    paraphrased: str
    language: str
    kind: str


def store(rng: random.Random, size: int, languages: tuple[str, ...] = LANGUAGES) -> list[Pair]:
    """`size` pairs about distinct (topic, kind) combinations in mixed languages: what one
    user might save in the first days (at most len(TOPICS) × len(KINDS) memories)."""
    combos = [(t, k) for t in range(len(TOPICS)) for k in KINDS]
    if size > len(combos):
        raise ValueError(f"at most {len(combos)} distinct memories")
    pairs = []
    for t, kind in rng.sample(combos, size):
        lang = rng.choice(languages)
        topic, abbr, para = TOPICS[t][lang]
        memories, abbreviated, paraphrased = TEMPLATES[lang][kind]
        slots = {"topic": topic, "abbr": abbr, "para": para, "tool": rng.choice(TOOLS), "person": rng.choice(PEOPLE)}
        memory = rng.choice(memories).format(**slots)
        pairs.append(Pair(memory[0].upper() + memory[1:], abbreviated.format(**slots), paraphrased.format(**slots), lang, kind))
    return pairs


def off_topic(rng: random.Random, n: int, languages: tuple[str, ...] = LANGUAGES) -> list[str]:
    """`n` everyday questions that none of the generated memories concerns."""
    out = []
    for _ in range(n):
        templates, things = OFF_TOPIC[rng.choice(languages)]
        out.append(rng.choice(templates).format(x=rng.choice(things)))
    return out
