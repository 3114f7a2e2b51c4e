import sys, time
from common import *
kind, threads = sys.argv[1], int(sys.argv[2])
os.environ['OMP_NUM_THREADS']=str(threads)
from transformers import AutoTokenizer
tok=AutoTokenizer.from_pretrained(M); Q,_=texts()
if kind=='torch':
    import torch; torch.set_num_threads(threads); torch.set_num_interop_threads(1)
    from transformers import AutoModel
    model=AutoModel.from_pretrained(M).eval()
    def run(q):
        t0=time.perf_counter()
        e=tok([q],padding=True,truncation=True,max_length=MAXLEN,return_tensors='pt')
        t1=time.perf_counter()
        with torch.inference_mode():
            h=model(**e).last_hidden_state
            m=e['attention_mask'].unsqueeze(-1).float()
            v=(h*m).sum(1)/m.sum(1).clamp(min=1e-9); v=torch.nn.functional.normalize(v,dim=1).numpy()
        return v, t1-t0, time.perf_counter()-t0
elif kind=='st':
    import torch; torch.set_num_threads(threads); torch.set_num_interop_threads(1)
    from sentence_transformers import SentenceTransformer
    model=SentenceTransformer(M,device='cpu')
    def run(q):
        t0=time.perf_counter(); v=model.encode([q],show_progress_bar=False,normalize_embeddings=True); return v,0.0,time.perf_counter()-t0
else:
    sess=ort_session(kind,threads)
    def run(q):
        t0=time.perf_counter()
        ids,mask=tok_np(tok,[q]); t1=time.perf_counter()
        h=sess.run(None,{'input_ids':ids,'attention_mask':mask})[0]
        return pool(h,mask), t1-t0, time.perf_counter()-t0
for q in Q[:30]: run(q)   # warmup
def busy():
    v=[int(x) for x in open('/proc/stat').readline().split()[1:]]; return v[0]+v[1]+v[2]+v[5]+v[6]+v[7]
def own():
    v=open('/proc/self/stat').read().rsplit(')',1)[1].split(); return int(v[11])+int(v[12])
b0,o0,w0=busy(),own(),time.time()
tot=[]; tk=[]; vs=[]
for q in Q:
    v,a,b=run(q); tk.append(a*1000); tot.append(b*1000); vs.append(v[0])
foreign=100*((busy()-b0)-(own()-o0))/os.sysconf('SC_CLK_TCK')/(time.time()-w0)
tot=np.array(tot); tk=np.array(tk); vs=np.array(vs)
ref=np.load('/tmp/minilm/mpnet.npz')['queries']
cos=(vs*ref).sum(1)
print(f"RESULT {kind} thr={threads} n={len(tot)} mean={tot.mean():.2f} p50={np.percentile(tot,50):.2f} p95={np.percentile(tot,95):.2f} max={tot.max():.2f} tok_mean={tk.mean():.3f} tok_share={100*tk.sum()/tot.sum():.1f}% cos_vs_ref mean={cos.mean():.6f} min={cos.min():.6f} foreign_cpu={foreign:.0f}%", flush=True)
