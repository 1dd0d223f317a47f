"""The base of every settings section: field `x` of a section with prefix `p_` is read from `FIREBREAK_P_X`.

The platform's `Settings` (settings.py), its LLM section (llm_settings.py) and each capability's section
derive from it. This module and settings.py are the only ones in shared/ that read the process environment
(tests/unit/core/test_no_environ_reads.py keeps it so): everything else gets its values from `Settings`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from shared.core.keyvault_references import is_unresolved_reference

SectionT = TypeVar("SectionT", bound="SettingsSection")


class SettingsError(ValueError):
    """Settings that must not run together; the message names the setting to change."""


class SettingsSection(BaseModel):
    """Settings read from the environment: field `x` of a section with prefix `p_` is `FIREBREAK_P_X`.

    Each capability declares one (its `settings.py`); the composition root collects them into the
    app's `Settings`, and a capability reads its own with `settings.section(TheSection)`.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    env_prefix: ClassVar[str] = ""
    # Other variable names people know for a field (the platform's or a vendor's), read when the
    # FIREBREAK_ name is absent.
    env_aliases: ClassVar[Mapping[str, str]] = {}
    # Variables a section reads by hand in `values_from_env` (fallbacks that only mean something together),
    # listed for the catalogue's clash check and the deployment's list of app settings.
    extra_env_names: ClassVar[tuple[str, ...]] = ()
    # Fields with no variable of their own: `values_from_env` sets them from other variables.
    derived_fields: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def env_names(cls) -> dict[str, str]:
        """Field name -> the environment variable it is read from."""
        return {
            name: f"FIREBREAK_{cls.env_prefix}{name}".upper()
            for name in cls.model_fields
            if name not in cls.derived_fields
        }

    @classmethod
    def values_from_env(cls, env: Mapping[str, str]) -> dict[str, Any]:
        """The section's raw values; an unresolved Key Vault reference counts as unset (keyvault_references.py)."""
        values: dict[str, Any] = {}
        for name, key in cls.env_names().items():
            alias = cls.env_aliases.get(name)
            if key in env and not is_unresolved_reference(env[key]):
                values[name] = env[key]
            elif alias and env.get(alias) and not is_unresolved_reference(env[alias]):
                values[name] = env[alias]
        return values

    @classmethod
    def from_env(cls: type[SectionT], env: Mapping[str, str] | None = None) -> SectionT:
        """Read this section alone: unknown variables are ignored; a bad value raises SettingsError naming
        its variable."""
        return cls.validated(cls.values_from_env(os.environ if env is None else env))

    def refuse_unsafe(self, *, running_on_azure: bool) -> None:
        """Raise SettingsError for values that must not run on Azure (a section overrides this)."""

    @classmethod
    def validated(cls: type[SectionT], values: Mapping[str, Any]) -> SectionT:
        """The section from raw values; a bad value is a SettingsError naming the variable to change."""
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            names = cls.env_names()
            problems = "; ".join(
                f"{names.get(str(e['loc'][0]), e['loc'][0]) if e['loc'] else cls.__name__}: {e['msg']}"
                for e in exc.errors()
            )
            raise SettingsError(f"Invalid setting(s): {problems}") from None
