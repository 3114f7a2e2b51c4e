"""Adapters for agent frameworks, each over `xmemo.client` (never the store): `langgraph`
(a LangGraph `BaseStore`) and `pydantic_ai` (a Pydantic AI toolset). Each imports its
framework, so import the one you use; the frameworks are not dependencies of `xmemo`."""
