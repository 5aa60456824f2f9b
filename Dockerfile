# chatgate — slim, non-root image. Config is mounted at /etc/chatgate/gateway.yaml; state lives on a volume.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY chatgate ./chatgate
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LITELLM_LOCAL_MODEL_COST_MAP=True \
    LITELLM_OFFLINE_MODE=true \
    CHATGATE_CONFIG=/etc/chatgate/gateway.yaml \
    CHATGATE_STATE_DIR=/var/lib/chatgate \
    CHATGATE_HOST=0.0.0.0 \
    CHATGATE_WEBCHAT_AUTH=token
COPY --from=build /install /usr/local
COPY gateway.yaml /etc/chatgate/gateway.yaml
RUN groupadd --system --gid 10001 chatgate \
    && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/chatgate chatgate \
    && mkdir -p /var/lib/chatgate && chown 10001:10001 /var/lib/chatgate
# Numeric, so the runtime (and Kubernetes runAsNonRoot) can tell it is not root without /etc/passwd.
USER 10001:10001
VOLUME ["/var/lib/chatgate"]
EXPOSE 8765
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4).status == 200 else 1)"]
ENTRYPOINT ["chatgate"]
CMD ["run"]
