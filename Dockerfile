# chatgate — slim, non-root image. Config is mounted at /etc/chatgate/gateway.yaml; state lives on a volume.
# A Debian release, not a moving `slim`; pass a digest for byte-for-byte rebuilds:
#   docker build --build-arg PYTHON_IMAGE=python:3.11-slim-bookworm@sha256:… .
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY deploy/constraints.txt ./deploy/constraints.txt
COPY chatgate ./chatgate
# The exact versions of deploy/constraints.txt: the same build every time. Supply chain: only the
# hash-locked set (every distribution's sha256 in the lock), then chatgate itself without
# dependencies (docs/security.md). No bytecode yet: deploy/slim_image.py compiles what runs.
RUN pip install --no-cache-dir --no-compile --prefix=/install \
        --require-hashes --no-deps -r deploy/constraints.txt \
    && pip install --no-cache-dir --no-compile --prefix=/install --no-deps .
COPY deploy/slim_image.py ./deploy/slim_image.py
# Ship only what runs (bench/RESULTS.md, "Per-message CPU and image" and "Pipeline, image and
# idle imports"): native libraries without their symbol tables (~53 MB); no test suites, type
# stubs, Cython sources, Windows DLLs (discord.py's opus: loaded on win32 only, 0.8 MB), or
# litellm's proxy admin UI, Swagger UI and OpenAPI snapshot (~26 MB; only litellm's proxy server
# reads them); Babel locale data only for the languages chatgate has texts in (~32 MB). The
# image runs with PYTHONDONTWRITEBYTECODE on a read-only root, so bytecode is compiled here, once,
# for every module a gateway imports (starting, its first completion, media, MCP, Redis) and for
# all of chatgate and litellm's providers; modules nothing imports ship as source (~60 MB less
# .pyc). Third-party modules with bytecode ship it alone, without their source (~38 MB; not
# chatgate, nor the packages that read their own source: slim_image.KEEP_SOURCE).
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends binutils \
    && find /install -name '*.so*' -type f -exec strip --strip-unneeded {} + \
    && rm -rf /install/lib/python3.11/site-packages/litellm/proxy/_experimental/out \
        /install/lib/python3.11/site-packages/litellm/proxy/swagger \
        /install/lib/python3.11/site-packages/litellm/proxy/_lazy_openapi_snapshot.json \
    && find /install -depth -type d \( -name tests -o -name test \) -exec rm -rf {} + \
    && find /install -type f \( -name '*.pyi' -o -name '*.pyx' -o -name '*.pxd' -o -name '*.dll' \) -delete \
    && PYTHONPATH=/install/lib/python3.11/site-packages \
        python deploy/slim_image.py /install/lib/python3.11/site-packages \
            /usr/local/lib/python3.11/site-packages \
    && rm -rf /var/lib/apt/lists/*

# The runtime's root: the base without the packaging tools it carries (pip, setuptools, wheel in
# its site-packages, ensurepip's bundled wheels: ~16 MB) that nothing in the image runs; the
# packages come from the build stage. Deleting them in a layer of the final stage would leave
# them in the base's layers, so the final stage starts from scratch with this root as its first
# layer (unchanged while the base is) and the packages as the next.
FROM ${PYTHON_IMAGE} AS runtime
RUN find /usr/local/lib/python3.11/site-packages -mindepth 1 -maxdepth 1 ! -name README.txt \
        -exec rm -rf {} + \
    && rm -rf /usr/local/lib/python3.11/ensurepip/_bundled /usr/local/bin/pip /usr/local/bin/pip3 \
        /usr/local/bin/pip3.11 /usr/local/bin/wheel

FROM scratch
# PATH and LANG as the base image declares them (a scratch stage inherits no ENV).
ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    LITELLM_OFFLINE_MODE=true \
    CHATGATE_CONFIG=/etc/chatgate/gateway.yaml \
    CHATGATE_STATE_DIR=/var/lib/chatgate \
    CHATGATE_HOST=0.0.0.0 \
    CHATGATE_WEBCHAT_AUTH=token
# The whole root, on purpose: the base minus the packaging tools (see the runtime stage).
# hadolint ignore=DL3067
COPY --from=runtime / /
COPY --from=build /install /usr/local
COPY gateway.yaml /etc/chatgate/gateway.yaml
# Supply chain: the CycloneDX SBOM of this environment (`make sbom` writes it before the build).
COPY build/sbom.cdx.json /usr/share/doc/chatgate/sbom.cdx.json
RUN groupadd --system --gid 10001 chatgate \
    && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/chatgate chatgate \
    && mkdir -p /var/lib/chatgate && chown 10001:10001 /var/lib/chatgate
# Numeric, so the runtime (and Kubernetes runAsNonRoot) can tell it is not root without /etc/passwd.
USER 10001:10001
VOLUME ["/var/lib/chatgate"]
EXPOSE 8765
STOPSIGNAL SIGTERM
# The port follows CHATGATE_PORT, as the shipped gateway.yaml does (`-e CHATGATE_PORT=9000`).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os,sys,urllib.request as u; p=os.environ.get('CHATGATE_PORT') or '8765'; sys.exit(0 if u.urlopen('http://127.0.0.1:'+p+'/healthz', timeout=4).status == 200 else 1)"]
ENTRYPOINT ["chatgate"]
CMD ["run"]
