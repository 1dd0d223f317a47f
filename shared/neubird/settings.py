"""Settings of the NeuBird capability."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field

from shared.core.settings import SettingsSection


class NeubirdSettings(SettingsSection):
    env_prefix = "neubird_"
    env_aliases: ClassVar[Mapping[str, str]] = {"base_url": "NEUBIRD_BASE_URL"}

    base_url: str | None = Field(
        None, description="The NeuBird API, e.g. https://prod.app.neubird.ai/api (also read from NEUBIRD_BASE_URL)."
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url)
