import os, sys, json, time
os.environ.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
import numpy as np, torch
torch.set_num_threads(1)
from sentence_transformers import SentenceTransformer
name, path = sys.argv[1], sys.argv[2]
d = json.load(open('/tmp/minilm/texts.json'))
Q, P = d['queries'], d['passages']
t=time.time(); m = SentenceTransformer(path, device='cpu'); print(name, 'load s', round(time.time()-t,2), 'max_seq_len', m.max_seq_length, flush=True)
print(m)
s = m.encode(["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."], normalize_embeddings=True)
print('sanity bread %.4f horse %.4f' % (s[0]@s[1], s[0]@s[2]), flush=True)
enc = lambda x: m.encode(x, batch_size=64, show_progress_bar=False, normalize_embeddings=True, convert_to_numpy=True).astype(np.float32)
m.encode(Q[:8], batch_size=64, show_progress_bar=False)  # warmup
t=time.time(); Pe = enc(P); tp=time.time()-t
print('passages s %.1f (%.2f ms/passage)' % (tp, 1000*tp/len(P)), flush=True)
t=time.time(); Qe = enc(Q); print('queries batch s %.1f' % (time.time()-t), flush=True)
ts=[]
for q in Q[:50]:
    t=time.perf_counter(); enc([q]); ts.append(1000*(time.perf_counter()-t))
print('single query ms mean %.1f p95 %.1f' % (np.mean(ts), np.percentile(ts,95)))
Qs = enc(Q[:50]); print('single vs batch max abs diff', float(np.abs(Qs-Qe[:50]).max()))
print('shapes', Qe.shape, Pe.shape, Qe.dtype, 'norms', float(np.linalg.norm(Qe,axis=1).min()), float(np.linalg.norm(Pe,axis=1).max()))
np.savez(f'/tmp/minilm/{name}.npz', queries=Qe, passages=Pe)
