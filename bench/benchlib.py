"""Helpers shared by the benchmark scripts (stdlib only)."""
import os
import platform
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SHARED = REPO.parent / "shared"
DEFAULT_DATA = Path("/tmp/tern-bench-data")
DEFAULT_TERN = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache/tern-target")) / "release/tern"
DEFAULT_VENV = Path(os.environ.get("TERN_BENCH_VENV", Path.home() / ".cache/tern-bench-venv"))
DEFAULT_PEER_PYTHON = DEFAULT_VENV / "bin/python"


def decompress(src: Path, dst: Path) -> None:
    """zstd-decompress src to dst, through a temporary name so that an
    interrupted run never leaves a truncated dst behind."""
    tmp = dst.with_name(dst.name + ".tmp")
    # --long=27: the shared files use a 128 MiB window, which zstd refuses by default.
    subprocess.run(["zstd", "-q", "-d", "--long=27", "-f", "-o", str(tmp), str(src)], check=True)
    tmp.rename(dst)


def tool_version(cmd: list[str]) -> str | None:
    """The stripped stdout of cmd, or None if it cannot run or fails."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None


def git_commit() -> str | None:
    return tool_version(["git", "-C", str(BENCH), "rev-parse", "HEAD"])


def machine() -> dict:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), None)
    mem = next((int(l.split()[1]) * 1024 for l in open("/proc/meminfo") if l.startswith("MemTotal")), None)
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_bytes": mem, "kernel": platform.release()}


def stop_on_sigterm() -> None:
    """SIGTERM stops a benchmark like Ctrl-C does: the servers it started are
    stopped by their context managers' exits."""
    def interrupt(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def find_java() -> Path | None:
    """A Java 21+ for Fuseki: the Temurin JDK beside the default java 17."""
    for d in sorted(Path("/usr/lib/jvm").glob("temurin*"), reverse=True):
        if (d / "bin/java").exists():
            return d / "bin/java"
    return None


def find_fuseki_jar() -> Path | None:
    """The newest jena-fuseki-server jar in ~/.m2 (PEERS.md's mvn dependency:get)."""
    def version(p: Path):
        return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.-]", p.parent.name))
    jars = sorted((Path.home() / ".m2/repository/org/apache/jena/jena-fuseki-server").glob("*/jena-fuseki-server-*.jar"),
                  key=version)
    return jars[-1] if jars else None


def fetch_fuseki_jar() -> Path | None:
    """find_fuseki_jar(), after fetching the newest release from Maven Central when ~/.m2 has none."""
    if jar := find_fuseki_jar():
        return jar
    subprocess.run(["mvn", "-q", "dependency:get", "-Dartifact=org.apache.jena:jena-fuseki-server:RELEASE",
                    "-Dtransitive=false"], check=True)
    return find_fuseki_jar()


def fuseki_version(jar: Path) -> str:
    """The release in the jar's name (jena-fuseki-server-6.2.0.jar: 6.2.0); asking the server costs a JVM start."""
    return jar.stem.removeprefix("jena-fuseki-server-")


def tdb2_load(java: Path, jar: Path, heap: str, location: Path, nt: Path) -> float:
    """A fresh TDB2 store of nt at location with tdbloader's parallel loader (PEERS.md);
    its wall-clock seconds."""
    shutil.rmtree(location, ignore_errors=True)
    t = time.monotonic()
    subprocess.run([str(java), f"-Xmx{heap}", "-cp", str(jar), "tdb2.tdbloader", "--loader=parallel",
                    f"--loc={location}", str(nt)], check=True, capture_output=True)
    return round(time.monotonic() - t, 2)


def fuseki_command(java: Path, jar: Path, heap: str, port: int, location: Path, timeout_s: float) -> list[str]:
    """Fuseki serving the TDB2 store at location, read-only, as /ds (endpoint /ds/sparql) on
    localhost. --timeout (ms), a single value, limits each query's whole execution: past it
    an answer not begun is a 503, one already streaming is cut (200, then a comment line
    that no results parser accepts)."""
    return [str(java), f"-Xmx{heap}", "-jar", str(jar), "--localhost", f"--port={port}", f"--loc={location}",
            f"--timeout={int(timeout_s * 1000)}", "/ds"]
