"""The floors experiments side by side (seed 40, default half of each report), and seed 40's lost
answers by gate and language (from seed40.md). Run from the worktree root after command.txt's runs."""
import collections, json
rows = [("integ (before)", "bench-out/smallstores/floors/integ-baseline/report.json")] + [(n, f"bench-out/smallstores/floors/{n}/report.json") for n in (
    "sf0.05", "sf0.04", "script-lift", "script-lift-sf0.04", "spread-lift", "store-spread-0.06", "store-spread-0.05", "store-spread-0.04", "store-spread-0.03",
    "store-spread-known-0.03", "store-spread-known-0.02")] + [("integ seed 41", "bench-out/smallstores/floors/integ-baseline-seed41/report.json"),
    ("store-spread-known-0.03 seed 41", "bench-out/smallstores/floors/store-spread-known-0.03-seed41/report.json"),
    ("integ seed 42", "bench-out/smallstores/floors/integ-baseline-seed42/report.json"),
    ("store-spread-known-0.03 seed 42", "bench-out/smallstores/floors/store-spread-known-0.03-seed42/report.json")]
keys = ("all", "lang en", "lang fr", "lang de", "lang ko", "form paraphrased")
print("| run | " + " | ".join(keys) + " | off-topic empty | random letters empty |")
print("|---" * (len(keys) + 3) + "|")
for name, path in rows:
    r = json.load(open(path))["default"]
    print(f"| {name} | " + " | ".join(f"{r['found_at_3'][k]['share']:.3f}" for k in keys)
          + f" | {r['empty']['off_topic']['share']:.3f} | {r['empty']['random_letters']['share']:.3f} |")
print()
c = collections.Counter()
for line in open("bench-out/smallstores/floors/seed40.md"):
    p = [x.strip() for x in line.split("|")]
    if len(p) == 6 and p[4] in ("en", "fr", "de", "ko"):
        c[p[1], p[4]] += 1
gates = sorted({g for g, _ in c})
print("| seed 40, answers lost by | en | fr | de | ko |")
print("|---|---|---|---|---|")
for g in gates:
    print(f"| {g} | " + " | ".join(str(c[g, l]) for l in ("en", "fr", "de", "ko")) + " |")
