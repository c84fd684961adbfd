"""Parse-cache rows repacked with a dictionary trained on this knowledge base's own results.

The parse workers pack each result with zlib and a fixed preset dictionary (`core.packed.pack`):
they start before anything is known about the project. Results of one project repeat each other
(its paths, names, messages and code shapes), so the cache writer trains a zstd dictionary on the
first `TRAIN_ON` results of the knowledge base (those stored by earlier snapshots count, as most
snapshots add only a few hundred new results), stores it, and from then on repacks every
result with it before writing (a few milliseconds per thousand rows, on the writer's thread).
Rows written before the dictionary existed stay as they are: `unpack` reads both.
"""

from __future__ import annotations

from collections.abc import Iterable

from errkb.core.packed import Packer, Trained, is_preset, pack, train, unpack

PURPOSE = "file_cache"  # the dictionaries' purpose in `pack_dictionaries`
TRAIN_ON = 300  # results to train on: more packed the whole history only a little better
SAMPLE_BYTES = 256  # results shorter than this (a status, no site) teach a dictionary nothing
GAIN = 0.9  # a dictionary is kept only if it packs its samples in this share of the preset's


class CachePacker:
    """Repacks the preset-packed blobs of each batch, once a dictionary is trained."""

    def __init__(self, trained: Trained | None, stored: list[bytes] | None = None) -> None:
        """`stored`: results already in the cache, to train on with the new ones (without a
        dictionary yet)."""
        self._packer = Packer(trained) if trained is not None else None
        self._samples: list[bytes] = []
        self._add_samples(stored or [])

    @property
    def dict_id(self) -> int:
        """The dictionary rows are repacked with (0: none yet)."""
        return self._packer.dict_id if self._packer is not None else 0

    def disable(self) -> None:
        """Write blobs as the workers packed them from now on (the dictionary could not be kept)."""
        self._packer = Packer(None)

    def repack(self, rows: dict[str, bytes]) -> tuple[dict[str, bytes], Trained | None]:
        """The rows to write, and a dictionary trained just now (to store before them)."""
        trained = None
        if self._packer is None:
            self._add_samples(rows.values())
            if len(self._samples) < TRAIN_ON:
                return rows, None
            trained = _worthwhile(train(self._samples), self._samples)
            self._samples = []
            if trained is None:  # nothing to learn from: keep the preset packing
                self._packer = Packer(None)
                return rows, None
            self._packer = Packer(trained)
        if self._packer.dict_id == 0:
            return rows, None
        packer = self._packer
        return {k: packer.pack(unpack(b)) if is_preset(b) else b for k, b in rows.items()}, trained

    def _add_samples(self, blobs: Iterable[bytes]) -> None:
        raw = (unpack(b) for b in blobs if is_preset(b))
        self._samples += [r for r in raw if len(r) >= SAMPLE_BYTES]


def _worthwhile(trained: Trained | None, samples: list[bytes]) -> Trained | None:
    """The dictionary, if it packs the samples clearly smaller than the preset one does."""
    if trained is None:
        return None
    packer = Packer(trained)
    ours = sum(len(packer.pack(s)) for s in samples)
    return trained if ours < GAIN * sum(len(pack(s)) for s in samples) else None
