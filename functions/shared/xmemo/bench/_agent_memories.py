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

LANGUAGES = ("en", "fr", "de", "ko")  # the small-store floors and gates were fitted on these (seed 40)
UNFITTED = ("es", "it", "ja", "zh")  # and never on these: what carries over to a language nobody tuned on
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

# The same topics in languages no floor or gate was fitted on (`UNFITTED`): `xmemo bench
# smallstores --languages es it ja zh` measures how the abstention fitted on `LANGUAGES` carries over.
UNFITTED_TOPICS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "es": (
        ("la autenticación", "auth", "inicio de sesión"),
        ("la gestión de configuración", "config", "ajustes"),
        ("la documentación", "docs", "manual de usuario"),
        ("el despliegue", "despliegue", "publicar versiones"),
        ("la infraestructura", "infra", "servidores"),
        ("el repositorio", "repo", "alojamiento del código fuente"),
        ("el entorno de producción", "prod", "sitio en vivo"),
        ("la base de datos", "BD", "almacenamiento de datos"),
        ("la monitorización", "monitorización", "paneles y alertas"),
        ("las copias de seguridad", "backup", "recuperación de datos"),
        ("las pruebas de integración", "pruebas", "control de calidad"),
        ("el registro de eventos", "logs", "rastro de auditoría"),
        ("los pagos", "pagos", "cobro a clientes"),
        ("las notificaciones push", "notificaciones", "avisos en el móvil"),
        ("la revisión de código", "revisión", "aprobación de pull requests"),
        ("el cifrado", "cifrado", "protección de datos en reposo"),
        ("la analítica", "analítica", "estadísticas de uso"),
        ("la búsqueda de texto completo", "búsqueda", "encontrar documentos"),
        ("el correo transaccional", "correo", "envío de recibos por email"),
        ("la caché", "caché", "acelerar las lecturas"),
        ("la aplicación móvil", "app", "cliente para teléfono"),
        ("la planificación de tareas", "tareas", "trabajos nocturnos"),
    ),
    "it": (
        ("l'autenticazione", "auth", "accesso degli utenti"),
        ("la gestione della configurazione", "config", "impostazioni"),
        ("la documentazione", "doc", "manuale utente"),
        ("il deployment", "deploy", "rilascio delle versioni"),
        ("l'infrastruttura", "infra", "server"),
        ("il repository", "repo", "hosting del codice sorgente"),
        ("l'ambiente di produzione", "prod", "sito live"),
        ("il database", "DB", "archiviazione dei dati"),
        ("il monitoraggio", "monitoraggio", "cruscotti e allarmi"),
        ("i backup", "backup", "ripristino dei dati"),
        ("i test di integrazione", "test", "controllo qualità"),
        ("la registrazione dei log", "log", "traccia di audit"),
        ("i pagamenti", "pagamenti", "fatturazione ai clienti"),
        ("le notifiche push", "notifiche", "avvisi sul telefono"),
        ("la revisione del codice", "revisione", "approvazione delle pull request"),
        ("la cifratura", "cifratura", "protezione dei dati salvati"),
        ("l'analitica", "analitica", "statistiche d'uso"),
        ("la ricerca full-text", "ricerca", "trovare documenti"),
        ("le email transazionali", "email", "invio delle ricevute"),
        ("il caching", "cache", "letture più veloci"),
        ("l'app mobile", "app", "client per telefono"),
        ("la pianificazione dei job", "job", "attività notturne"),
    ),
    "ja": (
        ("認証", "認証", "ログイン"),
        ("設定管理", "設定", "環境オプション"),
        ("ドキュメント", "ドキュメント", "利用者マニュアル"),
        ("デプロイ", "デプロイ", "リリース作業"),
        ("インフラ", "インフラ", "サーバー構成"),
        ("コードリポジトリ", "リポジトリ", "ソースコードのホスティング"),
        ("本番環境", "本番", "ライブサイト"),
        ("データベース", "DB", "データの保存先"),
        ("監視", "監視", "ダッシュボードとアラート"),
        ("バックアップ", "バックアップ", "データ復旧"),
        ("結合テスト", "テスト", "品質チェック"),
        ("ログ収集", "ログ", "監査証跡"),
        ("決済", "決済", "顧客への請求"),
        ("プッシュ通知", "通知", "スマホへのお知らせ"),
        ("コードレビュー", "レビュー", "プルリクエストの承認"),
        ("暗号化", "暗号化", "保存データの保護"),
        ("分析", "分析", "利用統計"),
        ("全文検索", "検索", "文書を探すこと"),
        ("メール送信", "メール", "領収書の送付"),
        ("キャッシュ", "キャッシュ", "読み込みの高速化"),
        ("モバイルアプリ", "アプリ", "スマホ用クライアント"),
        ("ジョブスケジューリング", "スケジュール", "夜間のタスク実行"),
    ),
    "zh": (
        ("身份验证", "认证", "用户登录"),
        ("配置管理", "配置", "环境选项"),
        ("文档", "文档", "用户手册"),
        ("部署", "部署", "发布上线"),
        ("基础设施", "基础设施", "服务器"),
        ("代码仓库", "仓库", "源代码托管"),
        ("生产环境", "生产", "线上站点"),
        ("数据库", "DB", "数据存储"),
        ("监控", "监控", "仪表盘和告警"),
        ("备份", "备份", "数据恢复"),
        ("集成测试", "测试", "质量检查"),
        ("日志记录", "日志", "审计追踪"),
        ("支付", "支付", "向客户收费"),
        ("推送通知", "通知", "手机提醒"),
        ("代码评审", "评审", "合并请求审批"),
        ("加密", "加密", "静态数据保护"),
        ("数据分析", "分析", "使用统计"),
        ("全文搜索", "搜索", "查找文档"),
        ("事务邮件", "邮件", "发送收据"),
        ("缓存", "缓存", "加快读取"),
        ("移动应用", "应用", "手机客户端"),
        ("任务调度", "调度", "夜间任务"),
    ),
}
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
    "es": {
        "decision": (("Decidimos usar {tool} para {topic}.", "El equipo eligió {tool} para {topic} después de la prueba."),
                     "decisión {abbr}", "qué herramienta elegimos para {para}"),
        "preference": (("{person} prefiere {tool} para {topic}.", "Para {topic}, {person} prefiere trabajar con {tool}."),
                       "preferencia {abbr} de {person}", "qué le gusta usar a {person} para {para}"),
        "procedure": (("Antes de cambiar {topic}, abrir un ticket y obtener la aprobación de {person}.",
                       "Los cambios en {topic} se aplican con {tool} solo después de la aprobación de {person}."),
                      "proceso {abbr}", "cómo modificamos {para}"),
    },
    "it": {
        "decision": (("Abbiamo deciso di usare {tool} per {topic}.", "Dopo la prova il team ha scelto {tool} per {topic}."),
                     "decisione {abbr}", "quale strumento abbiamo scelto per {para}"),
        "preference": (("{person} preferisce {tool} per {topic}.", "Per {topic}, {person} lavora volentieri con {tool}."),
                       "preferenza {abbr} di {person}", "cosa usa volentieri {person} per {para}"),
        "procedure": (("Prima di modificare {topic}, aprire un ticket e ottenere l'approvazione di {person}.",
                       "Le modifiche riguardanti {topic} si applicano con {tool} solo dopo l'ok di {person}."),
                      "procedura {abbr}", "come cambiamo {para}"),
    },
    "ja": {
        "decision": (("{topic}には{tool}を使うことに決めた。", "試験運用の後、{topic}のツールとして{tool}を採用。"),
                     "{abbr} 決定", "{para}に何を使うことにした？"),
        "preference": (("{person}さんは{topic}に{tool}を好む。", "{topic}では{person}さんは{tool}を使うのが好き。"),
                       "{person} {abbr} 好み", "{person}さんが{para}でよく使うもの"),
        "procedure": (("{topic}を変更する前に、チケットを作成して{person}さんの承認を得る。", "{topic}の変更は{person}さんの承認後に{tool}で適用する。"),
                      "{abbr} 変更手順", "{para}を変えるにはどうする"),
    },
    "zh": {
        "decision": (("我们决定{topic}使用{tool}。", "试用之后，团队为{topic}选择了{tool}。"),
                     "{abbr} 决定", "{para}我们选了什么工具"),
        "preference": (("{person}在{topic}上更喜欢用{tool}。", "做{topic}时，{person}最喜欢用{tool}。"),
                       "{person} {abbr} 偏好", "{person}做{para}喜欢用什么"),
        "procedure": (("修改{topic}之前，先开工单并取得{person}的批准。", "{topic}的变更要等{person}批准后再用{tool}上线。"),
                      "{abbr} 变更流程", "怎么修改{para}"),
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
    "es": (("cuánto tiempo hervir {x}", "dónde comprar {x}", "historia de {x}", "receta con {x}"),
           ("lentejas", "castañas", "un violín", "azafrán", "tulipanes", "un kayak")),
    "it": (("quanto cuocere {x}", "dove comprare {x}", "storia di {x}", "ricetta con {x}"),
           ("lenticchie", "castagne", "un violino", "zafferano", "tulipani", "un kayak")),
    "ja": (("{x}は何分ゆでる", "{x}はどこで買える", "{x}の歴史", "{x}のレシピ"),
           ("レンズ豆", "栗", "バイオリン", "サフラン", "チューリップ", "カヤック")),
    "zh": (("{x}要煮多久", "在哪里买{x}", "{x}的历史", "用{x}做的菜谱"),
           ("扁豆", "栗子", "小提琴", "藏红花", "郁金香", "皮划艇")),
}


