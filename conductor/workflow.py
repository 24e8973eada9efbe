"""The Conductor's output format: three equal-length Python lists.

    model_id    = [0, 2]                        # worker index as offered in the prompt
    subtasks    = ["Solve ...", "Check ..."]    # one instruction per step
    access_list = [[], "all"]                   # earlier steps each step may read

In a recursion round (a second round written after reading the first), an access entry may also
name `"prev"`: every step of the earlier round (its full responses). `"prev"` alone or as an item
of a list: `["prev"]` reads the earlier round only, `["prev", 0, 1]` the earlier round and this
round's steps 0 and 1. In a first round there is no earlier round, and `"prev"` is a ParseError.

`parse` turns model text into a `Workflow` or a `ParseError` value; it never raises.
`render` writes the canonical form, and `parse(render(w), n) == w`.
"""

from __future__ import annotations

import ast
import enum
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, model_validator

from conductor.answers import strip_think

ALL: Literal["all"] = "all"
PREV: Literal["prev"] = "prev"  # every step of the earlier round (recursion rounds only)
Access = Union[Literal["all"], tuple[Union[int, Literal["prev"]], ...]]

DEFAULT_MAX_STEPS = 5
DEFAULT_MAX_CHARS = 64 * 1024


def later_round_max_steps(max_steps: int, earlier_steps: int) -> int:
    """How many steps a later (recursion) round may run: at most as many as the round it reads
    (never fewer than one, never more than `max_steps`). So a second round at most doubles a
    question's calls, whatever it chooses to add; charging for calls alone did not hold it there
    (docs/training.md, issue 32). The prompt states it and `parse` refuses more."""
    return max(1, min(max_steps, earlier_steps))


class Step(BaseModel):
    """One step of a workflow, with its access resolved to concrete earlier positions."""

    model_config = ConfigDict(frozen=True)

    index: int
    worker: int
    subtask: str
    access: Access
    reads: tuple[int, ...]  # this round's steps
    reads_prior: bool = False  # every step of the earlier round ("prev")


class Workflow(BaseModel):
    """A parsed, validated workflow. Worker ids are indices into the pool as offered."""

    model_config = ConfigDict(frozen=True)

    model_id: tuple[int, ...]
    subtasks: tuple[str, ...]
    access_list: tuple[Access, ...]

    @model_validator(mode="after")
    def _equal_lengths(self) -> Workflow:
        if not (len(self.model_id) == len(self.subtasks) == len(self.access_list)):
            raise ValueError("model_id, subtasks and access_list must have equal lengths")
        return self

    def __len__(self) -> int:
        return len(self.model_id)

    @property
    def is_empty(self) -> bool:
        return len(self.model_id) == 0

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        return tuple(
            Step(index=i, worker=w, subtask=s, access=a, reads=resolve_access(a, i), reads_prior=reads_prior(a))
            for i, (w, s, a) in enumerate(zip(self.model_id, self.subtasks, self.access_list))
        )

    @property
    def reads_prior(self) -> bool:
        """Whether a step reads the earlier round (only a recursion round's may)."""
        return any(reads_prior(a) for a in self.access_list)

    def depth(self) -> int:
        """Length of the longest dependency chain (1 for independent steps)."""
        level: list[int] = []
        for step in self.steps:
            level.append(1 + max((level[j] for j in step.reads), default=0))
        return max(level, default=0)


def resolve_access(access: Access, index: int) -> tuple[int, ...]:
    """This round's steps an access entry reads: `"all"` every earlier step (so nothing on step 0);
    a list the positions it names (its `"prev"`, the earlier round, is `reads_prior`)."""
    if access == ALL:
        return tuple(range(index))
    return tuple(sorted({a for a in access if a != PREV}))


def reads_prior(access: Access) -> bool:
    """Whether an access entry reads the earlier round's steps (`"prev"`)."""
    return access != ALL and PREV in access


class ParseErrorReason(str, enum.Enum):
    OVERSIZE = "oversize"
    MISSING_LIST = "missing_list"
    NOT_A_LIST = "not_a_list"
    UNEQUAL_LENGTHS = "unequal_lengths"
    NO_STEPS = "no_steps"
    TOO_MANY_STEPS = "too_many_steps"
    UNKNOWN_WORKER = "unknown_worker"
    INVALID_SUBTASK = "invalid_subtask"
    INVALID_ACCESS = "invalid_access"
    FORWARD_REFERENCE = "forward_reference"
    SELF_REFERENCE = "self_reference"


@dataclass(frozen=True)
class ParseError:
    """Why a text is not a workflow. A value, not an exception: the reward for it is 0."""

    reason: ParseErrorReason
    detail: str

    def __str__(self) -> str:
        return f"{self.reason.value}: {self.detail}"


ParseResult = Union[Workflow, ParseError]

