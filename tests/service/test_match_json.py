"""The match processes' JSON body, built from plain dicts, is the models' own, byte for byte."""

from __future__ import annotations

import pytest
from test_matcher_match import INDEX, SWA

from errkb.service.match.matcher import match_text
from errkb.service.match.schemas import MatchResponse, match_out, matches_json

TEXTS = [
    # a frame pins the site: `site` is an object
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/mem_cache/'
    'kv_cache_configurator.py", line 452, in _init_pools\n'
    f"    raise ValueError(\nValueError: {SWA}\n",
    # captured values with quotes, HTML, non-ASCII, escapes and a control character
    "ValueError: <script>alert(1)</script> is not a valid quantization method; "
    'choose one of ["fp8", "ünï\\u00e9", "a\x01b"]',
    "ValueError: The input (131073 tokens) is longer than the model's context length "
    "(131072 tokens).",
    "Global server args is not set yet!",  # identical messages of two classes: both, ranked
    "ValueError: Model architectures ['Glm4ForCausalLM'] are not supp",  # cut: a fractional score
    "INFO all good, nothing to see",  # no match: an empty list
]


@pytest.mark.parametrize("public_url", ["", "https://kb.example.org", "https://kb.example.org/"])
@pytest.mark.parametrize("text", TEXTS)
def test_the_json_built_without_models_is_the_validated_models_json(
    text: str, public_url: str
) -> None:
    found = match_text(INDEX, text)
    expected = MatchResponse(matches=[match_out(m, public_url) for m in found])
    assert matches_json(found, public_url) == expected.model_dump_json().encode()
