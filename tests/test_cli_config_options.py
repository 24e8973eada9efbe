"""Each command option that fills a config field takes that field's default and help (issue 34:
defaults and help stated once, on the config). A command names such a parameter after the field;
this compares every one of them with its field, and checks that the commands keep filling their
configs by name (a floor of matched options), so that renaming parameters away cannot pass."""

from __future__ import annotations

import inspect

import pytest
from typer.models import OptionInfo

from conductor.cli.options import FROM_PROFILE, field_default, field_help
from conductor.cli.train import train
from conductor.config import Settings
from conductor.evaluation.config import EvalConfig
from flows.cli import nightly, run
from flows.evaluation_cli import eval_
from flows.model_cli import model_promote
from flows.nightly_config import NightConfig
from registry.promotion import GateConfig
from server.cli import serve
from server.config import ServeConfig

# command, the configs its options fill, and how many of its options name one of their fields
# (exactly: an option renamed away from its field, or a new one, shows here)
COMMANDS = [
    (eval_, (EvalConfig,), 19),
    (serve, (ServeConfig,), 11),
    (nightly, (NightConfig, GateConfig), 16),
    (model_promote, (GateConfig,), 4),
    (train, (Settings,), 4),  # profile, pool_file (from the profile), seed and allow_simulated
    (run, (Settings,), 3),
]


def _fields(config: type) -> set[str]:
    return set(config.model_fields)


def matched_options(command, configs):  # noqa: ANN001, ANN202
    """(parameter name, its OptionInfo, the config whose field it names) for every option that
    names a field (a gate option's parameter may carry a prefix the flag drops: gate_method)."""
    out = []
    for name, param in inspect.signature(command).parameters.items():
        info = param.default
        if not isinstance(info, OptionInfo):
            continue
        for config in configs:
            field = name if name in _fields(config) else name.removeprefix("gate_")
            if field in _fields(config):
                out.append((name, field, info, config))
                break
    return out


@pytest.mark.parametrize("command,configs,count", COMMANDS, ids=[c[0].__name__ for c in COMMANDS])
def test_options_state_their_fields_default_and_help(command, configs, count) -> None:  # noqa: ANN001
    matched = matched_options(command, configs)
    assert len(matched) == count, f"{command.__name__}: {[m[0] for m in matched]} name config fields"
    for name, field, info, config in matched:
        help_text = info.help or ""
        assert help_text.startswith(field_help(config, field)), (command.__name__, name, help_text)
        if info.default is None and help_text.endswith(f"({FROM_PROFILE})"):
            continue  # filled from the profile or settings when unset; the help says so
        assert info.default == field_default(config, field), (command.__name__, name, info.default)


def test_field_default_reads_pydantic_and_dataclass_configs() -> None:
    import dataclasses

    @dataclasses.dataclass
    class Recipe:
        steps: int = dataclasses.field(default=3, metadata={"help": "How many."})
        tags: list[str] = dataclasses.field(default_factory=lambda: ["a"], metadata={"help": "Tags."})

    assert (field_default(Recipe, "steps"), field_help(Recipe, "steps")) == (3, "How many.")
    assert field_default(Recipe, "tags") == ["a"]
    assert field_default(EvalConfig, "methods") is ...  # required
    assert field_default(NightConfig, "baselines") == NightConfig().baselines  # a default factory's value
