"""The local stand-in for AWS: a gateway that reads `template.yaml`, verifies RS256 tokens
against its own JWKS, and invokes the same Lambda handlers in-process."""
