# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Prove that a node can take its upgrade step: fetch its target packages and images ahead, and check its disks.

Packages go through the node's own apt configuration (its sources, proxies, pins, apt.conf.d), with only the
Kubernetes repository file swapped for the target minor's, into a private index: the node's own lists are not
touched. Downloads land in the node's package cache (``/var/cache/apt/archives``), where the install step finds
them; in check mode they land in the scratch directory, which is removed. Images are listed by the target
kubeadm itself (unpacked from its downloaded package, ``kubeadm config images list`` on the cluster's
ClusterConfiguration), so ``imageRepository`` and the target's etcd and CoreDNS tags are kubeadm's own answer.

Nothing here raises for what the node cannot do: every such cause is a *problem* in the result, so the caller
can name every node that cannot take its step in one report.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version

KUBERNETES_SOURCES = "kubernetes.list"
ARCHIVES = "/var/cache/apt/archives"
MIB = 1 << 20
# kubeadm upgrade copies the static Pod manifests and (stacked etcd) etcd's data directory under here first.
KUBEADM_BACKUP_DIR = "/etc/kubernetes/tmp"
VERSION_FORM = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$")
URI_LINE = re.compile(r"^'(?P<uri>[^']+)'\s+(?P<file>\S+)\s+(?P<size>\d+)\s")


def apt_options(root: str, archives: str) -> list[str]:
    """apt-get options for the private index under ``root``; ``archives`` is where downloads go."""
    opts = {
        "Dir::Etc::sourcelist": f"{root}/sources.list",
        "Dir::Etc::sourceparts": f"{root}/sources.list.d",
        "Dir::State::Lists": f"{root}/lists",
        "Dir::Cache::pkgcache": f"{root}/pkgcache.bin",
        "Dir::Cache::srcpkgcache": f"{root}/srcpkgcache.bin",
        "Dir::Cache::archives": archives.rstrip("/") + "/",
    }
    out = []
    for key, value in opts.items():
        out += ["-o", f"{key}={value}"]
    return out


def write_private_sources(root: str, etc_apt: str, repo_line: str, replace: list[str]) -> list[str]:
    """Copy the node's sources into ``root``, leaving out the files in ``replace``, and add ``repo_line``.

    Also seeds the private lists with the node's current ones, so ``apt-get update`` only asks what changed.
    Returns the node's source files that were copied.
    """
    parts = os.path.join(root, "sources.list.d")
    os.makedirs(parts, exist_ok=True)
    os.makedirs(os.path.join(root, "lists", "partial"), exist_ok=True)
    copied = []
    main = os.path.join(etc_apt, "sources.list")
    if os.path.isfile(main):
        shutil.copyfile(main, os.path.join(root, "sources.list"))
        copied.append(main)
    else:
        open(os.path.join(root, "sources.list"), "w").close()
    node_parts = os.path.join(etc_apt, "sources.list.d")
    for name in sorted(os.listdir(node_parts)) if os.path.isdir(node_parts) else []:
        src = os.path.join(node_parts, name)
        if name in replace or not name.endswith((".list", ".sources")) or not os.path.isfile(src):
            continue
        shutil.copyfile(src, os.path.join(parts, name))
        copied.append(src)
    with open(os.path.join(parts, KUBERNETES_SOURCES), "w") as f:
        f.write(repo_line.strip() + "\n")
    return copied


def seed_lists(root: str, node_lists: str) -> None:
    """Copy the node's downloaded indexes into the private lists (apt then revalidates them, If-Modified-Since)."""
    if not os.path.isdir(node_lists):
        return
    for name in os.listdir(node_lists):
        src = os.path.join(node_lists, name)
        if name in ("lock", "partial") or not os.path.isfile(src):
            continue
        shutil.copyfile(src, os.path.join(root, "lists", name))


