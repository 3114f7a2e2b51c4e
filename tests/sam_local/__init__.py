"""`sam local invoke` and `sam local start-api` in Docker (issue 21)."""
