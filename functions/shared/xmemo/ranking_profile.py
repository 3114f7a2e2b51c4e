"""The ranking profile: the one name and version of the constants that decide what retrieval
returns (fusion weights, the location-group boost, neighbouring context, the hub discount,
the late-interaction leg, the relevance floors).

Today's profile was fitted on LoCoMo's dev split (conversations), choosing each constant by
recall@10 and context-pack coverage at 1,500 tokens (`xmemo bench locomo`), except the
evidence cut's (`RetrievalSettings.evidence_*`), fitted on the dev half of `xmemo bench
notes` (an agent's notes) by pack precision, pack recall and the no-answer empty share; the constants
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
    version=2,  # 2: the evidence cut (`xmemo.evidence`) and conversations only where the location says so
    fitted_on="LoCoMo dev split (conversations); the evidence cut on the dev half of `xmemo bench notes`",
    metric="recall@10 and coverage@1500 (LoCoMo); pack precision, pack recall and the no-answer empty share (notes)",
)
