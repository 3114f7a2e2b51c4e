# (a) quantize_dynamic excluding groups of MatMuls; (b) weight-only MatMulNBits 8-bit (block-wise)
import sys, time, os
from common import *
from onnxruntime.quantization import quantize_dynamic, QuantType
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
import onnx
from transformers import AutoTokenizer
import logging; logging.getLogger().setLevel(logging.ERROR)
tok=AutoTokenizer.from_pretrained(M); Q,P=texts(); ref=np.load('/tmp/minilm/mpnet.npz')
m=onnx.load('mpnet-fp32.onnx',load_external_data=False); inits={i.name for i in m.graph.initializer}
MM=[n.name for n in m.graph.node if n.op_type=='MatMul' and any(i in inits for i in n.input)]
G=lambda *keys: [n for n in MM if any(k in n for k in keys)]
def dyn(excl, **kw):
    def f(out): quantize_dynamic('mpnet-fp32.onnx', out, weight_type=QuantType.QInt8, nodes_to_exclude=excl, **kw)
    return f
def nbits(block, acc, sym=False):
    def f(out):
        q=MatMulNBitsQuantizer('mpnet-fp32.onnx', bits=8, block_size=block, is_symmetric=sym, accuracy_level=acc)
        q.process(); q.model.save_model_to_file(out, use_external_data_format=False)
    return f
V={
 'ex_ffnout':      dyn(G('output/dense')),
 'ex_ffn':         dyn(G('output/dense','intermediate/dense')),
 'ex_ffnout_pcrr': dyn(G('output/dense'), per_channel=True, reduce_range=True),
 'ex_ffn_pcrr':    dyn(G('output/dense','intermediate/dense'), per_channel=True, reduce_range=True),
 'nb8_b32_acc0':   nbits(32, 0),
 'nb8_b128_acc0':  nbits(128, 0),
 'nb8_b32_acc4':   nbits(32, 4),
 'nb8_b128_acc4':  nbits(128, 4),
}
for n in (sys.argv[1:] or list(V)):
    f=f'variants/{n}.onnx'
    if not os.path.exists(f):
        try: V[n](f)
        except Exception as e: print('VAR',n,'FAILED',repr(e)[:300],flush=True); continue
    try: s=ort_session(f,1)
    except Exception as e: print('VAR',n,'LOAD FAILED',repr(e)[:300],flush=True); continue
    q=ort_embed_all(s,tok,Q[:200],bs=32); p=ort_embed_all(s,tok,P[:200],bs=32)
    cq=(q*ref['queries'][:200]).sum(1); cp=(p*ref['passages'][:200]).sum(1)
    ts=[]
    for x in Q[:100]:
        t=time.perf_counter(); ort_embed(s,tok,[x]); ts.append(1000*(time.perf_counter()-t))
    print(f"VAR {n:15s} size={os.path.getsize(f)/1e6:.1f}MB cosQ mean={cq.mean():.4f} min={cq.min():.4f} cosP mean={cp.mean():.4f} min={cp.min():.4f} 1thr single-query ms (100q, noisy) p50={np.median(ts[20:]):.1f}", flush=True)
