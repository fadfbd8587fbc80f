"""What every section of params.yaml shares: unknown keys fail, values are frozen; the profiles."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Profile = Literal["tiny", "default", "full"]


class Section(BaseModel):
    """Base for params sections: unknown keys fail."""

    model_config = ConfigDict(extra="forbid", frozen=True)