def update_problem(rc: int, stdout: str, stderr: str) -> str | None:
    """What ``apt-get update`` through the node's configuration could not do (the install step's update would fail
    the same way), or None."""
    failed, lines = [], (stdout + "\n" + stderr).splitlines()
    for i, line in enumerate(lines):
        if line.startswith(("Err:", "E:")) or (line.startswith("W:") and "Failed to fetch" in line):
            # apt puts the cause of an Err: on the indented line after it
            cause = (
                lines[i + 1].strip()
                if line.startswith("Err:") and i + 1 < len(lines) and lines[i + 1][:1].isspace()
                else ""
            )
            failed.append(f"{line.strip()} ({cause})" if cause else line.strip())
    if rc == 0 and not failed:
        return None
    detail = "; ".join(failed[:4]) or (stderr.strip() or stdout.strip())[:400]
    return f"apt-get update through the node's own sources failed (rc {rc}): {detail}"


def package_version(version: str) -> str:
    """The packages' upstream version: ``1.38.0-rc.1`` -> ``1.38.0~rc.1`` (kubernetes/release's RPMVersion)."""
    return version.replace("-", "~")


def last_words(stderr: str) -> str:
    """What a failed command said last: its last non-empty line (a Go program's fatal message), at most 400 chars."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    return lines[-1][-400:] if lines else "(nothing on stderr)"


def pick_version(madison: str, package: str, version: str) -> str | None:
    """The newest package revision of Kubernetes ``version`` (``1.37.2`` -> ``1.37.2-1.1``) in ``apt-cache madison``."""
    version = package_version(version)
    found = []
    for line in madison.splitlines():
        cols = [c.strip() for c in line.split("|")]
        if len(cols) >= 2 and cols[0] == package and cols[1].startswith(version + "-"):
            found.append(cols[1])
    return found[0] if found else None  # madison lists the newest first


def parse_print_uris(text: str) -> list[dict]:
    """``apt-get --print-uris`` lines: what apt would download (files already in the cache are not listed)."""
    out = []
    for line in text.splitlines():
        m = URI_LINE.match(line.strip())
        if m:
            out.append({"uri": m["uri"], "file": m["file"], "size": int(m["size"])})
    return out


def cached_deb(archives: str, package: str, exact: str) -> str | None:
    """The downloaded package file of ``package`` ``exact`` in ``archives`` (apt escapes ':' as %3a)."""
    pattern = os.path.join(archives, f"{package}_{exact.replace(':', '%3a')}_*.deb")
    hits = sorted(glob.glob(pattern))
    return hits[0] if hits else None


# kubeadm's preflight prints each failed check as "[ERROR <Check>]: <message>", a message possibly over several lines.
_PREFLIGHT_LINE = re.compile(r"^\s*\[(ERROR|WARNING) ([^\]]+)\]: ?(.*)$")
# what ends a message: kubeadm's own bracketed lines ("[preflight] ...", "[upgrade/preflight] ..."), its error
# trailer and klog lines; a message's own lines may start with "[" too ('[Plugin "foo" is unsupported ...]')
_PREFLIGHT_END = re.compile(
    r"^(\[(preflight|upgrade[^\]]*|dryrun|kubelet[^\]]*|addons|config)\]|error execution phase|To see the stack|[IWEF]\d{4} )"
)


def preflight_findings(text: str) -> dict[str, list[str]]:
    """``{"errors": [...], "warnings": [...]}`` from kubeadm's preflight output, each "<Check>: <message>" with the
    message's further lines joined (up to the next bracketed line)."""
    found: dict[str, list[str]] = {"errors": [], "warnings": []}
    current = None
    for line in (text or "").splitlines():
        match = _PREFLIGHT_LINE.match(line)
        if match:
            kind = "errors" if match.group(1) == "ERROR" else "warnings"
            message = match.group(3).strip()
            found[kind].append(f"{match.group(2)}: {message}" if message else match.group(2))
            current = kind
        elif current and line.strip() and not _PREFLIGHT_END.match(line):
            found[current][-1] += " " + line.strip()
        else:
            current = None
    return found


