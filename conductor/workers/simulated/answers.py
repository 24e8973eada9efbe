"""Answers in each domain's exact format, the plausible wrong ones, and whether a seen answer is right.

Formats: math `\\boxed{...}`, choice `Answer: B`, freeform `Answer: ...`, code one fenced python block.
Extraction uses the verifiers' own readers (nested braces in \\boxed, LiveCodeBench's fence rule),
and values are compared in a canonical form (a program's trailing whitespace does not count).
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Sequence

from conductor.data.schema import Problem
from conductor.verify import extract_code, verify
from conductor.verify.choice import committed_letter
from conductor.verify.memo import VerdictCache
from conductor.answers import final_answer, last_boxed
from conductor.workers.simulated.latent import unit

# Wrong answers are drawn with weights 1 / rank ** SKEW over a per-problem order shared by every
# worker: the first distractor is the attractive one, so wrong answers agree more often than
# chance and majority votes can fail.
SKEW = 1.0
MAX_WRONG = 4
# A program that fails every test: the last resort when no mutation of the reference fails.
FAILING_PROGRAM = "raise SystemExit('not solved')\n"


def canonical(problem: Problem, value: str) -> str:
    """The form values are compared in: a program without trailing whitespace on any line or
    blank lines around it; a letter in upper case; anything else stripped."""
    if problem.domain == "code":
        lines = [line.rstrip() for line in value.replace("\r\n", "\n").split("\n")]
        return "\n".join(lines).strip("\n")
    if problem.domain == "choice":
        return value.strip().upper()
    return value.strip()


def gold_answer(problem: Problem) -> str | None:
    """The right answer in canonical form (for code: the reference solution), None when unknown."""
    if problem.domain == "code":
        value = problem.reference_solution
    else:
        value = problem.answer
    return canonical(problem, value) if value and value.strip() else None


def render_answer(problem: Problem, value: str) -> str:
    """A final answer in the form the domain's verifier reads."""
    if problem.domain == "math":
        return f"The final answer is $\\boxed{{{value}}}$."
    if problem.domain == "code":
        return f"```python\n{canonical(problem, value)}\n```"
    return f"Answer: {value}"


def extract_answer(problem: Problem, text: str) -> str | None:
    """The answer a response commits to, in canonical form, read as the verifiers read it."""
    if problem.domain == "math":
        found = last_boxed(text)
    elif problem.domain == "code":
        found = extract_code(text)
    elif problem.domain == "choice":
        letters = problem.choice_letters() or list("ABCD")
        found = committed_letter(text, letters)[0]
    else:
        found = final_answer(text)[0]
    return canonical(problem, found) if found else None


# ---- verdicts, cached: the simulated pool writes few distinct answers per problem ----

# The simulated pool's own verdicts, an LRU of this many (a verdict is a few hundred bytes, so
# ~1-2 MB at most): a GRPO run over the whole bank meets ~4 distinct answers per problem, so 8192
# keeps a 2,000-problem bank's without growing with the run's length. Unlike the verifier's memo
# (conductor/verify/memo.py, which skips a verdict the machine's load may have made), it keeps
# every verdict, so a worker's answer is graded the same way for the rest of the process.
SIMULATED_VERDICTS_KEPT = 8192
SIMULATED_VERDICTS = VerdictCache(maxsize=SIMULATED_VERDICTS_KEPT)


