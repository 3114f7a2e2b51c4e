"""Every constant that changes what retrieval returns lives in the ranking profile
(`xmemo.retrieval.profile`): the settings take their defaults from it, no other module of
the retrieval package writes a ranking number of its own, and an override is named in
`retrieval_plan.profile`."""

from __future__ import annotations

import ast
from pathlib import Path

from xmemo.config import PackingSettings, RetrievalSettings, Settings
from xmemo.retrieval.profile import PROFILE, RankingSettings

PACKAGE = Path(__file__).resolve().parents[2] / "functions" / "shared" / "xmemo"
CONFIG = PACKAGE / "config.py"
RETRIEVAL = PACKAGE / "retrieval"

# Numbers the retrieval package may write outside the profile, because none of them moves a
# result: 0 and 1 (identities, the first rank), guards against dividing by zero (below 1e-6),
# and, by module, what only shapes storage, speed or display. Anything else is a ranking
# constant and belongs in the profile.
STRUCTURAL = {0, 1}
BY_MODULE = {
    # the stored token states' byte layout (version 2, 4-byte ids, 8 bits a byte, the ±1 of a
    # sign as 2x - 1, 32-bit pairs), and BLOCK (rows unpacked at once: speed only)
    "late.py": {2, 4, 7, 8, 32, 0xFFFFFFFF, 1024},
    "fusion.py": {2, 2048},  # hubness needs a pair; `_sizes_within`'s slack of 2 (never drops a pair); `word_set`'s cache
    "pipeline.py": {4},  # decimals the plan reports baseline and top lift with
    "evidence.py": {4, 4096},  # decimals the plan reports the best evidence with; `_stems`'s cache
}


def _numbers(path: Path) -> list[tuple[int, float]]:
    return [
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    ]


def test_every_ranking_setting_takes_its_default_from_the_profile():
    """One definition: each field's default in config.py is the profile's attribute of the same
    name (no literal), and so equals the profile's value; every retrieval setting is in it."""
    assert set(RetrievalSettings.model_fields) <= set(PROFILE.settings.names())
    groups = {**RetrievalSettings.model_fields, "min_useful_tokens": PackingSettings.model_fields["min_useful_tokens"]}
    assert set(groups) == set(PROFILE.settings.names())
    for name, field in groups.items():
        assert field.default == getattr(PROFILE.settings, name), name
        assert Settings.model_fields[name].default == getattr(PROFILE.settings, name), name
    written = {}
    for node in ast.walk(ast.parse(CONFIG.read_text())):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(node.value, ast.Call):
            if node.value.args:
                written[node.target.id] = ast.unparse(node.value.args[0])
    for name in PROFILE.settings.names():
        assert written[name] == f"RANKING.{name}", f"{name}'s default is written as {written[name]}, not taken from the profile"


def test_no_ranking_number_is_written_in_the_retrieval_package_outside_the_profile():
    modules = sorted(p for p in RETRIEVAL.glob("*.py") if p.name not in ("profile.py", "__init__.py"))
    assert {p.name for p in modules} >= {"fusion.py", "late.py", "pipeline.py", "relevance.py"}
    stray = [
        f"{p.name}:{line} {value!r}"
        for p in modules
        for line, value in _numbers(p)
        if value not in STRUCTURAL and abs(value) >= 1e-6 and value not in BY_MODULE.get(p.name, set())
    ]
    assert not stray, "ranking numbers outside the profile: " + ", ".join(stray)


def test_the_checker_finds_a_ranking_number(tmp_path):
    """Not vacuous: literals such as the late leg's former `LAYER = 11` are seen."""
    f = tmp_path / "pipeline.py"
    f.write_text("LAYER = 11\nSMOOTHING = 0.5\nBLOCK = 1024\nPER_ITEM = 2\n")
    assert [(line, v) for line, v in _numbers(f) if v not in STRUCTURAL and v not in BY_MODULE["pipeline.py"]] == [(1, 11), (2, 0.5), (3, 1024), (4, 2)]


def test_the_modules_read_their_constants_from_the_profile():
    from xmemo.retrieval import late, pipeline, relevance

    c = PROFILE.constants
    assert (late.LAYER, late.SMOOTHING) == (c.late_layer, c.idf_smoothing)
    assert (relevance.MAX_NAMES, relevance.WHOLE) == (c.names_checked, c.abbreviation_whole)
    assert pipeline.context_candidates(8) == c.pack_candidates_per_item * 8


def test_the_profile_says_what_it_was_fitted_on_and_by_which_metric():
    assert PROFILE.name and PROFILE.version >= 1 and "LoCoMo" in PROFILE.fitted_on and "recall@10" in PROFILE.metric
    assert isinstance(PROFILE.settings, RankingSettings)


def test_an_override_from_the_environment_is_named(monkeypatch):
    assert PROFILE.identity(Settings()) == {"name": PROFILE.name, "version": PROFILE.version}
    monkeypatch.setenv("XMEMO_LATE_WEIGHT", "0.25")
    monkeypatch.setenv("XMEMO_MIN_USEFUL_TOKENS", str(PROFILE.settings.min_useful_tokens))  # set, but to the profile's value
    settings = Settings()
    assert settings.late_weight == 0.25
    assert PROFILE.identity(settings) == {"name": PROFILE.name, "version": PROFILE.version, "overridden": ["late_weight"]}
    assert PROFILE.identity(settings.part(PackingSettings)) == {"name": PROFILE.name, "version": PROFILE.version}
