#!/usr/bin/env bash
# Kubernetes' path: containerd's CRI plugin with moat and runc handlers,
# a two-container pod under each (tests/oci/cri/pods.sh says what it
# checks). Under moat the pod is one sandbox: its workload containers are
# members of the pause container's sentry (docs/kubernetes.md).
exec bash "$(dirname "$0")/cri/pods.sh" "$@"