@dataclass(frozen=True)
class Pair:
    """One memory and the two questions that should find it."""

    memory: str
    abbreviated: str
    paraphrased: str
    language: str
    kind: str

    @property
    def questions(self) -> tuple[tuple[str, str], ...]:
        """(form, question) for each way it is asked."""
        return (("abbreviated", self.abbreviated), ("paraphrased", self.paraphrased))


def topic_words(topic: int, lang: str) -> tuple[str, str, str]:
    """A topic's (word a memory holds, short word, paraphrase) in `lang`."""
    return TOPICS[topic][lang] if lang in TOPICS[topic] else UNFITTED_TOPICS[lang][topic]


def store(rng: random.Random, size: int, languages: tuple[str, ...] = LANGUAGES) -> list[Pair]:
    """`size` pairs about distinct (topic, kind) combinations, each in one of `languages`
    (mixed, or a single one): what one user might save in the first days (at most
    len(TOPICS) × len(KINDS) memories)."""
    combos = [(t, k) for t in range(len(TOPICS)) for k in KINDS]
    if size > len(combos):
        raise ValueError(f"at most {len(combos)} distinct memories")
    pairs = []
    for t, kind in rng.sample(combos, size):
        lang = rng.choice(languages)
        topic, abbr, para = topic_words(t, lang)
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
