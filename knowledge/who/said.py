"""What a message itself says a check is about, when nothing in the code is traced to an input:
the hardware it needs, or a checkpoint's weights. Said by the project in its own words, not
guessed from a variable's name.
"""

from __future__ import annotations

import re
from typing import Literal

# A message that states the hardware a check needs ("requires Blackwell (SM100)", "is not
# available on this device"), or that reports a checkpoint's weights ("missing weights",
# "unexpected keys"): said by the project, not guessed from a variable's name
_HARDWARE_NEED = re.compile(
    r"\b(?:requires?|needs?|only|supported|available|support)\b[^.]*?\b(?:sm\s*\d{2,3}\w?|"
    r"compute capability|hopper|blackwell|ampere|volta|gpus?|cuda|rocm|npu|xpu|hpu|gfx\d+)\b|"
    r"\bon this (?:device|gpu|platform|hardware)\b",
    re.I,
)
_WEIGHT_WORDS = re.compile(
    r"\b(?:weights?|checkpoint|state[_ ]dict)\b[^.]*?\b(?:missing|unexpected|mismatch|not found)\b|"
    r"\b(?:missing|unexpected)\b[^.]*?\b(?:weights?|keys?|parameters?)\b",
    re.I,
)


def message_says(message: str) -> tuple[Literal["hardware", "model_config"], str] | None:
    """(the class, the clue's words) of what the message says the check is about, or None."""
    if _HARDWARE_NEED.search(message):
        return "hardware", "the message says which hardware this code needs"
    if _WEIGHT_WORDS.search(message):
        return "model_config", "the message is about the checkpoint's weights"
    return None
