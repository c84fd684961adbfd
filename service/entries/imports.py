"""The explanation of an import site: `errkb.knowledge.imports` read against the requirements
that the shown release declares (stored with its snapshot at ingest)."""

from __future__ import annotations

from dataclasses import asdict

from errkb.core.declared import declared_from_json
from errkb.core.models import Repo, Snapshot
from errkb.core.records import Site, Vocabulary
from errkb.knowledge.facts import Involvement, TimelineFacts
from errkb.knowledge.imports import explain_import
from errkb.service.entries.schemas import ExplanationOut


def import_explanation(
    site: Site, flags: list[Involvement], tl: TimelineFacts, repo: Repo, snapshots: list[Snapshot]
) -> ExplanationOut:
    """The derived prose of an import site, for the newest release that has it."""
    present = set(tl.present_in)
    shown = next((s for s in reversed(snapshots) if s.label in present), snapshots[-1])
    requirements = None if shown.requirements is None else declared_from_json(shown.requirements)
    ex = explain_import(
        site,
        flags,
        tl,
        requirements=requirements,
        vocabulary=Vocabulary.from_json(repo.vocabulary),
        release=shown.label,
        project=repo.pypi_name or repo.name.rsplit("/", 1)[-1],
        releases={s.label for s in snapshots if s.kind == "pypi"},
    )
    return ExplanationOut.model_validate(asdict(ex))
