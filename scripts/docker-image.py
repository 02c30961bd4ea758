#!/usr/bin/env python3
"""Usage: docker-image.py FIXTURES BASES_DIR OUT.tar REGISTRY

Writes one `docker load` archive (the docker save format: manifest.json, each image's config, each layer's tar)
holding every image of FIXTURES/images.json, tagged REGISTRY/<ref>. Each image is two layers: its base root file
system (BASES_DIR/<base>.tar, made by debootstrap; the same layer, so the same digest, for every image on that base)
and a small layer of its own files (the entrypoint scripts, and the account `useradd -m` would make). No container
runs to build them: with the vfs storage driver, each step of a Dockerfile copies the whole root file system.
Called by docker-images.sh.
"""
import hashlib
import io
import json
import os
import sys
import tarfile

fixtures, bases_dir, out_path, registry = sys.argv[1:5]
spec = json.load(open(os.path.join(fixtures, "images.json")))
EPOCH = 1714521600  # 2024-05-01: fixed, so that the same files make the same layer


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_member(base_tar, name):
    with tarfile.open(base_tar) as tar:
        for candidate in (name, "." + name, name.lstrip("/")):
            try:
                return tar.extractfile(candidate).read().decode()
            except KeyError:
                continue
    raise KeyError(name)


def add(tar, name, data=None, mode=0o644, uid=0, gid=0, kind=tarfile.REGTYPE):
    info = tarfile.TarInfo(name.lstrip("/"))
    info.type, info.mode, info.uid, info.gid, info.mtime = kind, mode, uid, gid, EPOCH
    if data is None:
        tar.addfile(info)
    else:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))


def own_layer(image):
    """The image's own files: its scripts, and the account with its home when it has one (what useradd -m writes)."""
    base_tar = os.path.join(bases_dir, image["base"] + ".tar")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        account = image.get("account")
        if account:
            name, uid, home = account["name"], account["uid"], account["home"]
            passwd = read_member(base_tar, "/etc/passwd") + f"{name}:x:{uid}:{uid}::{home}:/bin/sh\n"
            group = read_member(base_tar, "/etc/group") + f"{name}:x:{uid}:\n"
            add(tar, "/etc/passwd", passwd.encode())
            add(tar, "/etc/group", group.encode())
            add(tar, "/home", mode=0o755, kind=tarfile.DIRTYPE)
            add(tar, home, mode=0o700, uid=uid, gid=uid, kind=tarfile.DIRTYPE)
        else:
            # WORKDIR makes the folder, root's.
            add(tar, "/home", mode=0o755, kind=tarfile.DIRTYPE)
            add(tar, image["config"]["WorkingDir"], mode=0o755, kind=tarfile.DIRTYPE)
        for target, source in sorted(image["files"].items()):
            with open(os.path.join(fixtures, source), "rb") as f:
                add(tar, target, f.read(), mode=0o755)
    return buf.getvalue()


with tarfile.open(out_path, "w", format=tarfile.GNU_FORMAT) as out:
    manifest = []
    base_ids = {}
    for image in spec["images"]:
        base = image["base"]
        if base not in base_ids:
            path = os.path.join(bases_dir, base + ".tar")
            base_ids[base] = sha256_file(path)
            out.add(path, arcname=f"{base_ids[base]}/layer.tar")
        own = own_layer(image)
        own_id = hashlib.sha256(own).hexdigest()
        if f"{own_id}/layer.tar" not in out.getnames():
            add(out, f"{own_id}/layer.tar", own)
        config = {
            "architecture": "amd64",
            "os": "linux",
            "created": "2024-05-01T00:00:00Z",
            "config": image["config"],
            "rootfs": {"type": "layers", "diff_ids": [f"sha256:{base_ids[base]}", f"sha256:{own_id}"]},
            "history": [
                {"created": "2024-05-01T00:00:00Z", "created_by": f"debootstrap {base}"},
                {"created": "2024-05-01T00:00:00Z", "created_by": image["source"]},
            ],
        }
        config_bytes = json.dumps(config, sort_keys=True).encode()
        config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
        add(out, config_name, config_bytes)
        manifest.append(
            {
                "Config": config_name,
                "RepoTags": [f"{registry}/{image['ref']}"],
                "Layers": [f"{base_ids[base]}/layer.tar", f"{own_id}/layer.tar"],
            }
        )
    add(out, "manifest.json", json.dumps(manifest).encode())
