"""Values written as a set literal are shown in the order the source writes them: a set's own
iteration order changes with each process's hash seed, and docs built by different processes
(the doc workers, a server building on demand) must say the same thing."""

from __future__ import annotations

import subprocess
import sys

from errkb.knowledge.origins.notes import _printed
from errkb.knowledge.words.wording import literal_values

BACKENDS = (
    "{'fa3', 'aiter', 'triton', 'trtllm_mha', 'flashinfer', 'torch_native', 'ascend', 'wave'}"
)
IN_ORDER = ["fa3", "aiter", "triton", "trtllm_mha", "flashinfer", "torch_native", "ascend", "wave"]


def test_set_literal_values_keep_the_source_order() -> None:
    assert literal_values(BACKENDS) == IN_ORDER
    assert literal_values("('b', 'a')") == ["b", "a"]
    assert _printed(BACKENDS, None) == "{" + ", ".join(repr(v) for v in IN_ORDER) + "}"
    assert _printed("{2, 1, 2}", None) == "{2, 1}"
    assert _printed("set()", None) == "set()"


def test_every_hash_seed_says_the_same() -> None:
    code = (
        "from errkb.knowledge.origins.notes import _printed;"
        "from errkb.knowledge.words.wording import literal_values;"
        f"print(literal_values({BACKENDS!r}), _printed({BACKENDS!r}, None))"
    )
    shown = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in range(4)
    }
    assert len(shown) == 1
