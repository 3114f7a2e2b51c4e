import os
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
import json, numpy as np
M='/tmp/minilm/mpnet_model/all-mpnet-base-v2'
MAXLEN=384  # sentence_bert_config max_seq_length
def texts():
    d=json.load(open('/tmp/minilm/texts.json')); return d['queries'], d['passages']
def tok_np(tok, batch):
    e=tok(batch, padding=True, truncation=True, max_length=MAXLEN, return_tensors='np')
    return e['input_ids'].astype(np.int64), e['attention_mask'].astype(np.int64)
def pool(h, mask):
    m=mask[...,None].astype(np.float32)
    v=(h*m).sum(1)/np.clip(m.sum(1),1e-9,None)
    return v/np.clip(np.linalg.norm(v,axis=1,keepdims=True),1e-12,None)
def ort_session(path, threads):
    import onnxruntime as ort
    so=ort.SessionOptions(); so.intra_op_num_threads=threads; so.inter_op_num_threads=1
    so.execution_mode=ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
def ort_embed(sess, tok, batch):
    ids,mask=tok_np(tok,batch)
    h=sess.run(None,{'input_ids':ids,'attention_mask':mask})[0]
    return pool(h,mask)
def ort_embed_all(sess, tok, items, bs=32, sort=True):
    order=np.argsort([-len(t) for t in items]) if sort else np.arange(len(items))
    out=np.zeros((len(items),768),np.float32)
    for i in range(0,len(items),bs):
        idx=order[i:i+bs]; out[idx]=ort_embed(sess,tok,[items[j] for j in idx])
    return out
