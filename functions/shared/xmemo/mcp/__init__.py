"""The MCP endpoint: JSON-RPC over the stateless Streamable HTTP transport.

One module a concern, so each rule has one home:
`jsonrpc` (message shapes and error codes), `versions` (which protocol revisions we
speak and what each allows), `registry` (tool definitions generated from the input
models; `outputSchema` from `xmemo.results`), `errors` (domain
errors → tool results, the only such mapping), `dispatch` (one request → one result),
`transport` (the HTTP rules: methods, headers, batches, status codes), `oauth` (RFC 9728
resource metadata and the `WWW-Authenticate` challenge) and `edge` (the MCP and
metadata routes on the shared REST resolver of `xmemo.api`: API Gateway events in and
out). Nothing here does I/O at import time.
"""
