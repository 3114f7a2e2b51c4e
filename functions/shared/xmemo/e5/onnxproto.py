"""The few ONNX protobuf messages the encoder graph needs, written directly (protobuf wire
format), so that serving needs onnxruntime alone and not the `onnx` package. Field numbers
are those of onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto,
ValueInfoProto); tests check the bytes with `onnx.checker`."""

from __future__ import annotations

import struct

import numpy as np

FLOAT, UINT8, INT64 = 1, 2, 7  # TensorProto.DataType
_ATTR_FLOAT, _ATTR_INT, _ATTR_INTS = 1, 2, 7  # AttributeProto.AttributeType
_ELEMENT = {np.dtype(np.float32): FLOAT, np.dtype(np.uint8): UINT8, np.dtype(np.int64): INT64}


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64 as two's complement, as protobuf does
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _float(field: int, value: float) -> bytes:
    return _varint(field << 3 | 5) + struct.pack("<f", value)


def tensor(name: str, array: np.ndarray) -> bytes:
    """TensorProto: dims (1), data_type (2), name (8), raw_data (9, little-endian)."""
    array = np.ascontiguousarray(array)
    dims = b"".join(_int(1, d) for d in array.shape)
    return dims + _int(2, _ELEMENT[array.dtype]) + _bytes(8, name) + _bytes(9, array.astype(array.dtype.newbyteorder("<")).tobytes())


def attribute(name: str, value: int | float | list[int]) -> bytes:
    """AttributeProto: name (1), f (2), i (3), ints (8), type (20)."""
    if isinstance(value, float):
        return _bytes(1, name) + _float(2, value) + _int(20, _ATTR_FLOAT)
    if isinstance(value, int):
        return _bytes(1, name) + _int(3, value) + _int(20, _ATTR_INT)
    return _bytes(1, name) + b"".join(_int(8, v) for v in value) + _int(20, _ATTR_INTS)


def node(op: str, inputs: list[str], outputs: list[str], domain: str = "", **attributes) -> bytes:
    """NodeProto: input (1), output (2), op_type (4), attribute (5), domain (7)."""
    body = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs) + _bytes(4, op)
    body += b"".join(_bytes(5, attribute(k, v)) for k, v in attributes.items())
    return body + (_bytes(7, domain) if domain else b"")


def value_info(name: str, element: int, dims: list[int | str]) -> bytes:
    """ValueInfoProto: name (1), type (2: TypeProto.tensor_type (1): elem_type (1), shape (2))."""
    shape = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, _int(1, element) + _bytes(2, shape)))


def model(nodes: list[bytes], initializers: list[bytes], inputs: list[bytes], outputs: list[bytes], opsets: dict[str, int]) -> bytes:
    """ModelProto: ir_version (1), graph (7: node 1, name 2, initializer 5, input 11,
    output 12), opset_import (8: domain 1, version 2)."""
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "encoder")
    graph += b"".join(_bytes(5, t) for t in initializers)
    graph += b"".join(_bytes(11, i) for i in inputs) + b"".join(_bytes(12, o) for o in outputs)
    opset = b"".join(_bytes(8, (_bytes(1, domain) if domain else b"") + _int(2, version)) for domain, version in opsets.items())
    return _int(1, 8) + _bytes(7, graph) + opset
