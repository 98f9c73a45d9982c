"""Adds to the built engine layer the client libraries its channels need: ``make build`` runs it.

A redis or database channel needs a client library the engine itself does not
(``redis``, ``psycopg``: pyproject's ``signoff[redis]`` / ``signoff[database]``
extras). ``signoff check`` knows which channel needs which
(``signoff_dev.cli.check.channel_extras``); this installs exactly those into the
built layer (``.aws-sam/build/EngineLayer/python``) after sam build, from the pins
of ``layers/signoff/requirements-channels.txt``: a deployment with a redis channel
ships ``redis`` and no ``psycopg``, one with neither ships neither.

The wheels are the ones sam build takes for the layer's own requirements: for the
layer's runtime (its ``BuildMethod``, python3.13) and ``ARCH``, manylinux up to
Lambda's glibc or pure Python, never built here (``--only-binary``), each pin as
it is (``--no-deps``: the pins are the whole set). Then every installed
distribution's dependencies are checked against what the layer holds, under the
runtime's markers, so a pin list that forgot one fails the build instead of a
deployed send. A library the layer's ``requirements.txt`` already lists is left
to sam build; one an earlier run added for a channel no longer configured is
removed, so the layer holds only what the channels need now.

Usage: python dev/channel_libraries.py .aws-sam/build agents x86_64
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from email.parser import Parser
from pathlib import Path

import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from signoff.agents import AgentCatalog
from signoff_dev.cli.check import channel_extras, extra_requirements

# The agents' tools.py are imported to load them: no __pycache__ of this Python there.
sys.dont_write_bytecode = True

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "layers" / "signoff" / "requirements-channels.txt"
LAYER_REQUIREMENTS = ROOT / "layers" / "signoff" / "requirements.txt"
LAYER = "EngineLayer"

# What sam build accepts for each architecture (aws-lambda-builders' python_pip
# DependencyBuilder): pure Python, and manylinux up to python3.13's glibc 2.34.
PLATFORMS = {
    "x86_64": ["manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64",
               "manylinux_2_34_x86_64", "any"],
    "arm64": ["manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64",
              "manylinux_2_34_aarch64", "any"],
}  # fmt: skip
MACHINES = {"x86_64": "x86_64", "arm64": "aarch64"}
# Written into the .dist-info of each distribution this adds: only those are removed.
MARK = "SIGNOFF_CHANNEL_LIBRARY"


def pins(path: Path = PINS) -> dict[str, list[Requirement]]:
    """The pinned requirements of each extra, as the file's ``extra == "…"`` markers say."""
    found: dict[str, list[Requirement]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        requirement = Requirement(text)
        extras = re.findall(r"""extra\s*==\s*["']([^"']+)["']""", str(requirement.marker or ""))
        if len(extras) != 1:
            raise SystemExit(f'{path}: {text!r} names no one extra (… ; extra == "redis")')
        found.setdefault(extras[0], []).append(requirement)
    return found


def listed(path: Path = LAYER_REQUIREMENTS) -> set[str]:
    """The distributions sam build installs from the layer's own requirements."""
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if text:
            names.add(canonicalize_name(Requirement(text).name))
    return names


def runtime(build_dir: Path) -> tuple[Path, str]:
    """The built engine layer's ``python/`` and its Python version (``3.13``)."""
    # sam build writes the long form (Ref:, Fn::If:): plain YAML, no tags.
    template = yaml.safe_load((build_dir / "template.yaml").read_text(encoding="utf-8"))
    layer = template["Resources"][LAYER]
    method = str(layer["Metadata"]["BuildMethod"])
    version = method.removeprefix("python")
    if not re.fullmatch(r"3\.\d+", version):
        raise SystemExit(f"{LAYER}: BuildMethod {method!r} is no pythonX.Y")
    return build_dir / layer["Properties"]["ContentUri"] / "python", version


def installed(python: Path) -> dict[str, Path]:
    """Each distribution in ``python/`` by canonical name → its ``.dist-info``."""
    found = {}
    for info in python.glob("*.dist-info"):
        metadata = Parser().parsestr((info / "METADATA").read_text(encoding="utf-8"))
        found[canonicalize_name(metadata["Name"])] = info
    return found


def remove(python: Path, info: Path) -> None:
    """Delete a distribution's files (its RECORD's), then the folders left empty."""
    folders = set()
    for row in (info / "RECORD").read_text(encoding="utf-8").splitlines():
        relative = row.rsplit(",", 2)[0]
        path = python / relative
        if relative and path.resolve().is_relative_to(python.resolve()):
            path.unlink(missing_ok=True)
            folders.update(path.parents)
    shutil.rmtree(info, ignore_errors=True)
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        inside = folder.is_relative_to(python) and folder != python
        if inside and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def install(python: Path, requirements: list[Requirement], version: str, arch: str) -> None:
    """Install the pinned wheels for the runtime into ``python/``, next to sam build's."""
    abi = f"cp{version.replace('.', '')}"
    with tempfile.TemporaryDirectory(prefix="signoff-channel-libraries-") as scratch:
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                   "--only-binary=:all:", "--implementation", "cp", "--python-version", version,
                   "--abi", abi, "--abi", "abi3", "--abi", "none", "--target", scratch,
                   "--no-compile", "--disable-pip-version-check"]  # fmt: skip
        for platform in PLATFORMS[arch]:
            command += ["--platform", platform]
        # This interpreter's pip, with the pins of a file in this repository.
        subprocess.run([*command, *(str(r) for r in requirements)], check=True)  # noqa: S603
        for entry in sorted(Path(scratch).iterdir()):
            if entry.name == "bin":
                continue  # console scripts: nothing on Lambda runs them
            target = python / entry.name
            if target.exists():
                raise SystemExit(f"{LAYER}: {entry.name} is in the layer already (sam build's)")
            if entry.name.endswith(".dist-info"):
                (entry / MARK).write_text("added by dev/channel_libraries.py\n", encoding="utf-8")
            shutil.move(entry, target)


