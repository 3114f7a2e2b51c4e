import os, sys, time
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
import torch, numpy as np
from transformers import AutoModel, AutoTokenizer
M='/tmp/minilm/mpnet_model/all-mpnet-base-v2'
tok=AutoTokenizer.from_pretrained(M); model=AutoModel.from_pretrained(M).eval()
print(type(model).__name__)
class Wrap(torch.nn.Module):
    def __init__(s,m): super().__init__(); s.m=m
    def forward(s, input_ids, attention_mask):
        return s.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
w=Wrap(model).eval()
x=tok(["hello world", "a longer sentence for export testing"], padding=True, return_tensors='pt')
dynamo = len(sys.argv)>1 and sys.argv[1]=='dynamo'
out='mpnet-fp32.onnx' if not dynamo else 'mpnet-fp32-dynamo.onnx'
t=time.time()
kw=dict(input_names=['input_ids','attention_mask'], output_names=['last_hidden_state'], opset_version=17)
if dynamo:
    from torch.export import Dim
    b=Dim('batch'); s=Dim('seq', max=512)
    torch.onnx.export(w,(x['input_ids'],x['attention_mask']),out,dynamo=True,dynamic_shapes={'input_ids':{0:b,1:s},'attention_mask':{0:b,1:s}},external_data=False,**kw)
else:
    torch.onnx.export(w,(x['input_ids'],x['attention_mask']),out,dynamo=False,do_constant_folding=True,
      dynamic_axes={'input_ids':{0:'batch',1:'seq'},'attention_mask':{0:'batch',1:'seq'},'last_hidden_state':{0:'batch',1:'seq'}},**kw)
print('export s', time.time()-t, os.path.getsize(out))
import onnx; onnx.checker.check_model(out); print('checker ok')
