import os, time
from onnxruntime.quantization import quantize_dynamic, QuantType
for pc in (False, True):
    out='mpnet-int8%s.onnx'%('-perchannel' if pc else '')
    t=time.time()
    quantize_dynamic('mpnet-fp32.onnx', out, weight_type=QuantType.QInt8, per_channel=pc)
    print(out,'quant s %.1f'%(time.time()-t),'bytes',os.path.getsize(out))
print('mpnet-fp32.onnx bytes',os.path.getsize('mpnet-fp32.onnx'))
