"""Pieces every generator's params share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class SeededYears(BaseModel):
    """A seed and an inclusive span of calendar years; unknown keys fail."""

    model_config = ConfigDict(extra="forbid")
    seed: int = 42
    first_year: int = Field(ge=1900, le=2100)
    last_year: int = Field(ge=1900, le=2100)

    @model_validator(mode="after")
    def _years_in_order(self) -> SeededYears:
        if self.last_year < self.first_year:
            raise ValueError("last_year must not be before first_year")
        return self