def preflight_argv(kubeadm: str, step: str, version: str, ignore: list[str], dryrun_dir: str) -> list[str]:
    """The target kubeadm's own preflight of this node's step: ``upgrade apply`` (the first control plane; a dry run)
    or ``upgrade node``, with the errors the operator lets the real step ignore."""
    ignored = [f"--ignore-preflight-errors={','.join(ignore)}"] if ignore else []
    if step == "apply":
        allow = ["--allow-experimental-upgrades"] if _version.is_prerelease(version) else []
        return [
            "env",
            f"KUBEADM_UPGRADE_DRYRUN_DIR={dryrun_dir}",
            kubeadm,
            "upgrade",
            "apply",
            "phase",
            "preflight",
            f"v{version}",
            "--dry-run",
            "--yes",
            *allow,
            *ignored,
        ]
    return [kubeadm, "upgrade", "node", "phase", "preflight", *ignored]


def image_short_name(ref: str) -> str:
    """``registry.k8s.io/coredns/coredns:v1.12.1`` -> ``coredns``; digests and tags dropped."""
    ref = ref.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.split(":", 1)[0]


def parse_images_list(text: str) -> list[str]:
    """``kubeadm config images list -o json``: its ``images``."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"kubeadm config images list did not print JSON: {exc}: {text[:200]!r}") from exc
    images = doc.get("images") if isinstance(doc, dict) else None
    if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
        raise ValueError(f"kubeadm config images list printed no image list: {text[:200]!r}")
    return images


def select_images(images: list[str], names: list[str] | None) -> list[str]:
    """Those of ``images`` whose short name is in ``names`` (all when ``names`` is None)."""
    if names is None:
        return list(images)
    return [i for i in images if image_short_name(i) in names]


def images_config(cluster_configuration: dict, version: str) -> str:
    """kubeadm-config's ClusterConfiguration with ``kubernetesVersion`` set to the target, as JSON (JSON is YAML to
    kubeadm's ``--config``, so no YAML library is needed on the node)."""
    if not isinstance(cluster_configuration, dict) or cluster_configuration.get("kind") != "ClusterConfiguration":
        raise ValueError(
            "cluster_configuration must be kubeadm's ClusterConfiguration (kind ClusterConfiguration),"
            " as kubeadm-config's data.ClusterConfiguration parsed from YAML"
        )
    return json.dumps(dict(cluster_configuration, kubernetesVersion="v" + version.lstrip("v")))


def present_image_sizes(crictl_images_json: str) -> dict[str, int]:
    """Largest size per short name among the images the runtime holds (``crictl images -o json``)."""
    sizes: dict[str, int] = {}
    try:
        doc = json.loads(crictl_images_json or "{}")
    except ValueError:
        return sizes
    for image in doc.get("images") or []:
        try:
            size = int(image.get("size") or 0)
        except (TypeError, ValueError):
            size = 0
        for tag in image.get("repoTags") or []:
            name = image_short_name(tag)
            sizes[name] = max(sizes.get(name, 0), size)
    return sizes


def existing_dir(path: str) -> str:
    """``path`` or its nearest existing parent (a directory that is yet to be made lands on that file system)."""
    path = os.path.abspath(path)
    while not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def tree_size(path: str) -> int:
    """Bytes of the regular files under ``path`` (0 when it does not exist)."""
    total = 0
    for base, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(base, name))
            except OSError:
                continue
            if not os.path.islink(os.path.join(base, name)):
                total += st.st_size
    return total


