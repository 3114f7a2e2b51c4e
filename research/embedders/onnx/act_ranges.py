# per-Linear input activation ranges in torch (explains dynamic per-tensor activation quantization error)
from common import *
import torch
from transformers import AutoModel, AutoTokenizer
tok=AutoTokenizer.from_pretrained(M); model=AutoModel.from_pretrained(M).eval(); Q,P=texts()
st={}
def hook(name):
    def f(mod, inp, out):
        x=inp[0].abs().flatten(0,-2); r=st.setdefault(name,[0,[]]); r[0]=max(r[0],x.max().item()); r[1].append(x.median().item())
    return f
for n,m in model.named_modules():
    if isinstance(m,torch.nn.Linear): m.register_forward_hook(hook(n))
with torch.inference_mode():
    for q in Q[:50]: model(**tok([q],return_tensors='pt'))
for n,(mx,med) in st.items():
    if n.startswith('encoder.layer.') and int(n.split('.')[2]) in (0,1,5,10,11) or not n.startswith('encoder.layer'):
        print(f"{n:45s} max|x|={mx:8.2f} median|x|={np.mean(med):.3f} ratio={mx/np.mean(med):.0f}")
