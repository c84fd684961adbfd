# The errkb image: the API (`errkb serve`) and the one-shot ingester (`errkb ingest`).
# The project is built into a wheel and installed like any package: migrations and the default
# pins travel inside it, so the commands work from any folder.
FROM python:3.11-slim AS build
# A C compiler for the build's mypyc step (setup.py: the compiled log matcher). The image it
# builds needs none: the wheel carries the compiled modules.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py ./
COPY errkb ./errkb
COPY ingest ./ingest
COPY knowledge ./knowledge
COPY service ./service
COPY migrations ./migrations
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
ENV ERRKB_DATA_DIR=/data ERRKB_CACHE_DIR=/data/cache ERRKB_HOST=0.0.0.0
WORKDIR /data
VOLUME /data
EXPOSE 8000
CMD ["errkb", "serve"]
