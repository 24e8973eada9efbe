"""A tiny Qwen2-architecture causal LM with a byte-level BPE tokenizer trained locally, saved
as an ordinary `transformers` model directory. Nothing is downloaded: offline runs, tests and
the offline Conductor start from one of these (`AutoModelForCausalLM.from_pretrained(path)`).

    path = build_tiny_causal_lm(tmp_path / "tiny", hidden_size=32, seed=0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conductor.models.automaton import DecisionAutomaton

PAD, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = [PAD, IM_START, IM_END]

# ChatML, as Qwen2 uses; `enable_thinking=False` (Qwen3's switch) is accepted and ignored.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

_DEFAULT_CORPUS = [
    "You are a helpful assistant. Solve the problem step by step and give the final answer.",
    "model_id = [0, 1]\nsubtasks = ['Solve the problem.', 'Check the solution.']\naccess_list = [[], 'all']",
    "The answer is \\boxed{42}. 0 1 2 3 4 5 6 7 8 9 + - * / = ( ) [ ] { } , . : ; ' \"",
    "def solve():\n    n = int(input())\n    print(n * 2)\n",
    "Question: Which option is correct? A) one B) two C) three D) four. Answer: B",
    "Model 0 Model 1 Model 2 Model 3 Model 4 Model 5 Model 6 subtask access list all",
]


# Where a tiny tokenizer's pieces end: after each line break, except the one before the
# workflow's first list.
LINE_SPLIT = r"\n(?!model_id = \[)"


def _train_tokenizer(corpus: Iterable[str], vocab_size: int, *, across_words: bool = False,
                     whole: Iterable[str] = (), fold_case: bool = False):  # -> PreTrainedTokenizerFast
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    if fold_case:
        # The model reads text case-folded: "Find x" and "find x" are the same tokens. The `whole`
        # tokens below are matched on the raw text (normalized=False), so what it writes keeps
        # its case.
        tok.normalizer = normalizers.Lowercase()
    if across_words:
        # Merges may span words (not lines): a fixed sentence the corpus repeats (the system
        # prompt, a pool description) becomes a few tokens. The Conductor's own decisions are not
        # left to merges: they are `whole` tokens (below), one per decision.
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LINE_SPLIT), behavior="merged_with_previous"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ])
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),  # every byte encodable
        show_progress=False,
    )
    tok.train_from_iterator(list(corpus), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token=IM_END,
        pad_token=PAD,
        bos_token=None,
        additional_special_tokens=[IM_START],
        padding_side="left",  # decoder-only generation pads on the left
    )
    # Texts that must be one token each (the Conductor's decisions): matched before the BPE
    # splits anything, leftmost-longest, so a decision is never cut into pieces or merged with
    # the next one.
    fast.add_tokens([AddedToken(t, normalized=False, single_word=False, lstrip=False, rstrip=False) for t in whole])
    fast.chat_template = CHATML_TEMPLATE
    return fast


def load_tokenizer(path: str | Path):  # -> PreTrainedTokenizerFast
    """A model dir's tokenizer; a tiny one exactly as its `tokenizer.json` defines it. Use this, not `AutoTokenizer`, for a
    tiny model: for a `qwen2` config, transformers 5 substitutes `Qwen2Tokenizer`, whose word
    regex replaces our pre-tokenizer, so a tokenizer trained with `tokens_across_words` would
    encode every prompt differently from how the model was trained."""
    import json

    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    spec = Path(path) / "tokenizer.json"
    if spec.is_file():
        pre = json.loads(spec.read_text(encoding="utf-8")).get("pre_tokenizer") or {}
        if pre.get("type") == "Sequence" and pre["pretokenizers"][0].get("pattern") in ({"String": "\n"}, {"Regex": LINE_SPLIT}):
            return PreTrainedTokenizerFast.from_pretrained(str(path))
    return AutoTokenizer.from_pretrained(str(path))  # any other model: its own tokenizer class


def build_tiny_causal_lm(
    path: str | Path,
    *,
    vocab_size: int = 512,
    hidden_size: int = 32,
    num_hidden_layers: int = 1,
    num_attention_heads: int = 2,
    max_position_embeddings: int = 2048,
    seed: int = 0,
    corpus: Iterable[str] | None = None,
    intermediate_size: int | None = None,
    tokens_across_words: bool = False,
    fold_case: bool = False,
    whole_tokens: Iterable[str] = (),
    automaton: Callable[[Any], DecisionAutomaton] | None = None,
) -> Path:
    """Build, randomly initialise (seeded) and save a tiny Qwen2 model + tokenizer at `path`.

    Train the tokenizer on a `corpus` that covers the texts the model will see (prompts and
    outputs): with a corpus that misses them, sequences are several times longer and slower.
    `whole_tokens` are added to the vocabulary as single tokens (the Conductor's decisions,
    `conductor.training.sft_data.decision_tokens`). `automaton`, given the trained tokenizer,
    returns the output grammar the model then samples through (`conductor.models.constrained`)."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = _train_tokenizer(corpus or _DEFAULT_CORPUS, vocab_size, across_words=tokens_across_words,
                                 whole=whole_tokens, fold_case=fold_case)
    if automaton is not None:
        from conductor.models.constrained import ConductorQwen2Config, ConductorQwen2ForCausalLM

        config_class, model_class = ConductorQwen2Config, ConductorQwen2ForCausalLM
        grammar = {"decision_automaton": automaton(tokenizer).to_config()}
    else:
        config_class, model_class, grammar = Qwen2Config, Qwen2ForCausalLM, {}
    config = config_class(
        **grammar,
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size or hidden_size * 2,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        num_key_value_heads=num_attention_heads,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = model_class(config)
    model.generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, do_sample=False
    )
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
