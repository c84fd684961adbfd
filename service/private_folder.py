"""A folder only this user may write: where the server keeps files that a later process reads
back and trusts (rendered pages, the kept match index)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def private_folder(path: Path, *, make: bool = True) -> bool:
    """True if `path` is a real folder (not a link) only this user owns and no one else may
    write or read; made with mode 0700 when missing and `make`."""
    try:
        if make:
            path.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and stat.S_IMODE(info.st_mode) & 0o077 == 0
    )
