# The offline path: `make images` builds each image from this file with no
# base image and nothing pulled. scripts/build-static.sh has already built
# the static binary and staged the root filesystem; the build context is
# build/images/NAME (holding rootfs/) and --target picks the image:
#
#   docker build -f deploy/docker/scratch.Dockerfile --target zlinketcd \
#     --build-arg VERSION=… --build-arg REVISION=… \
#     -t zlink-etcd/zlinketcd:v0.1.0-dev build/images/zlinketcd
#
# The images users build in their own CI come from deploy/docker/Dockerfile,
# whose final stages have the same shape (deploy tests compare them).
#
# Every image: static binary in /usr/local/bin, runs as nonroot (65532), and
# writes nothing outside its mounted volumes (run it with a read-only root
# filesystem).

FROM scratch AS common
ARG VERSION=dev
ARG REVISION=unknown
COPY rootfs/ /
USER 65532:65532
LABEL org.opencontainers.image.vendor="zlink-etcd" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/zlink-systems/zlink-etcd" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.version="${VERSION}"

FROM common AS zlinketcd
LABEL org.opencontainers.image.title="zlinketcd" \
      org.opencontainers.image.description="zlink-etcd's operator command: auth setup, inspect, gc, check, bench"
ENTRYPOINT ["/usr/local/bin/zlinketcd"]

FROM common AS meshnode
LABEL org.opencontainers.image.title="meshnode" \
      org.opencontainers.image.description="Example zlink mesh node on the etcd store (examples/meshnode)"
EXPOSE 9090
ENTRYPOINT ["/usr/local/bin/meshnode"]

FROM common AS etcdctl
LABEL org.opencontainers.image.title="etcdctl" \
      org.opencontainers.image.description="Upstream etcdctl built from go.etcd.io/etcd/etcdctl/v3 (deploy/tools/etcd)"
ENTRYPOINT ["/usr/local/bin/etcdctl"]

FROM common AS etcd
LABEL org.opencontainers.image.title="etcd" \
      org.opencontainers.image.description="Upstream etcd server built from go.etcd.io/etcd/server/v3 (deploy/tools/etcd)"
EXPOSE 2379 2380 2381
# The data directory, owned by nonroot with mode 0700 as etcd wants it: a
# volume mounted here starts with that owner (Docker copies it into a new
# named volume; Kubernetes sets fsGroup). Last stage: the legacy builder
# builds every stage before --target, and only this one needs data/.
COPY --chown=65532:65532 data/ /var/lib/etcd/
ENTRYPOINT ["/usr/local/bin/etcd"]
