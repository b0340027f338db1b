#!/usr/bin/env python3
"""Checks a Maven repository that a release deploy wrote, as Central would before accepting it.

Usage: release_layout.py PROJECT_DIR REPOSITORY_DIR

The published modules are the reactor's modules (the root pom's <modules>) less the ones listed in NOT_PUBLISHED, plus
the parent POM itself. For each one the repository must hold, under dev/codeexec/<artifactId>/<version>/:
  - the POM, with name and description, and url, licenses, developers and scm of its own or from its published parent;
  - for a jar module: the jar, the -sources.jar (with .java files) and the -javadoc.jar (with an index.html);
  - for every file (attached test-jars and the like included): an .asc signature that gpg verifies, and .md5 and .sha1
    files that match the content.
No module of NOT_PUBLISHED may appear. Every problem is printed on a line of its own; the exit status is the count
(capped at 100), so a run that finds nothing wrong exits 0.

A snapshot version is deployed with unique file names (artifactId-0.1.0-20261206.140000-1.jar); the file names are
read from the maven-metadata.xml beside them, so a snapshot and a release are checked the same way.
"""
import hashlib
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

NS = {"m": "http://maven.apache.org/POM/4.0.0"}
# Runnable samples and benchmarks are for this repository only; a new module is published unless it is listed here.
NOT_PUBLISHED = {"samples", "benchmarks"}
CENTRAL_METADATA = ("url", "licenses", "developers", "scm")

problems = []


def problem(text):
    problems.append(text)
    print("release layout: " + text)


def pom(path):
    return ET.parse(path).getroot()


def text(root, tag):
    element = root.find("m:" + tag, NS)
    return element.text.strip() if element is not None and element.text else None


def reactor(project):
    """(groupId, artifactId, version, packaging) of the parent and of every module but the unpublished."""
    root = pom(project / "pom.xml")
    group, version = text(root, "groupId"), text(root, "version")
    published = [(group, text(root, "artifactId"), version, "pom")]
    excluded = []
    for module in root.findall("m:modules/m:module", NS):
        child = pom(project / module.text / "pom.xml")
        coordinates = (text(child, "groupId") or group, text(child, "artifactId"),
                       text(child, "version") or version, text(child, "packaging") or "jar")
        (excluded if coordinates[1] in NOT_PUBLISHED else published).append(coordinates)
    return published, excluded


def base_name(directory, artifact, version):
    """The file name stem of the deployed files: artifactId-version, the snapshot's unique version for a snapshot."""
    if not version.endswith("-SNAPSHOT"):
        return f"{artifact}-{version}"
    metadata = directory / "maven-metadata.xml"
    if not metadata.is_file():
        problem(f"{artifact}: no maven-metadata.xml for the snapshot in {directory.name}/")
        return None
    root = ET.parse(metadata).getroot()
    value = root.findtext("versioning/snapshotVersions/snapshotVersion/value")
    return f"{artifact}-{value}" if value else None


def check_file(path, label):
    """The file exists, its signature verifies and its checksums match."""
    if not path.is_file():
        problem(f"{label}: missing {path.name}")
        return False
    data = path.read_bytes()
    for algorithm in ("md5", "sha1"):
        checksum = path.with_name(path.name + "." + algorithm)
        if not checksum.is_file():
            problem(f"{label}: missing {checksum.name}")
        elif checksum.read_text().split()[0].lower() != hashlib.new(algorithm, data).hexdigest():
            problem(f"{label}: {checksum.name} does not match {path.name}")
    signature = path.with_name(path.name + ".asc")
    if not signature.is_file():
        problem(f"{label}: missing {signature.name}")
    else:
        verify = subprocess.run(["gpg", "--batch", "--verify", str(signature), str(path)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if verify.returncode != 0:
            problem(f"{label}: {signature.name} does not verify: {verify.stdout.strip().splitlines()[-1:]}")
    return True


def check_jar_holds(path, label, wanted, what):
    if path.is_file() and not any(name.endswith(wanted) for name in zipfile.ZipFile(path).namelist()):
        problem(f"{label}: {path.name} holds no {what}")


def check_metadata(deployed_pom, label, poms):
    root = pom(deployed_pom)
    for tag in ("name", "description"):
        if not text(root, tag):
            problem(f"{label}: the POM has no <{tag}>")
    parent = root.find("m:parent", NS)
    parent_root = poms.get(parent.findtext("m:artifactId", namespaces=NS)) if parent is not None else None
    for tag in CENTRAL_METADATA:
        if root.find("m:" + tag, NS) is None and (parent_root is None or parent_root.find("m:" + tag, NS) is None):
            problem(f"{label}: no <{tag}> in the POM nor in a published parent")


def main(project, repository):
    published, excluded = reactor(project)
    poms = {}
    for group, artifact, version, packaging in published:
        directory = repository / group.replace(".", "/") / artifact / version
        label = f"{artifact}:{version}"
        if not directory.is_dir():
            problem(f"{label}: not deployed (no {directory.relative_to(repository)}/)")
            continue
        stem = base_name(directory, artifact, version)
        if stem is None:
            continue
        if check_file(directory / f"{stem}.pom", label):
            poms[artifact] = pom(directory / f"{stem}.pom")
        if packaging != "pom":
            for suffix in (".jar", "-sources.jar", "-javadoc.jar"):
                check_file(directory / f"{stem}{suffix}", label)
            check_jar_holds(directory / f"{stem}-sources.jar", label, ".java", "Java source")
            check_jar_holds(directory / f"{stem}-javadoc.jar", label, "index.html", "index.html")
        # Every other deployed file (test-jar, the sandbox's CLI jar) is signed and summed too.
        for extra in sorted(directory.glob(f"{stem}-*")):
            if extra.suffix in (".jar", ".pom") and extra.name not in (f"{stem}-sources.jar", f"{stem}-javadoc.jar"):
                check_file(extra, label)
    for group, artifact, version, _ in published:
        directory = repository / group.replace(".", "/") / artifact / version
        stem = base_name(directory, artifact, version) if directory.is_dir() else None
        if stem and (directory / f"{stem}.pom").is_file():
            check_metadata(directory / f"{stem}.pom", f"{artifact}:{version}", poms)
    for group, artifact, _, _ in excluded:
        if (repository / group.replace(".", "/") / artifact).exists():
            problem(f"{artifact}: deployed, but it is not a published module")
    print(f"release layout: {len(published)} published modules checked, {len(excluded)} kept out "
          f"({', '.join(a for _, a, _, _ in excluded)}), {len(problems)} problems")
    return min(len(problems), 100)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
