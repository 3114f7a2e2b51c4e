# try quantize_dynamic variants, measure cosine vs torch reference on 200 queries + 200 passages
import sys, time, os
from common import *
from onnxruntime.quantization import quantize_dynamic, QuantType
from transformers import AutoTokenizer
import logging; logging.getLogger().setLevel(logging.ERROR)
tok=AutoTokenizer.from_pretrained(M); Q,P=texts(); ref=np.load('/tmp/minilm/mpnet.npz')
V={
 'base':          dict(per_channel=False),
 'pc':            dict(per_channel=True),
 'rr':            dict(per_channel=False, reduce_range=True),
 'pc_rr':         dict(per_channel=True, reduce_range=True),
 'u8':            dict(per_channel=False, weight_type=QuantType.QUInt8),
 'matmul':        dict(per_channel=False, op_types_to_quantize=['MatMul']),
 'pc_matmul':     dict(per_channel=True, op_types_to_quantize=['MatMul']),
 'rr_matmul':     dict(per_channel=False, reduce_range=True, op_types_to_quantize=['MatMul']),
 'u8_matmul':     dict(per_channel=False, weight_type=QuantType.QUInt8, op_types_to_quantize=['MatMul']),
 'gather':        dict(per_channel=False, op_types_to_quantize=['Gather']),
}
names=sys.argv[1:] or list(V)
for n in names:
    kw=dict(weight_type=QuantType.QInt8); kw.update(V[n]); f=f'variants/{n}.onnx'; os.makedirs('variants',exist_ok=True)
    if not os.path.exists(f): quantize_dynamic('mpnet-fp32.onnx', f, **kw)
    s=ort_session(f,1)
    q=ort_embed_all(s,tok,Q[:200],bs=32); p=ort_embed_all(s,tok,P[:200],bs=32)
    cq=(q*ref['queries'][:200]).sum(1); cp=(p*ref['passages'][:200]).sum(1)
    print(f"VAR {n:10s} {str(V[n]):90s} size={os.path.getsize(f)/1e6:.1f}MB  cosQ mean={cq.mean():.4f} min={cq.min():.4f}  cosP mean={cp.mean():.4f} min={cp.min():.4f}", flush=True)
