"""What a message itself says a check is about, when nothing in the code is traced to an input:
the hardware it needs, a checkpoint's weights, the data a request sent, or the option to change.
Said by the project in its own words, not guessed from a variable's name.
"""

from __future__ import annotations

import re
from typing import Literal

# A message that states the hardware a check needs ("requires Blackwell (SM100)", "is not
# available on this device"), or that reports a checkpoint's weights ("missing weights",
# "unexpected keys"): said by the project, not guessed from a variable's name
_HARDWARE_NEED = re.compile(
    r"\b(?:requires?|needs?|only|supported|available|support)\b[^.]*?\b(?:sm\s*\d{2,3}\w?|"
    r"compute capability|hopper|blackwell|ampere|volta|gpus?|cuda|rocm|npu|xpu|hpu|gfx\d+)\b(?!-)|"
    r"\bon this (?:device|gpu|platform|hardware)\b|\b(?:cuda|rocm|hip|npu|xpu|hpu|gpu)[- ]only\b",
    re.I,
)
_WEIGHT_WORDS = re.compile(
    r"\b(?:weights?|checkpoint|state[_ ]dict)\b[^.]*?\b(?:missing|unexpected|mismatch|not found)\b|"
    r"\b(?:missing|unexpected)\b[^.]*?\b(?:weights?|keys?|parameters?)\b",
    re.I,
)


# A message about the data a request sent ("Multimodal data is corrupted or cannot be decoded",
# "audio must be mono", "Image exceeds the download limit")
_REQUEST_DATA = re.compile(
    r"\b(?:images?|videos?|audio|multimodal data|media|frames?|waveform)\b[^.]*?"
    r"\b(?:corrupt\w*|(?:cannot|could not|failed to) (?:be )?decoded?|undecodable|malformed|"
    r"must|should|exceeds?|too (?:large|long|big|small|short))\b",
    re.I,
)
# ... and one that says the data is too large or unreadable ("Remote media exceeds the download
# limit", "image pixels exceed 12845056"): what the request sent, even where the values the check
# compares were traced only into the code (the size limit is the code's constant; the data is not)
_REQUEST_DATA_REFUSED = re.compile(
    r"\b(?:images?|videos?|audio|multimodal data|media|frames?|waveform)\b[^.]*?"
    r"\b(?:corrupt\w*|(?:cannot|could not|failed to) (?:be )?decoded?|undecodable|malformed|"
    r"(?<!not )(?<!cannot )exceeds?|too (?:large|long|big))\b",
    re.I,
)
REQUEST_DATA_REFUSED = "the message says the data the request sent is too large or unreadable"
# A message that says memory ran out ("Prefill out of memory", "alloc_req_slots runs out of
# memory", "Not enough memory"): what the server was asked to hold did not fit in its memory
_OUT_OF_MEMORY = re.compile(
    r"\b(?:(?:runs?|ran) )?out of (?:GPU |device )?memory\b|\bnot enough (?:GPU )?memory\b", re.I
)
MEMORY_SAID = "the message says memory ran out"


def says_out_of_memory(message: str) -> bool:
    """True when the message says memory ran out."""
    return _OUT_OF_MEMORY.search(message) is not None


WEIGHTS_SAID = "the message is about the checkpoint's weights"
# A command-line option the message names ("Point --component_paths.vae at the weights"): the
# message tells the user which setting to change, even one the flag catalog does not hold
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9_.-]*[a-z0-9]")


# Words that make the media a message names the pipeline's own (an image processor's output,
# generated audio, latents, features), not the data a request sent
_PIPELINE_DATA = re.compile(
    r"\b(?:generated|latents?|prepared|features?|processors?|embeddings?)\b", re.I
)


def message_says(
    message: str,
) -> tuple[Literal["hardware", "model_config", "request_field", "flag"], str] | None:
    """(the class, the clue's words) of what the message says the check is about, or None."""
    if says_out_of_memory(message):
        return "hardware", MEMORY_SAID
    if _HARDWARE_NEED.search(message):
        return "hardware", "the message says which hardware this code needs"
    if _WEIGHT_WORDS.search(message):
        return "model_config", WEIGHTS_SAID
    if not _PIPELINE_DATA.search(message):
        if _REQUEST_DATA_REFUSED.search(message):
            return "request_field", REQUEST_DATA_REFUSED
        if _REQUEST_DATA.search(message):
            return "request_field", "the message is about the data the request sent"
    if flags := message_flags(message):
        return "flag", f"the message names {flags[0]}"
    return None


# An environment variable the message tells the user to set ("Set SGLANG_DISABLE_X=1 to ..."): an
# upper-case name with an underscore, then `=` and a value
_ENV_SET = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)=[\w\"'{]")


def message_envs(message: str) -> list[str]:
    """The environment variables a message tells the user to set, in order, each once."""
    return list(dict.fromkeys(_ENV_SET.findall(message)))


def message_flags(message: str) -> list[str]:
    """The command-line options a message names, in order, each once."""
    return list(dict.fromkeys(_FLAG.findall(message)))
