"""The prompt a Conductor model was trained on, carried in its model directory.

A model trained without the few-shot examples (the tiny local model: its context is short) writes
garbage when they are in its prompt, and the other way round. Training knows the format; it writes
it next to the weights (`conductor_prompt.json`) so every later user of the directory (evaluation,
`conductor ask`, `conductor serve`, the registry's copies) prompts the model as it was trained,
instead of each caller recovering the fact from a config it may not have."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

FILE = "conductor_prompt.json"


@dataclass(frozen=True)
class PromptFormat:
    few_shot_examples: bool  # the out-of-domain example workflows in the system prompt
    # The effort level a prompt states when its caller states none (conductor/effort.py): a model
    # trained with effort rows never saw a prompt without a level. None: the prompt states none.
    default_effort: str | None = None


def write_prompt_format(model_dir: str | Path, fmt: PromptFormat) -> Path:
    path = Path(model_dir) / FILE
    path.write_text(json.dumps(asdict(fmt), indent=2) + "\n")
    return path


def read_prompt_format(model_dir: str | Path) -> PromptFormat | None:
    """The directory's prompt format, or None for a model that carries none (any causal LM)."""
    path = Path(model_dir) / FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        effort = data.get("default_effort")
        return PromptFormat(few_shot_examples=bool(data["few_shot_examples"]),
                            default_effort=None if effort is None else str(effort))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a prompt format ({exc})") from None
