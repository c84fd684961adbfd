# The errkb image: the API (`errkb serve`) and the one-shot ingester (`errkb ingest`).
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml alembic.ini pins.toml ./
COPY errkb ./errkb
COPY ingest ./ingest
COPY service ./service
COPY migrations ./migrations
# Editable: errkb finds migrations/ beside its package, as in a checkout.
RUN pip install --no-cache-dir -e .
ENV ERRKB_DATA_DIR=/data ERRKB_CACHE_DIR=/data/cache ERRKB_HOST=0.0.0.0
VOLUME /data
EXPOSE 8000
CMD ["errkb", "serve"]
