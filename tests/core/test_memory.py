"""glibc's allocator tuned for the server: a large block freed does not move later ones of its
size onto the heap, where their memory would stay with the process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import ctypes, sys
from errkb.core.memory import tune_allocator

FIELDS = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in FIELDS.split()]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
tuned = sys.argv[1] == "tuned" and tune_allocator()
block = bytearray(1 << 20)
del block  # freed: by default, glibc now serves blocks of this size from the heap
before = libc.mallinfo2().hblkhd
block = bytearray(1 << 20)
print(tuned, libc.mallinfo2().hblkhd - before)
"""


def _mapped(mode: str, **env: str) -> tuple[str, int]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], env={**clean, **env},
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return out[0], int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_large_blocks_stay_mapped_after_one_was_freed() -> None:
    assert _mapped("plain") == ("False", 0)  # glibc's default: the second block is on the heap
    tuned, mapped = _mapped("tuned")
    assert tuned == "True" and mapped >= 1 << 20  # mapped: its memory goes back when freed


def test_the_environment_wins() -> None:
    # MALLOC_MMAP_THRESHOLD_ set by the user (here: glibc's maximum) is left as it is.
    tuned, mapped = _mapped("tuned", MALLOC_MMAP_THRESHOLD_=str(32 << 20))
    assert mapped == 0
