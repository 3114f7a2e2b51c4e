# embed all queries + passages with an ONNX model (2 threads, length-sorted batches of 32, padded with attention mask)
import sys, time
from common import *
from transformers import AutoTokenizer
f, out = sys.argv[1], sys.argv[2]
tok=AutoTokenizer.from_pretrained(M); Q,P=texts(); ref=np.load('/tmp/minilm/mpnet.npz')
s=ort_session(f,2); ort_embed_all(s,tok,Q[:64])  # warmup
t=time.time(); Qe=ort_embed_all(s,tok,Q); tq=time.time()-t
t=time.time(); Pe=ort_embed_all(s,tok,P); tp=time.time()-t
Qe/=np.linalg.norm(Qe,axis=1,keepdims=True); Pe/=np.linalg.norm(Pe,axis=1,keepdims=True)
if out!='-': np.savez(out, queries=Qe.astype(np.float32), passages=Pe.astype(np.float32))
cq=(Qe*ref['queries']).sum(1); cp=(Pe*ref['passages']).sum(1)
# retrieval agreement: top-10 passages per query vs fp32 reference
def top(qq,pp,k=10): return np.argsort(-(qq@pp.T),axis=1)[:,:k]
a,b=top(Qe,Pe),top(ref['queries'],ref['passages'])
ov=np.mean([len(set(x)&set(y))/10 for x,y in zip(a,b)]); t1=np.mean(a[:,0]==b[:,0])
print(f"EMB {f} -> {out}: queries {tq:.1f}s, passages {tp:.1f}s ({1000*tp/len(P):.2f} ms/passage); cos vs fp32: Q mean={cq.mean():.4f} min={cq.min():.4f} P mean={cp.mean():.4f} min={cp.min():.4f}; top10 overlap={ov:.3f} top1 agree={t1:.3f}", flush=True)
