"""Retrieval: from a query and a store's candidates to a ranked list. `fusion` fuses the
lexical and semantic legs (hub discount, location-group boost, late leg, diversity),
`relevance` says when a hit stands above chance, `late` scores late interaction over token
states, and `profile` names the ranking profile whose constants decide what is returned.
The submodules load lazily (numpy only where a vector is compared)."""
