"""Command options derived from the typed configs, as TRL's `TrlParser` derives its CLI from
`GRPOConfig`: a field's default and description are stated once, on the config, and the option
reads them (`field_option`). A command names its parameter after the field it fills, so the
config is built from the parameters by name (`fields_of`) instead of being copied field by field,
and tests/test_cli_config_options.py compares every such option with its field.

Configs are pydantic models (`EvalConfig`, `ServeConfig`, `NightConfig`, `GateConfig`) or
dataclasses with a `help` in each field's metadata (`ConductorTrainingConfig`, TRL's way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import typer

# What a derived option's default is when the command fills the field from the profile or the
# settings rather than from the config's own default; its help says so.
FROM_PROFILE = "default: the profile's"


def _dataclass_field(config: type, name: str) -> dataclasses.Field:
    for f in dataclasses.fields(config):
        if f.name == name:
            return f
    raise KeyError(f"{config.__name__} has no field {name!r}")


def field_default(config: type, name: str) -> Any:
    """The field's default (a default factory's value; `...` for a required field)."""
    if dataclasses.is_dataclass(config):
        f = _dataclass_field(config, name)
        if f.default is not dataclasses.MISSING:
            return f.default
        return f.default_factory() if f.default_factory is not dataclasses.MISSING else ...
    info = config.model_fields[name]  # type: ignore[attr-defined]
    return ... if info.is_required() else info.get_default(call_default_factory=True)


def field_help(config: type, name: str) -> str:
    """The field's description (pydantic) or its metadata's `help` (dataclass)."""
    if dataclasses.is_dataclass(config):
        return str(_dataclass_field(config, name).metadata.get("help", ""))
    return config.model_fields[name].description or ""  # type: ignore[attr-defined]


def field_option(config: type, name: str, *flags: str, from_profile: bool = False, extra: str = "",
                 **kwargs: Any) -> Any:
    """A typer option for `config.name`: the field's default and help. `from_profile`: the
    command fills an unset option from the profile or settings (default None, and the help says
    so). `extra`: a sentence the CLI adds after the field's help (how to repeat the option)."""
    default = None if from_profile else field_default(config, name)
    help_text = " ".join(t for t in (field_help(config, name), extra,
                                     f"({FROM_PROFILE})" if from_profile else "") if t)
    return typer.Option(default, *flags, help=help_text, **kwargs)


def fields_of(config: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of `values` (a command's parameters) that name a field of `config`."""
    names = ({f.name for f in dataclasses.fields(config)} if dataclasses.is_dataclass(config)
             else set(config.model_fields))  # type: ignore[attr-defined]
    return {k: v for k, v in values.items() if k in names}