# Labels as models actually write them: model_id / model_ids / models / worker_ids,
# subtasks / sub_tasks / tasks, access_list / access_lists / access. Optional quotes,
# backticks or markdown bold around the label, then `=` or `:`.
_LABELS: dict[str, str] = {
    "model_id": r"model[_ ]?ids?|models|worker[_ ]?ids?|workers",
    "subtasks": r"sub[_ ]?tasks?|tasks|instructions",
    "access_list": r"access[_ ]?lists?|access",
}
_LABEL_RE = re.compile(
    r"(?<![A-Za-z0-9_])[\"'`*]*(?P<label>"
    + "|".join(f"(?P<{k}>{v})" for k, v in _LABELS.items())
    + r")[\"'`*]*\s*(?:=|:)\s*[`*]*\s*",
    re.IGNORECASE,
)
_THINK_TAG = re.compile(r"</?think>", re.IGNORECASE)
_FENCE_RE = re.compile(r"^[ \t]*```[A-Za-z0-9_+-]*[ \t]*$", re.MULTILINE)
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
_MAX_NESTING = 8


def _clean(text: str) -> str:
    return _FENCE_RE.sub("", strip_think(text))


def _balanced_end(text: str, start: int) -> int | None:
    """Index one past the `]` matching `text[start] == "["`, skipping string literals."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "[":
            depth += 1
            if depth > _MAX_NESTING:
                return None
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _literal(src: str) -> Any:
    try:
        return ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    try:
        return json.loads(src)
    except (ValueError, RecursionError):
        raise ValueError("neither a Python nor a JSON literal") from None


def _extract(text: str) -> dict[str, Any] | ParseError:
    """Scan left to right for `label = [...]`; a list's inside is skipped, so text inside
    subtasks that looks like a label is never mistaken for one. The last occurrence of
    each label wins (models often draft, then write the final lists)."""
    found: dict[str, Any] = {}
    bad: dict[str, str] = {}
    pos = 0
    while True:
        m = _LABEL_RE.search(text, pos)
        if m is None:
            break
        key = next(k for k in _LABELS if m.group(k))
        start = m.end()
        if start < len(text) and text[start] == "[":
            end = _balanced_end(text, start)
            if end is None:
                bad[key] = "unbalanced or too deeply nested brackets"
                pos = start + 1
                continue
            try:
                value = _literal(text[start:end])
            except ValueError as exc:
                bad[key] = str(exc)
            else:
                if isinstance(value, list):
                    found[key] = value
                    bad.pop(key, None)
                else:
                    bad[key] = f"got {type(value).__name__}"
            pos = end
        else:
            if key not in found:
                bad[key] = "label not followed by a list"
            pos = m.end()
    for key in _LABELS:
        if key not in found:
            if key in bad:
                return ParseError(ParseErrorReason.NOT_A_LIST, f"{key}: {bad[key]}")
            return ParseError(ParseErrorReason.MISSING_LIST, f"no {key} list found")
    return found


_MODEL_N = re.compile(r"^\s*(?:model\s*)?(\d+)\s*$", re.IGNORECASE)


def _worker_index(value: Any, pool: int | Sequence[str]) -> int | None:
    size = pool if isinstance(pool, int) else len(pool)
    idx: int | None = None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        idx = value
    elif isinstance(value, str):
        if not isinstance(pool, int) and value.strip() in pool:
            return list(pool).index(value.strip())
        m = _MODEL_N.match(value)
        if m:
            idx = int(m.group(1))
    return idx if idx is not None and 0 <= idx < size else None


def _is_prev(value: Any) -> bool:
    return isinstance(value, str) and value.strip().lower() == PREV


def _access(value: Any, index: int, earlier_round: bool) -> Access | ParseError:
    if isinstance(value, str) and value.strip().lower() == ALL:
        return ALL
    if isinstance(value, int) and not isinstance(value, bool) or _is_prev(value):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, int) and not isinstance(v, bool) or _is_prev(v) for v in value
    ):
        return ParseError(
            ParseErrorReason.INVALID_ACCESS,
            f"step {index}: access must be \"all\", \"prev\" or a list of step positions and \"prev\","
            f" got {value!r:.80}",
        )
    prev = any(_is_prev(v) for v in value)
    if prev and not earlier_round:
        return ParseError(
            ParseErrorReason.INVALID_ACCESS,
            f"step {index} reads \"prev\" (the earlier round), but this is a first round: there is none",
        )
    value = [v for v in value if not _is_prev(v)]
    for v in value:
        if v == index:
            return ParseError(ParseErrorReason.SELF_REFERENCE, f"step {index} reads itself")
        if v > index or v < 0:
            return ParseError(
                ParseErrorReason.FORWARD_REFERENCE,
                f"step {index} reads step {v}, which is not an earlier step",
            )
    return ((PREV,) if prev else ()) + tuple(value)


def parse(
    text: str,
    pool: int | Sequence[str],
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_chars: int = DEFAULT_MAX_CHARS,
    allow_empty: bool = False,
    earlier_round: bool = False,
) -> ParseResult:
    """Parse the Conductor's output against a pool of `pool` workers (a size, or the offered
    worker names, which are then accepted in `model_id` as well as indices).

    `allow_empty` accepts three empty lists (a recursion round's "keep the previous answer");
    `earlier_round` accepts `"prev"` in access lists (a recursion round reading the one before).
    Any text gives a Workflow or a ParseError; the errors a literal can raise are handled where
    it is evaluated, so a bug in this module still raises instead of passing for bad input.
    """
    if not isinstance(text, str):
        return ParseError(ParseErrorReason.MISSING_LIST, "output is not text")
    if len(text) > max_chars:
        return ParseError(ParseErrorReason.OVERSIZE, f"{len(text)} characters > limit {max_chars}")
    # The same text over the same pool parses the same (results are immutable), and texts repeat:
    # a template planner's on every question, a policy's across a GRPO group. Served, the parse
    # was a tenth of a request's CPU (benchmarks/serve.py), so recent results are kept.
    return _parse_cached(text, pool if isinstance(pool, int) else tuple(pool), max_steps, allow_empty, earlier_round)


@lru_cache(maxsize=1024)
def _parse_cached(text: str, pool: int | tuple[str, ...], max_steps: int, allow_empty: bool,
                  earlier_round: bool) -> ParseResult:
    cleaned = _clean(text)
    lists = _extract(cleaned)
    if isinstance(lists, ParseError) and any(q in cleaned for q in "\u201c\u201d\u2018\u2019"):
        # Smart quotes as string delimiters; normalised only when the text fails without,
        # so a subtask that merely contains one keeps it.
        retry = _extract(cleaned.translate(_SMART))
        lists = retry if not isinstance(retry, ParseError) else lists
    if isinstance(lists, ParseError):
        return lists
    ids, subtasks, access = lists["model_id"], lists["subtasks"], lists["access_list"]
    if not (len(ids) == len(subtasks) == len(access)):
        return ParseError(
            ParseErrorReason.UNEQUAL_LENGTHS,
            f"model_id has {len(ids)}, subtasks {len(subtasks)}, access_list {len(access)}",
        )
    if not ids and not allow_empty:
        return ParseError(ParseErrorReason.NO_STEPS, "the workflow has no steps")
    if len(ids) > max_steps:
        return ParseError(ParseErrorReason.TOO_MANY_STEPS, f"{len(ids)} steps > limit {max_steps}")
    model_id: list[int] = []
    for i, raw in enumerate(ids):
        idx = _worker_index(raw, pool)
        if idx is None:
            size = pool if isinstance(pool, int) else len(pool)
            return ParseError(
                ParseErrorReason.UNKNOWN_WORKER,
                f"step {i}: {raw!r:.40} is not one of the {size} offered workers",
            )
        model_id.append(idx)
    for i, sub in enumerate(subtasks):
        if not isinstance(sub, str) or not sub.strip():
            return ParseError(ParseErrorReason.INVALID_SUBTASK, f"step {i}: subtask must be text")
    resolved: list[Access] = []
    for i, a in enumerate(access):
        r = _access(a, i, earlier_round)
        if isinstance(r, ParseError):
            return r
        resolved.append(r)
    return Workflow(model_id=tuple(model_id), subtasks=tuple(subtasks), access_list=tuple(resolved))


def render(workflow: Workflow, names: Sequence[str] | None = None) -> str:
    """The canonical text form (each list is valid JSON and a valid Python literal); with the
    offered workers' `names`, `model_id` names each step's worker instead of numbering it (`parse`
    takes either)."""
    model_id = list(workflow.model_id) if names is None else [names[i] for i in workflow.model_id]
    access = [a if a == ALL else list(a) for a in workflow.access_list]
    # A think tag inside a subtask would be stripped by `parse`; \u003c keeps it intact.
    subtasks = _THINK_TAG.sub(lambda m: "\\u003c" + m.group(0)[1:], json.dumps(list(workflow.subtasks), ensure_ascii=False))
    return (
        f"model_id = {json.dumps(model_id)}\n"
        f"subtasks = {subtasks}\n"
        f"access_list = {json.dumps(access)}"
    )


def validate(workflow: Workflow, pool_size: int, *, max_steps: int = DEFAULT_MAX_STEPS,
             earlier_round: bool = False) -> ParseError | None:
    """Check a Workflow built in code (not parsed) against a pool; None when it is valid.
    `earlier_round`: it is a recursion round, whose steps may read the earlier round."""
    result = parse(render(workflow), pool_size, max_steps=max_steps, allow_empty=workflow.is_empty,
                   earlier_round=earlier_round)
    return result if isinstance(result, ParseError) else None