def unmet(python: Path, version: str, arch: str, wanted: dict[str, set[str]]) -> list[str]:
    """Each dependency of an added distribution (with its ``wanted`` extras) the layer lacks."""
    present = installed(python)
    environment = {
        "python_version": version,
        "python_full_version": f"{version}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": MACHINES[arch],
    }
    problems = []
    for name, extras in wanted.items():
        metadata = Parser().parsestr((present[name] / "METADATA").read_text(encoding="utf-8"))
        for line in metadata.get_all("Requires-Dist") or []:
            requirement = Requirement(line)
            marker = requirement.marker or Marker("python_version >= '0'")
            if not any(marker.evaluate({**environment, "extra": e}) for e in {"", *extras}):
                continue
            if canonicalize_name(requirement.name) not in present:
                problems.append(f"{name} needs {requirement} (add its pin to {PINS.name})")
    return problems


def add(build_dir: Path, agents: Path, arch: str) -> dict[str, list[str]]:
    """Install what the configured channels need; ``{requirement: [channel, …]}`` added."""
    if arch not in PLATFORMS:
        raise SystemExit(f"ARCH must be one of {', '.join(PLATFORMS)}, not {arch!r}")
    python, version = runtime(build_dir)
    pinned = pins()
    by_sam = listed()
    needed = channel_extras(AgentCatalog(agents))
    if missing := sorted(set(needed) - set(pinned)):
        raise SystemExit(f"{PINS}: no pins for the extra(s) {', '.join(missing)}")
    # What an earlier run added goes first: the channels may have changed since.
    for info in installed(python).values():
        if (info / MARK).exists():
            remove(python, info)
    chosen: dict[str, Requirement] = {}
    channels: dict[str, list[str]] = {}
    for extra, named in sorted(needed.items()):
        for requirement in pinned[extra]:
            name = canonicalize_name(requirement.name)
            if name in by_sam:
                continue
            chosen[name] = Requirement(f"{requirement.name}{requirement.specifier}")
            channels.setdefault(str(chosen[name]), []).extend(sorted(named))
    if chosen:
        install(python, list(chosen.values()), version, arch)
        # The extras signoff asks of each (psycopg[binary]), for their dependencies too.
        wanted = {name: set[str]() for name in chosen}
        for extra in needed:
            for text in extra_requirements(extra):
                requirement = Requirement(text)
                name = canonicalize_name(requirement.name)
                if name in wanted:
                    wanted[name] |= requirement.extras
        if problems := unmet(python, version, arch, wanted):
            raise SystemExit(f"{LAYER}: " + "; ".join(problems))
    return channels


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    added = add(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
    if not added:
        print(f"{LAYER}: no channel client library (no redis or database channel in {sys.argv[2]})")
    for requirement, names in added.items():
        print(f"{LAYER}: {requirement} for {', '.join(names)} ({sys.argv[3]})")
