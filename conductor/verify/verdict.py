from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Verdict(BaseModel):
    """What a verifier concluded about one answer."""

    model_config = ConfigDict(frozen=True)

    correct: bool
    extracted: str | None = None
    reason: str = ""
    method: str = ""  # e.g. "math-verify", "choice-letter", "sandbox", "llm-judge"
    judge: str | None = None  # the worker that judged, when an LLM judge was consulted
    # code verdicts: the sandbox isolation the tests ran under ("full" or "weak"); None elsewhere
    isolation: str | None = None
