"""Alembic migrations, shipped inside the package so `errkb db upgrade` works anywhere."""
