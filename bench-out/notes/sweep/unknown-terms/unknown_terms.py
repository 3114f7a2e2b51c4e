"""A higher evidence floor (F2) for questions holding a content term no note of the store holds
(the unknown-names idea, for every word), 0.18 otherwise, on the dev half of the notes bench:
no-answer questions emptied, answerable ones emptied (all, and newly by this rule). Reads the
dump of bench-out/smallstores/measures/dump.py notes dev. Dev half only."""
import json, sys
from xmemo import text
from xmemo.bench import notes
split=sys.argv[1]
c=notes.load(notes.CORPUS)
vocab=set()
for n in c.notes: vocab |= set(text.stems(n.content))
R=json.load(open(f'/tmp/h45abst-measures/notes-{split}.json'))
def fix(R):
    out=[]
    for r in R:
        if r.get('empty_before_cut') and out and 'plan_sem' not in out[-1] and out[-1]['query']==r['query']:
            out[-1]['plan_sem']=r['plan_sem']; continue
        out.append(r)
    return out
seen=set(); P=[]
for r in fix(R):
    if r['qid'] in seen: continue
    seen.add(r['qid']); P.append(r)
def ev(x): return (x['lift'] or 0)+0.05*x['cov']+0.2*(x['late'] or 0)
def unknown(q):
    terms=[t for t in set(text.query_terms(q, strict=False)) if not text.is_stop_word(t)]
    return [t for t in terms if t not in vocab], terms
print('F2  noans_empty  answerable_empty(total, of which newly)')
for F2 in (0.18,0.19,0.2,0.21,0.22,0.23,0.24,0.25):
  for mode in ('any','share>=0.3','share>=0.5'):
    ne=0; ae=0; new=0
    for r in P:
        best=max((ev(x) for x in r.get('cands',[])), default=None)
        unk,terms=unknown(r['query'])
        share=len(unk)/max(len(terms),1)
        cond = bool(unk) if mode=='any' else share>=float(mode.split('>=')[1])
        floor = F2 if cond else 0.18
        empty = best is None or best < floor
        if not r['judg']: ne+=empty
        else:
            ae+=empty; new += empty and not (best is None or best<0.18)
    print(F2, mode, f"{ne}/25", ae, new)