def _grading_key(problem: Problem, value: str) -> str:
    """Hash of what a verdict depends on: the problem's grading data and the canonical answer
    (not the problem id, so problems sharing tests share verdicts)."""
    data = [problem.domain, problem.answer, problem.choices, [t.model_dump() for t in problem.tests or []],
            problem.meta.get("test"), problem.meta.get("func_name"), canonical(problem, value)]
    return hashlib.blake2b(json.dumps(data, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


def verdict_of(problem: Problem, value: str) -> bool:
    """Is `value` right, by the project's real verifier (code runs in the sandbox)? Cached by
    hash of (problem grading data, value) in `SIMULATED_VERDICTS` (bounded)."""
    key = _grading_key(problem, value)
    if (hit := SIMULATED_VERDICTS.get(key)) is not None:
        return hit.correct
    verdict = verify(problem, render_answer(problem, value))
    SIMULATED_VERDICTS.put(key, verdict)
    return verdict.correct


def is_right(problem: Problem, value: str | None) -> bool:
    """Whether a seen answer is right: equal to the gold one, else as the real verifier says."""
    if value is None:
        return False
    gold = gold_answer(problem)
    if gold is not None and canonical(problem, value) == gold:
        return True
    if canonical(problem, value) in _known_wrong.get(_problem_key(problem), ()):
        return False  # one of the wrong answers this environment made (each checked wrong)
    return verdict_of(problem, value)


# ---- wrong answers ----

_known_wrong: dict[str, tuple[str, ...]] = {}


_keys: dict[int, tuple[Problem, str]] = {}


def _problem_key(problem: Problem) -> str:
    """The problem's id and content: two problems sharing an id but not their data never share
    wrong answers. Remembered per Problem object (a JSON dump of the problem on every call was
    ~5 % of a simulated call's CPU); a problem changed in place after its first use keeps its key."""
    hit = _keys.get(id(problem))
    if hit is not None and hit[0] is problem:
        return hit[1]
    data = json.dumps(problem.model_dump(mode="json", exclude={"question"}), sort_keys=True, default=str)
    key = problem.id + ":" + hashlib.blake2b(data.encode(), digest_size=16).hexdigest()
    if len(_keys) >= 65536:
        _keys.clear()
    _keys[id(problem)] = (problem, key)
    return key


def _shuffled(problem: Problem, values: Sequence[str]) -> list[str]:
    """A per-problem order (the same for every worker), most attractive first."""
    return sorted(dict.fromkeys(values), key=lambda v: unit("distractor-order", problem.id, v))


def _numeric_neighbours(gold: str) -> list[str]:
    try:
        number = float(gold.replace(",", ""))
    except ValueError:
        return []
    out = []
    for value in (number + 1, number - 1, 2 * number, number / 2, -number, number + 10):
        if value != number:
            out.append(str(int(value)) if float(value).is_integer() else f"{value:g}")
    return out


def given_distractors(problem: Problem) -> list[str]:
    return [str(d) for d in problem.meta.get("distractors", []) if str(d).strip()]


def _text_candidates(problem: Problem, siblings: Sequence[str]) -> list[str]:
    gold = gold_answer(problem) or ""
    return given_distractors(problem) + _numeric_neighbours(gold) + list(siblings) + (["0"] if problem.domain == "math" else [])


class _Mutate(ast.NodeTransformer):
    """Changes the n-th node of one kind: a comparison, an arithmetic operator, an int or string
    constant, or a returned value (to None)."""

    _SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult}

    def __init__(self, kind: str, n: int) -> None:
        self.kind, self.n, self.seen, self.done = kind, n, 0, False

    def _hit(self) -> bool:
        self.seen += 1
        if self.seen - 1 == self.n:
            self.done = True
            return True
        return False

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if self.kind == "compare" and type(node.ops[0]) in self._SWAP and self._hit():
            node.ops[0] = self._SWAP[type(node.ops[0])]()
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if self.kind == "arith" and type(node.op) in self._SWAP and self._hit():
            node.op = self._SWAP[type(node.op)]()
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if self.kind == "const" and type(node.value) is int and self._hit():
            return ast.copy_location(ast.Constant(node.value + 1), node)
        if self.kind == "string" and type(node.value) is str and len(node.value) > 1 and self._hit():
            return ast.copy_location(ast.Constant(node.value[:-1]), node)
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        self.generic_visit(node)
        if self.kind == "return" and node.value is not None and self._hit():
            node.value = ast.Constant(None)
        return node


def mutations(source: str, limit: int = 9) -> list[str]:
    """Small plausible edits of a program (an off-by-one, a flipped comparison, a wrong operator)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out: list[str] = []
    for n in range(3):
        for kind in ("compare", "arith", "const", "string", "return"):
            mutator = _Mutate(kind, n)
            changed = mutator.visit(ast.parse(source))
            if mutator.done:
                text = ast.unparse(changed) + "\n"
                if text not in out and text != ast.unparse(tree) + "\n":
                    out.append(text)
    return out[:limit]


def wrong_answers(problem: Problem, siblings: Sequence[str] = ()) -> tuple[str, ...]:
    """Up to MAX_WRONG plausible wrong answers, most attractive first (cached per problem).

    choice: the other letters. math/freeform: `meta["distractors"]`, then numeric neighbours of the
    gold answer, then other problems' answers (`siblings`), each checked wrong by the verifier.
    code: `meta["wrong_solutions"]` (each fails a test by the data's contract), else mutations of
    the reference solution that really fail its tests in the sandbox."""
    key = _problem_key(problem)
    if key in _known_wrong:
        return _known_wrong[key]
    gold = gold_answer(problem)
    if problem.domain == "choice":
        letters = problem.choice_letters() or list("ABCD")
        found = _shuffled(problem, [c for c in letters if c != gold])
    elif problem.domain == "code":
        given = [canonical(problem, s) for s in problem.meta.get("wrong_solutions", []) if isinstance(s, str)]
        if given:
            found = _shuffled(problem, given)
        else:
            found = [canonical(problem, m) for m in mutations(problem.reference_solution or "")]
            found = [m for m in found if gold is None or not verdict_of(problem, m)][:MAX_WRONG]
            found = found or [canonical(problem, FAILING_PROGRAM)]
    else:
        found = []
        for value in dict.fromkeys(_text_candidates(problem, siblings)):
            value = canonical(problem, value)
            if value and value != gold and value not in found and (not problem.answer or not _same_value(problem, value)):
                found.append(value)
            if len(found) >= MAX_WRONG or len(found) >= 2 and len(found) == len(given_distractors(problem)):
                break  # the data's own distractors suffice when there are two or more
        found = found or ["none"]
        given = [v for v in found if v in {canonical(problem, str(d)) for d in problem.meta.get("distractors", [])}]
        # the data's own distractors come first (they are the attractive ones); the rest in a stable order
        found = given + _shuffled(problem, [v for v in found if v not in given])
    result = tuple(found[:MAX_WRONG])
    _known_wrong[key] = result
    return result


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _same_value(problem: Problem, value: str) -> bool:
    """Would the verifier accept `value`? Two plain numbers are compared directly (math-verify
    costs milliseconds a call, and wrong answers are made for every problem)."""
    a, b = _number(value), _number(problem.answer or "")
    if a is not None and b is not None:
        return a == b
    return verdict_of(problem, value)


def wrong_weights(n: int) -> list[float]:
    raw = [1.0 / (r + 1) ** SKEW for r in range(n)]
    total = sum(raw)
    return [w / total for w in raw]
