import sys
from common import *
from transformers import AutoTokenizer
f=sys.argv[1] if len(sys.argv)>1 else 'mpnet-fp32.onnx'
tok=AutoTokenizer.from_pretrained(M); Q,P=texts(); ref=np.load('/tmp/minilm/mpnet.npz')
s=ort_session(f,2)
a=np.vstack([ort_embed(s,tok,[q]) for q in Q[:50]])
print(f,'50 queries one-at-a-time: max abs diff %.3g, min cos %.8f'%(np.abs(a-ref['queries'][:50]).max(), (a*ref['queries'][:50]).sum(1).min()))
b=ort_embed(s,tok,Q[:50])
print('50 queries one padded batch: max abs diff %.3g'%np.abs(b-ref['queries'][:50]).max())
p=ort_embed_all(s,tok,P[:64],bs=16,sort=False)
print('64 passages padded bs16: max abs diff %.3g, min cos %.8f'%(np.abs(p-ref['passages'][:64]).max(), (p*ref['passages'][:64]).sum(1).min()))
L=[len(tok(x,truncation=True,max_length=MAXLEN)['input_ids']) for x in P]; i=int(np.argmax(L))
print('longest passage tokens',L[i],'diff %.3g'%np.abs(ort_embed(s,tok,[P[i]])-ref['passages'][i]).max())
