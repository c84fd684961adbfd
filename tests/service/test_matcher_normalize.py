"""Input normalization: log prefixes blanked, whitespace squeezed, offsets mapped back exactly."""

from __future__ import annotations

import random

import pytest

from errkb.service.match.matcher.normalize import (
    fold,
    prefix_length,
    prepare,
    squeeze,
    text_words,
    tokens,
)


@pytest.mark.parametrize(
    ("line", "rest"),
    [
        ("[2024-11-08 04:43:59 TP0] Detected errors", "Detected errors"),
        ("[TP3] ValueError: x", "ValueError: x"),
        ("[rank0]: [2025-01-01 10:00:00 DP1 TP0] boom", "boom"),
        ('(TaskRunner pid=607388)   File "x.py", line 3', 'File "x.py", line 3'),
        ("[2026-03-23 14:01:38] WARNING model_config.py:1098: hello", "hello"),
        ("2025-01-01 12:00:00,123 - INFO - started", "started"),
        ("2025-01-01T12:00:00.123456Z ERROR boom", "boom"),
        ("sglang-1  | ValueError: x", "ValueError: x"),
        ("> quoted text", "quoted text"),
    ],
)
def test_log_prefixes_are_recognised(line: str, rest: str) -> None:
    assert line[prefix_length(line) :].strip() == rest


@pytest.mark.parametrize(
    "line",
    [
        "[1, 2] is not a valid shape",
        "['Qwen3ForCausalLM'] are not supported",
        "2025 was a good year",
        "ValueError: Invalid mode",
        "tokens exceed the limit | see docs",
    ],
)
def test_message_text_is_not_taken_for_a_prefix(line: str) -> None:
    assert prefix_length(line) == 0


def test_prepare_blanks_prefixes_and_backticks_keeping_offsets() -> None:
    text = "[2025-01-01 00:00:00 TP0] `ValueError: bad`\n[2025-01-01 00:00:00 TP1] value"
    prep = prepare(text)
    assert len(prep.work) == len(text)
    assert prep.squeezed == "ValueError:badvalue"
    assert text[prep.to_input(prep.squeezed.index("bad")) :].startswith("bad`")


def test_offset_map_is_exact_across_blocks() -> None:
    rng = random.Random(4)
    alphabet = "ab c\t\n\u00a0\u2003é`"
    text = "".join(rng.choice(alphabet) for _ in range(5000))
    prep = prepare(text)
    assert prep.squeezed == squeeze(text)
    for q in range(len(prep.squeezed)):
        i = prep.to_input(q)
        assert text[i] == prep.squeezed[q]
        assert squeeze(text[:i]) == prep.squeezed[:q]
    assert prep.to_input(len(prep.squeezed)) == len(text)
    assert prep.end_to_input(len(prep.squeezed)) == prep.to_input(len(prep.squeezed) - 1) + 1


def test_squeeze_makes_word_and_mid_word_wrapping_alike() -> None:
    message = "Weight output_partition_size = 8 is not divisible by block_n = 128."
    soft = "Weight output_partition_size = 8 is not\ndivisible by block_n = 128."
    hard = "Weight output_partition_size = 8 is not divisi\nble by block_n = 128."
    assert squeeze(message) == squeeze(soft) == squeeze(hard)


def test_tokens_split_on_punctuation_and_drop_single_characters() -> None:
    assert tokens("--enable-unified-memory (x) kv_cache, é_ok 2") == [
        b"enable",
        b"unified",
        b"memory",
        b"kv_cache",
        "é_ok".encode(),
    ]
    assert tokens("lone \ud800 surrogate") == [b"lone", b"surrogate"]


def test_json_escaped_messages_are_unescaped_in_place() -> None:
    text = '{"detail": "Model [\\"Glm4\\"] is bad.\\nSupported: x"}'
    prep = prepare(text)
    assert len(prep.work) == len(text)
    assert 'Model["Glm4"]isbad.Supported:x' in prep.squeezed


def test_windows_traceback_paths_keep_their_backslashes() -> None:
    text = 'File "C:\\venv\\sglang\\srt\\tokenizer_manager.py", line 3, in f'
    assert "\\tokenizer_manager.py" in prepare(text).squeezed


def test_the_folded_text_keeps_every_offset() -> None:
    # `İ` lowers to two characters: the folded copy must not shift what follows it.
    text = "İstanbul SGLang ÉTÉ failed: sm 75"
    prep = prepare(text)
    assert len(prep.folded) == len(prep.squeezed)
    assert prep.folded.endswith("failed:sm75") and "sglang" in prep.folded
    assert fold("ÉTÉ Mixed") == "été mixed"
    assert tokens("SGLang Only") == tokens("sglang only") == [b"sglang", b"only"]


def test_the_words_of_pythons_traceback_lines_are_not_candidate_words() -> None:
    """They tell no error from another; a word they share with the message still counts."""
    text = (
        "[2025-01-01 12:00:00 TP0] Traceback (most recent call last):\n"
        '  File "x.py", line 3, in f\n'
        "KeyError: 'k'\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        "ValueError: the last shard is missing\n"
        "The above exception was the direct cause of the following exception:\n"
    )
    said = text_words(prepare(text).work)
    for word in (b"traceback", b"most", b"recent", b"call", b"during", b"handling", b"above"):
        assert word not in said
    assert {b"valueerror", b"last", b"shard", b"missing", b"keyerror", b"file", b"x"} <= said
