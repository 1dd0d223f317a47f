"""`python -m devhost.package` (`make package`): the zip to deploy, with the locked dependencies inside.

The package is exactly the tracked files `.funcignore` keeps, plus every locked dependency installed as a
wheel for the Functions image (CPython 3.11, Linux x86_64) into `.python_packages/lib/site-packages`,
where the Python worker looks first. Deployed with zip deploy and no remote build, the app runs on the
versions `requirements.lock` pins, transitive ones too (a remote build would resolve `requirements.txt`
afresh). tests/infra/test_deployment_package.py checks both halves: the copy imports the whole app alone,
and the install resolves to wheels only.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pathspec

ROOT = Path(__file__).resolve().parent.parent
SITE_PACKAGES = Path(".python_packages/lib/site-packages")

# The Functions Python 3.11 images run Debian 12 (glibc 2.36): manylinux2014 and manylinux_2_28 wheels both
# load there, and numpy 2.4 ships only the latter.
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_28_x86_64")


def packaged_files(root: Path = ROOT) -> list[str]:
    """The tracked files `.funcignore` leaves in, relative to `root`."""
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    ignore = pathspec.PathSpec.from_lines("gitignore", (root / ".funcignore").read_text().splitlines())
    return [f for f in tracked.splitlines() if f and not ignore.match_file(f)]


def copy_package(target: Path, root: Path = ROOT) -> list[str]:
    files = packaged_files(root)
    for name in files:
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, destination)
    return files


def wheel_install_command(*extra: str, root: Path = ROOT) -> list[str]:
    """pip installing requirements.txt at the lock's versions, wheels only, for the Functions image."""
    platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
    return [
        sys.executable, "-m", "pip", "install", "--quiet", "--only-binary=:all:", *platforms,
        "--python-version", "3.11", "--implementation", "cp",
        "-r", str(root / "requirements.txt"), "-c", str(root / "requirements.lock"), *extra,
    ]  # fmt: skip


def build(out: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="firebreak-package-") as tmp:
        stage = Path(tmp) / "package"
        files = copy_package(stage)
        subprocess.run(wheel_install_command("--target", str(stage / SITE_PACKAGES)), check=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        archive = shutil.make_archive(str(out.with_suffix("")), "zip", stage)
        print(
            f"{archive}: {len(files)} app files + the locked dependencies ({Path(archive).stat().st_size // 2**20} MB)"
        )
        return Path(archive)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="devhost.package", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "firebreak.zip", help="the zip to write")
    args = parser.parse_args(argv)
    archive = build(args.out.resolve())
    print(
        "deploy: az functionapp deployment source config-zip -g <resource group> -n <app>"
        f" --src {archive} --build-remote false"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
