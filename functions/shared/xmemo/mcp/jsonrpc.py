"""JSON-RPC 2.0 message shapes and the error codes MCP uses."""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Defined by the 2026-07-28 revision (the -32020..-32099 range is MCP's).
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

RequestId = str | int


class RpcError(Exception):
    """A protocol-level failure answered as a JSON-RPC error (never a tool's own failure)."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def body(self, id_: RequestId | None) -> dict[str, Any]:
        return error(id_, self.code, self.message, self.data)


def result(id_: RequestId, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": value}


def error(id_: RequestId | None, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": err}


def readable_id(message: Any) -> RequestId | None:
    """The message's id if it is a valid one (string or integer, never bool or null)."""
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def kind(message: Any) -> str:
    """`request`, `notification` or `response`; raise -32600 for anything else."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, "not a JSON-RPC 2.0 message")
    if "method" in message:
        if not isinstance(message["method"], str):
            raise RpcError(INVALID_REQUEST, "method must be a string")
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            raise RpcError(INVALID_REQUEST, "params must be an object")
        if "id" not in message:
            return "notification"
        if readable_id(message) is None:
            raise RpcError(INVALID_REQUEST, "id must be a string or an integer (MCP forbids null)")
        return "request"
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    raise RpcError(INVALID_REQUEST, "neither a request, a notification nor a response")
