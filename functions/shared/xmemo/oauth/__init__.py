"""The authorization server MCP clients talk to, in front of the identity provider.

Cognito has neither Client ID Metadata Documents nor dynamic client registration, so MCP
clients register and run authorization code + PKCE here; the person still logs in at the
provider (Cognito's hosted login on AWS, a small form locally) and the tokens handed out
are the provider's own, so the API's authorizer and scope checks stay as they are.
Pure logic over three injected edges: a `StateStore`, an `Upstream` and a CIMD fetcher."""
