"""Realistic matcher inputs generated from templates: rendered, embedded in logs, wrapped, cut.

Shared by tests/e2e/test_match_sglang.py and bench/match.py. Seeded and pure: the same seed gives
the same texts. Values look like what sglang interpolates (sizes, model names, lists of
architectures, paths, dtypes); logs look like what people paste (server log lines with
`[time TP0]` prefixes, a scheduler traceback, Ray actor prefixes on every line), wrapped at 80
columns either by a terminal (mid-word) or at word boundaries.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Sequence
from typing import Any

WORDS = ("qwen", "llama", "cuda", "fp8", "decode", "prefill", "radix", "mamba", "lora", "triton")
NOISE = (
    "Prefill batch. #new-seq: 1, #new-token: 6, #cached-token: 0, token usage: 0.00, "
    "#running-req: 0, #queue-req: 0",
    "Decode batch. #running-req: 3, #token: 1289, token usage: 0.01, gen throughput (token/s): "
    "95.12, #queue-req: 0",
    "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=60.12 GB",
    "Memory pool end. avail mem=10.01 GB",
    "Capture cuda graph begin. This can take up to several minutes. avail mem=9.88 GB",
    'INFO:     127.0.0.1:51234 - "POST /generate HTTP/1.1" 200 OK',
)


def render(rng: random.Random, template: Sequence[dict[str, Any]]) -> str:
    """The message with every placeholder replaced by a plausible random value."""
    return "".join(s["text"] if s["kind"] == "text" else _value(rng, s) for s in template)


def _value(rng: random.Random, seg: dict[str, Any]) -> str:
    spec = seg.get("format_spec") or ""
    if spec and spec[-1] in "fFeE%":
        return _formatted(rng.uniform(0, 1000), spec)
    if spec and spec[-1] in "dxXob":
        return _formatted(rng.randrange(100_000), spec)
    kind = rng.randrange(6)
    if kind == 0:
        value: str = str(rng.randrange(100_000))
    elif kind == 1:
        value = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}"
    elif kind == 2:
        value = repr([f"{rng.choice(WORDS).capitalize()}ForCausalLM" for _ in range(2)])
    elif kind == 3:
        value = f"/models/{rng.choice(WORDS)}-{rng.randrange(1, 70)}B"
    elif kind == 4:
        value = "torch.bfloat16" if rng.random() < 0.5 else "float8_e4m3fn"
    else:
        value = f"torch.Size([{rng.randrange(1, 9000)}, {rng.randrange(1, 9000)}])"
    if seg.get("conversion") == "r" and kind in (1, 3, 4):
        return repr(value)
    return _formatted(value, spec) if spec else value


def _formatted(value: object, spec: str) -> str:
    try:
        return format(value, spec)
    except (ValueError, TypeError):
        return str(value)


def _stamp(rng: random.Random) -> str:
    month, day, hour, minute, second = (rng.randrange(1, 10) for _ in range(5))
    return f"2025-0{month}-1{day} 1{hour}:2{minute}:3{second}"


def embed(
    rng: random.Random, message: str, *, module_path: str, line: int, function: str,
    exception: str = "ValueError",
) -> str:  # fmt: skip
    """A log chunk showing `message` as it is raised, wrapped at 80 columns."""
    tag = f"TP{rng.randrange(8)}"

    def prefix() -> str:
        return f"[{_stamp(rng)} {tag}] "

    out = [prefix() + rng.choice(NOISE) for _ in range(rng.randrange(4))]
    frame = f"line {line}, in {function}"
    style = rng.randrange(3)
    if style == 0:  # the scheduler logs the traceback once, with one prefix
        out.append(prefix() + "Scheduler hit an exception: Traceback (most recent call last):")
        out.append(f'  File "/usr/local/lib/python3.11/dist-packages/{module_path}", {frame}')
        out.append(f"    raise {exception}(")
        out.append(f"{exception}: {message}")
    elif style == 1:  # a single log line
        out.append(prefix() + f"{exception}: {message}")
    else:  # a Ray actor prefixes every line
        ray = f"(SGLangEngine pid={rng.randrange(1000, 99999)}) "
        out.append(ray + "Traceback (most recent call last):")
        out.append(ray + f'  File "/opt/venv/lib/python3.10/site-packages/{module_path}", {frame}')
        out.append(ray + f"    raise {exception}(")
        for k, part in enumerate(message.split("\n")):
            out.append(ray + (f"{exception}: " if k == 0 else "") + part)
    out += [prefix() + rng.choice(NOISE) for _ in range(rng.randrange(3))]
    wrap = _hard_wrap if rng.random() < 0.5 else _soft_wrap
    return "\n".join(wrap(line) for line in "\n".join(out).split("\n"))


def cut(rng: random.Random, message: str, keep: int = 60) -> str:
    """A log whose last line shows only the first `keep` characters of the message."""
    return f"[{_stamp(rng)} TP0] ValueError: {message[:keep]}"


def _hard_wrap(line: str, width: int = 80) -> str:
    return "\n".join(line[i : i + width] for i in range(0, len(line), width)) or line


def _soft_wrap(line: str, width: int = 80) -> str:
    wrapped = textwrap.wrap(line, width, break_long_words=True, break_on_hyphens=False)
    return "\n".join(wrapped) or line