def space_plan(needs: list[dict], reserve: int) -> tuple[list[dict], list[str]]:
    """Sum ``needs`` (``path``, ``bytes``, ``what``) per file system and compare with its free space.

    Needs on the same file system add up (packages, images and kubeadm's backup on one root disk is the usual
    case); each file system keeps ``reserve`` bytes free besides.
    """
    by_dev: dict[int, dict] = {}
    for need in needs:
        where = existing_dir(need["path"])
        st = os.statvfs(where)
        dev = os.stat(where).st_dev
        row = by_dev.setdefault(dev, {"path": where, "free": st.f_bavail * st.f_frsize, "need": reserve, "for": []})
        row["need"] += int(need["bytes"])
        row["for"].append(f"{need['what']} ({need['bytes'] // MIB} MiB at {need['path']})")
    rows = list(by_dev.values())
    problems = [
        f"{r['path']}: {r['free'] // MIB} MiB free, {r['need'] // MIB} MiB needed ({'; '.join(r['for'])};"
        f" {reserve // MIB} MiB reserve)"
        for r in rows
        if r["free"] < r["need"]
    ]
    return rows, problems


def package_row(name, version, path, size, *, fetch, fetched, installed) -> dict:
    """One entry of the module's ``packages`` result."""
    return {
        "name": name,
        "version": version,
        "path": path,
        "size": size,
        "fetch": fetch,
        "fetched": fetched,
        "installed": installed,
    }


