"""The package installs what it serves: the sdist and the wheel carry templates/ and static/,
and an installed wheel serves the sign-in and chat pages from outside the checkout."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import tomllib
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {"webapp.templates": "templates", "webapp.static": "static"}

# Run by the installed wheel's interpreter, in a folder outside the checkout.
_SERVE = textwrap.dedent(
    """
    import re, sys
    from pathlib import Path

    import webapp
    from webapp import create_app
    from webapp.store.app_db import get_engine
    from webapp.store.demo import seed_demo
    from webapp.store.migrate import upgrade_database

    print("package", Path(webapp.__file__).resolve().parent)
    here = Path.cwd()
    app = create_app({"SECRET_KEY": "test", "ANTHROPIC_API_KEY": None,
                      "DATABASE_URL": f"sqlite:///{here / 'db.sqlite'}"})
    print("templates", Path(app.template_folder).resolve())
    with app.app_context():
        upgrade_database(get_engine(app))
        seed_demo(get_engine(app), "demo")
    client = app.test_client()
    login = client.get("/login")
    print("login", login.status_code)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', login.text)
    signed = client.post("/login", data={"username": "demo", "password": "demo",
                                         "csrf_token": token[1] if token else ""})
    print("signed", signed.status_code)
    chat = client.get("/", follow_redirects=True)
    print("chat", chat.status_code, '<textarea id="message" name="message"' in chat.text)
    print("script", client.get("/static/app.js").status_code)
    """
)


def _build(backend_call: str, source: Path, out: Path) -> Path:
    """Run one PEP 517 hook of setuptools (offline, no build isolation) in `source`."""
    out.mkdir(exist_ok=True)
    code = f"from setuptools import build_meta; print(build_meta.{backend_call}({str(out)!r}))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=source, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out / done.stdout.strip().splitlines()[-1]


def _tree(into: Path) -> Path:
    """Copy the checkout's files (tracked and new, not ignored) to `into`, as a clone has them."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return into


def test_pyproject_lists_every_package_and_ships_templates_and_static() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    # Every folder with an __init__.py under webapp/ (what setuptools' find_packages finds).
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "webapp").rglob("__init__.py")
    }
    assert set(tool["packages"]) == found | set(SHIPPED)
    assert tool["package-dir"] == SHIPPED


def test_an_installed_wheel_serves_the_chat_page_from_outside_the_checkout(
    tmp_path: Path,
) -> None:
    source = _tree(tmp_path / "source")
    sdist = _build("build_sdist", source, tmp_path / "dist")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        archive.extractall(tmp_path / "unpacked", filter="data")
    top = names[0].split("/")[0]
    assert f"{top}/templates/chat.html" in names
    assert f"{top}/static/app.js" in names

    # The wheel is built from the sdist: what the sdist lacks, the wheel would lack too.
    wheel = _build("build_wheel", tmp_path / "unpacked" / top, tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        inside = set(archive.namelist())
    assert {"webapp/templates/chat.html", "webapp/templates/login.html"} <= inside
    assert {"webapp/static/app.js", "webapp/static/icons/generic.svg"} <= inside
    assert "webapp/store/demo_spending.toml" in inside  # the demo's rows are data, read at import
    assert not [name for name in inside if name.startswith(("templates/", "static/"))]

    # A fresh environment: the wheel installed into it, the locked dependencies seen through
    # a .pth file naming this interpreter's site-packages (whose editable finder is not run).
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
        + ["--target", str(purelib), str(wheel)],
        check=True,
        capture_output=True,
    )
    (purelib / "locked_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    served = subprocess.run(
        [python, "-c", _SERVE],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(elsewhere)},
        check=False,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    said = dict(line.split(" ", 1) for line in served.stdout.splitlines())
    assert Path(said["package"]).is_relative_to(purelib)
    assert Path(said["templates"]).is_relative_to(purelib)
    assert said["login"] == "200"
    assert said["signed"] in ("302", "303")
    assert said["chat"] == "200 True"
    assert said["script"] == "200"
