"""The ranking profile: the one name and version of the constants that decide what retrieval
returns (fusion weights, the location-group boost, neighbouring context, the hub discount,
the late-interaction leg, the relevance floors).

Today's profile was fitted on LoCoMo's dev split (conversations), choosing each constant by
recall@10 and context-pack coverage at 1,500 tokens (`xmemo bench locomo`); the constants
themselves still live beside the code that applies them (`config.RetrievalSettings`,
`relevance`, `late`) and move here later. Any change to one of them that changes results
bumps `VERSION`.

A store records the profile it was created under beside its embedder (`xmemo.pin`), and
`retrieval_plan.profile` names the profile a result was ranked with, so a figure, a stored
store and an answer can be tied to the same constants."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RankingProfile:
    name: str
    version: int
    fitted_on: str
    metric: str

    def identity(self) -> dict[str, str | int]:
        """What `retrieval_plan.profile` reports and a store records: name and version."""
        return {"name": self.name, "version": self.version}


PROFILE = RankingProfile(
    name="locomo-recall",
    version=1,
    fitted_on="LoCoMo dev split (conversations)",
    metric="recall@10 and coverage@1500",
)
