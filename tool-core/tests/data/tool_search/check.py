#!/usr/bin/env python3
"""Validates tools.json and the query files of the tool-search evaluation set and prints counts."""
import json, re, sys, collections

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
tools = json.load(open("tools.json"))
queries = json.load(open("queries.json"))
errs = []
names = [t["name"] for t in tools]
dup = [n for n, c in collections.Counter(names).items() if c > 1]
if dup:
    errs.append(f"duplicate tool names: {dup}")
for t in tools:
    for k in ("name", "server", "description", "tags", "parameters"):
        if k not in t:
            errs.append(f"{t.get('name')}: missing {k}")
    if not NAME.match(t["name"]):
        errs.append(f"bad name {t['name']}")
    if not t["name"].startswith(t["server"] + "__"):
        errs.append(f"{t['name']}: not prefixed by server")
    p = t["parameters"]
    if p.get("type") != "object" or not set(p["required"]) <= set(p["properties"]):
        errs.append(f"{t['name']}: bad parameters schema")
    if not (10 <= len(t["description"]) <= 300):
        errs.append(f"{t['name']}: description length {len(t['description'])}")
known = set(names)
qtexts = [q["query"] for q in queries]
if len(set(qtexts)) != len(qtexts):
    errs.append("duplicate query texts")
for q in queries:
    if set(q) != {"query", "expected"}:
        errs.append(f"bad query entry {q}")
    if q["expected"] not in known:
        errs.append(f"unknown expected tool {q['expected']!r} for {q['query']!r}")
servers = sorted({t["server"] for t in tools})
distinct = {q["expected"] for q in queries}

# Informative: queries sharing no word with the expected tool's name (server part excluded).
def words(s):
    return set(re.findall(r"[a-z0-9]+", s.lower()))
no_overlap = sum(1 for q in queries
                 if not (words(q["query"]) & words(q["expected"].split("__", 1)[1].replace("_", " "))))

holdout = json.load(open("queries_holdout.json"))
for q in holdout:
    if set(q) != {"query", "expected"} or q["expected"] not in known:
        errs.append(f"bad holdout entry {q}")
if {q["query"] for q in holdout} & set(qtexts):
    errs.append("holdout queries repeat main queries")

# Second held-out set, written by a reviewer who saw only tools.json.
holdout2 = json.load(open("queries_holdout2.json"))
if not isinstance(holdout2, list):
    errs.append("queries_holdout2.json: not a JSON array")
    holdout2 = []
for q in holdout2:
    if not isinstance(q, dict) or set(q) != {"query", "expected"} \
            or not isinstance(q["query"], str) or not q["query"].strip() \
            or not isinstance(q["expected"], str):
        errs.append(f"bad holdout2 entry {q}")
    elif q["expected"] not in known:
        errs.append(f"unknown expected tool {q['expected']!r} for holdout2 {q['query']!r}")
h2texts = [q["query"] for q in holdout2 if isinstance(q, dict) and "query" in q]
if len(set(h2texts)) != len(h2texts):
    errs.append("duplicate query texts in holdout2")
if set(h2texts) & (set(qtexts) | {q["query"] for q in holdout}):
    errs.append("holdout2 queries repeat queries of another file")
h2valid = [q["expected"] for q in holdout2 if isinstance(q, dict) and isinstance(q.get("expected"), str)]
h2servers = {e.split("__", 1)[0] for e in h2valid}

print(f"tools: {len(tools)}  servers: {len(servers)}")
print(f"queries: {len(queries)}  distinct expected tools: {len(distinct)}")
print(f"holdout queries: {len(holdout)}  distinct expected tools: {len({q['expected'] for q in holdout})}")
print(f"holdout2 queries: {len(holdout2)}  distinct expected tools: "
      f"{len(set(h2valid))}  servers: {len(h2servers)}")
print(f"queries sharing no word with the tool-name part: {no_overlap}")
print("servers:", ", ".join(servers))
ok = not errs and len(tools) >= 320 and len(queries) >= 210 and len(distinct) >= 120
for e in errs:
    print("ERROR:", e)
print("OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
