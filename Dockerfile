# A container image of tern: `docker build -t tern .`, then
#   docker run -p 7070:7070 tern                              (the bundled sample)
#   docker run -p 7070:7070 -v /srv/rdf:/data tern serve --bind 0.0.0.0 /data/file.nt
#   docker run -p 7070:7070 -v tern-index:/var/lib/tern tern serve --bind 0.0.0.0 --index /var/lib/tern/index

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p tern-cli \
    && install -m 0755 target/release/tern /usr/local/bin/tern

FROM debian:bookworm-slim
# Versions are not pinned: bookworm's security updates replace the pinned
# ones in the archive, and a pinned build would then fail.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/tern --shell /usr/sbin/nologin tern
COPY --from=build /usr/local/bin/tern /usr/local/bin/tern
# Numeric, so that a host (or Kubernetes' runAsNonRoot) can check it.
USER 10001:10001
WORKDIR /var/lib/tern
ENV XDG_CACHE_HOME=/var/lib/tern/.cache
EXPOSE 7070
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["sh", "-c", "curl -fsS -o /dev/null http://127.0.0.1:7070/status || exit 1"]
ENTRYPOINT ["/usr/local/bin/tern"]
CMD ["serve", "--bind", "0.0.0.0"]