class Prefetch:
    """One node's prefetch. ``run(argv) -> (rc, stdout, stderr)`` runs a command on the node (the module bounds
    it with its timeout); ``params`` are the module's options."""

    def __init__(self, params: dict, run, check_mode: bool, scratch: str):
        self.p = params
        self.run = run
        self.check_mode = check_mode
        self.scratch = scratch
        self.problems: list[str] = []
        self.space: list[dict] = []
        self.packages: list[dict] = []
        self.images: list[dict] = []
        self.kubeadm: str | None = params.get("kubeadm_path")
        self.preflight: dict | None = None
        self.archives = os.path.join(scratch, "archives") if check_mode else params.get("archives_dir") or ARCHIVES

    def result(self) -> dict:
        fetched = [p for p in self.packages if p["fetched"]] + [i for i in self.images if i["pulled"]]
        would = [p for p in self.packages if p["fetch"]] + [i for i in self.images if not i["present"]]
        return {
            "changed": bool(fetched) or (self.check_mode and bool(would)),
            "packages": self.packages,
            "images": self.images,
            "space": self.space,
            "problems": self.problems,
            "kubeadm_preflight": self.preflight,
            "fetched_bytes": sum(p["size"] for p in self.packages if p["fetched"]),
        }

    def go(self) -> dict:
        if self.p.get("packages"):
            self.fetch_packages()
        if not self.problems:
            self.fetch_images()
        if not self.problems and self.p.get("kubeadm_preflight", "none") != "none":
            self.kubeadm_preflight()
        return self.result()

    # kubeadm's own preflight of the node's step

    def kubeadm_preflight(self) -> None:
        step = self.p["kubeadm_preflight"]
        if self.check_mode and step == "node" and self.p.get("control_plane"):
            # its control-plane preflight pulls missing images, and check mode pulled nothing
            self.preflight = {
                "step": step,
                "ran": False,
                "why": "check mode (it would pull the images check mode left)",
            }
            return
        kubeadm = self.kubeadm or self.unpack_kubeadm()
        if kubeadm is None:
            return
        self.kubeadm = kubeadm
        dryrun = os.path.join(self.scratch, "kubeadm-dryrun")
        os.makedirs(dryrun, exist_ok=True)
        argv = preflight_argv(kubeadm, step, self.p["version"], self.p.get("ignore_preflight_errors") or [], dryrun)
        rc, out, err = self.run(argv)
        found = preflight_findings(f"{out}\n{err}")
        self.preflight = {"step": step, "ran": True, "rc": rc, **found}
        if rc != 0:
            why = "; ".join(found["errors"]) or last_words(err)
            self.problems.append(
                f"kubeadm {self.p['version']}'s own preflight of its 'kubeadm upgrade {step}' step fails (rc {rc}): {why}"
            )

    # packages

    def fetch_packages(self) -> None:
        root = os.path.join(self.scratch, "apt")
        etc_apt = self.p.get("apt_etc_dir") or "/etc/apt"
        write_private_sources(root, etc_apt, self.p["apt_repo_line"], self.p["apt_replace_sources"])
        seed_lists(root, self.p.get("apt_lists_dir") or "/var/lib/apt/lists")
        os.makedirs(os.path.join(self.archives, "partial"), exist_ok=True)
        opts = apt_options(root, self.archives)
        rc, out, err = self.run(["apt-get", "-q", *opts, "update"])
        problem = update_problem(rc, out, err)
        if problem:
            self.problems.append(problem)
            return
        pins = self.resolve(opts)
        if not pins:
            return
        installed = self.installed(pins)
        pins = [pin for pin in pins if pin not in installed]
        if pins:
            self.download(opts, pins)

    def installed(self, pins: list[str]) -> list[str]:
        """The pins already installed at their version (nothing to fetch; a rerun after the upgrade)."""
        names = [pin.split("=", 1)[0] for pin in pins]
        _rc, out, _err = self.run(["dpkg-query", "-W", "-f", "${Package}=${Version} ${db:Status-Status}\\n", *names])
        done = [line.split(" ", 1)[0] for line in out.splitlines() if line.endswith(" installed")]
        for pin in (p for p in pins if p in done):
            name, exact = pin.split("=", 1)
            self.packages.append(package_row(name, exact, None, 0, fetch=False, fetched=False, installed=True))
        return done

    def download(self, opts: list[str], pins: list[str]) -> None:
        install = ["apt-get", "-q", "-y", *opts, "--allow-downgrades", "--allow-change-held-packages"]
        rc, out, err = self.run([*install, "--print-uris", "install", *pins])
        if rc != 0:
            self.problems.append(f"apt cannot install {' '.join(pins)} on this node (rc {rc}): {last_words(err)}")
            return
        wanted = parse_print_uris(out)
        real = self.p.get("archives_dir") or ARCHIVES
        cached = {pin.split("=")[0]: cached_deb(real, *pin.split("=", 1)) for pin in pins}
        self.check_space([{"path": self.archives, "bytes": sum(w["size"] for w in wanted), "what": "packages"}])
        if self.problems:
            return
        if wanted:
            rc, out, err = self.run([*install, "--download-only", "install", *pins])
            if rc != 0:
                self.problems.append(f"apt could not download {' '.join(pins)} (rc {rc}): {last_words(err)}")
                return
        for pin in pins:
            name, exact = pin.split("=", 1)
            path = cached_deb(self.archives, name, exact)
            hit = next((w for w in wanted if w["file"].startswith(f"{name}_")), None)
            fetch = cached[name] is None
            size = hit["size"] if hit else (os.path.getsize(path) if path else 0)
            fetched = fetch and hit is not None and not self.check_mode
            self.packages.append(package_row(name, exact, path, size, fetch=fetch, fetched=fetched, installed=False))
            if path is None:
                self.problems.append(f"{name} {exact} is not in {self.archives} after the download")

    def resolve(self, opts: list[str]) -> list[str]:
        names = self.p["packages"]
        rc, out, err = self.run(["apt-cache", *opts, "madison", *names])
        pins = []
        for name in names:
            exact = pick_version(out, name, self.p["version"])
            if exact is None:
                self.problems.append(
                    f"{name} {self.p['version']} is not offered by the node's sources (with the target repository"
                    f" {self.p['apt_repo_line'].strip()!r}){': ' + err.strip() if rc else ''}"
                )
            else:
                pins.append(f"{name}={exact}")
        return pins if len(pins) == len(names) else []

    # images

    def fetch_images(self) -> None:
        wanted = list(self.p.get("images") or [])
        if self.p.get("kubeadm_images") is not None:
            listed = self.kubeadm_images()
            if listed is None:
                return
            wanted += [i for i in select_images(listed, self.p["kubeadm_images"] or None) if i not in wanted]
        crictl = ["crictl"] + (["--runtime-endpoint", self.p["cri_socket"]] if self.p.get("cri_socket") else [])
        missing = []
        for image in wanted:
            rc, _out, _err = self.run([*crictl, "inspecti", "-q", image])
            self.images.append({"image": image, "present": rc == 0, "pulled": False})
            if rc != 0:
                missing.append(image)
        sizes = present_image_sizes(self.run([*crictl, "images", "-o", "json"])[1]) if missing else {}
        needs = (
            [
                {
                    "path": self.p["images_dir"],
                    "bytes": sum(sizes.get(image_short_name(i), 0) for i in missing),
                    "what": f"{len(missing)} image(s), estimated from the versions present",
                }
            ]
            if missing
            else []
        )
        needs += self.backup_needs()
        self.check_space(needs)
        if self.problems or self.check_mode:
            return
        for row in self.images:
            if row["present"]:
                continue
            rc, _out, err = self.run([*crictl, "pull", row["image"]])
            row["pulled"] = rc == 0
            if rc != 0:
                self.problems.append(f"cannot pull {row['image']} (rc {rc}): {last_words(err)}")

    def kubeadm_images(self) -> list[str] | None:
        kubeadm = self.kubeadm or self.unpack_kubeadm()
        if kubeadm is None:
            return None
        try:
            config = images_config(self.p.get("cluster_configuration"), self.p["version"])
        except ValueError as exc:
            self.problems.append(str(exc))
            return None
        path = os.path.join(self.scratch, "images-config.json")
        with open(path, "w") as f:
            f.write(config)
        self.kubeadm = kubeadm
        rc, out, err = self.run([kubeadm, "config", "images", "list", "--config", path, "-o", "json"])
        if rc != 0:
            self.problems.append(f"kubeadm {self.p['version']} could not list its images (rc {rc}): {last_words(err)}")
            return None
        try:
            return parse_images_list(out)
        except ValueError as exc:
            self.problems.append(str(exc))
            return None

    def unpack_kubeadm(self) -> str | None:
        if any(p["name"] == "kubeadm" and p["installed"] for p in self.packages):
            return self.p.get("installed_kubeadm") or "/usr/bin/kubeadm"
        row = next((p for p in self.packages if p["name"] == "kubeadm" and p["path"]), None)
        if row is None:
            self.problems.append(
                "the target kubeadm is needed to list the target images: add kubeadm to packages or give kubeadm_path"
            )
            return None
        dest = os.path.join(self.scratch, "kubeadm")
        rc, _out, err = self.run(["dpkg-deb", "-x", row["path"], dest])
        binary = os.path.join(dest, "usr", "bin", "kubeadm")
        if rc != 0 or not os.access(binary, os.X_OK):
            self.problems.append(f"cannot unpack {row['path']} (rc {rc}): {last_words(err)}")
            return None
        return binary

    # disk

    def backup_needs(self) -> list[dict]:
        data = self.p.get("etcd_data_dir")
        if not data or not os.path.isdir(data):
            return []
        needs = [{"path": KUBEADM_BACKUP_DIR, "bytes": tree_size(data), "what": "kubeadm's copy of the etcd data"}]
        db = os.path.join(data, "member", "snap", "db")
        if self.p.get("snapshot_dir") and os.path.isfile(db):
            needs.append({"path": self.p["snapshot_dir"], "bytes": os.path.getsize(db), "what": "the etcd snapshot"})
        return needs

    def check_space(self, needs: list[dict]) -> None:
        if not needs:
            return
        rows, problems = space_plan(needs, self.p["reserve_mib"] * MIB)
        self.space += rows
        self.problems += problems
