# exact (saturation-free) simulation of quantize_dynamic numerics in torch: weights int8 symmetric (per-tensor or per-output-channel),
# activations uint8 asymmetric per-tensor (DynamicQuantizeLinear). Compare with the ORT int8 results to separate
# "model numerics" from "kernel" error.
import sys
from common import *
import torch
from transformers import AutoModel, AutoTokenizer
tok=AutoTokenizer.from_pretrained(M); Q,P=texts(); ref=np.load('/tmp/minilm/mpnet.npz')
def qw(w, per_channel, rr):
    qmax=63 if rr else 127
    a=w.abs().amax(dim=1,keepdim=True) if per_channel else w.abs().max()
    s=a/qmax; return torch.round(w/s).clamp(-qmax,qmax)*s
def qa(x, rr=False):
    lo=min(x.min().item(),0.); hi=max(x.max().item(),0.); qmax=127 if rr else 255
    s=(hi-lo)/qmax; zp=round(-lo/s); return (torch.clamp(torch.round(x/s)+zp,0,qmax)-zp)*s
class QL(torch.nn.Module):
    def __init__(s, lin, pc, rr, act=True):
        super().__init__(); s.w=qw(lin.weight.data,pc,rr); s.b=lin.bias; s.act=act; s.rr=rr
    def forward(s,x): return torch.nn.functional.linear(qa(x,s.rr) if s.act else x, s.w, s.b)
for name,pc,rr,act in [('W8 per-tensor + A8 dyn',False,False,True),('W8 per-channel + A8 dyn',True,False,True),
                       ('W7 per-tensor + A7 (reduce_range)',False,True,True),('W7 per-channel + A7',True,True,True),
                       ('W8 per-tensor only (fp act)',False,False,False),('W8 per-channel only (fp act)',True,False,False)]:
    model=AutoModel.from_pretrained(M).eval()
    for n,m in list(model.encoder.named_modules()):
        for cn,c in list(m.named_children()):
            if isinstance(c,torch.nn.Linear): setattr(m,cn,QL(c,pc,rr,act))
    out=[]
    with torch.inference_mode():
        for i in range(0,200,32):
            ids,mask=tok_np(tok,Q[i:i+32] if i+32<=200 else Q[i:200])
            h=model(input_ids=torch.tensor(ids),attention_mask=torch.tensor(mask)).last_hidden_state.numpy(); out.append(pool(h,mask))
    c=(np.vstack(out)*ref['queries'][:200]).sum(1)
    print(f"SIM {name:36s} cosQ200 mean={c.mean():.4f} min={c.min():.4f}",flush=True)
