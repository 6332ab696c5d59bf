#!/usr/bin/env python3
"""tests/oci/mkimage.py ROOTFS NAME OUT.tar [CMD-JSON]: a one-layer OCI image
archive of the directory ROOTFS, named NAME (e.g. docker.io/library/moat-bb:1),
for `ctr image import`; its command is CMD-JSON (["/bin/sh"] by default). No registry is involved: the layer is ROOTFS as a tar,
uncompressed, so its digest is also its diff_id."""
import hashlib
import io
import json
import sys
import tarfile


def blob(tar, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo("blobs/sha256/" + digest[7:])
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
    return {"digest": digest, "size": len(data)}


def main():
    rootfs, name, out = sys.argv[1:4]
    cmd = json.loads(sys.argv[4]) if len(sys.argv) > 4 else ["/bin/sh"]
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.PAX_FORMAT) as lt:
        lt.add(rootfs, arcname=".", recursive=True)
    layer = layer.getvalue()
    with tarfile.open(out, "w") as tar:
        lay = blob(tar, layer)
        lay["mediaType"] = "application/vnd.oci.image.layer.v1.tar"
        config = {
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                "Cmd": cmd,
            },
            "rootfs": {"type": "layers", "diff_ids": [lay["digest"]]},
        }
        cfg = blob(tar, json.dumps(config).encode())
        cfg["mediaType"] = "application/vnd.oci.image.config.v1+json"
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": cfg,
            "layers": [lay],
        }
        man = blob(tar, json.dumps(manifest).encode())
        man["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
        man["annotations"] = {"io.containerd.image.name": name,
                              "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}
        for path, doc in (("oci-layout", {"imageLayoutVersion": "1.0.0"}),
                          ("index.json", {"schemaVersion": 2, "manifests": [man]})):
            data = json.dumps(doc).encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()
