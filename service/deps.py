"""Request dependencies: a database session and the settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request

from errkb.core.settings import Settings
from errkb.service.queries import DbSession


def get_session(request: Request) -> Iterator[DbSession]:
    """One session per request."""
    with request.app.state.sessions() as session:
        yield session


def get_settings(request: Request) -> Settings:
    """The app's settings object."""
    settings: Settings = request.app.state.settings
    return settings


SessionDep = Annotated[DbSession, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
