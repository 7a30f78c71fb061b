"""Packaging (issue 10 §1): one import namespace ``caishen``, nothing installed under bare names.

- the packages ``pyproject.toml`` lists are exactly the folders with an
  ``__init__.py`` (under their ``caishen.*`` names), so none is left out of a
  wheel;
- no code, test, benchmark or notebook imports the bare ``sim`` / ``envs`` /
  ``agents``;
- ``pip install .`` (not editable) into a fresh virtual environment, then
  in a folder holding a user's own packages named like our folders (agents,
  envs): importing ``caishen.envs``, ``caishen.agents`` and the user's two
  gives each the right one, the bare name of our engine folder finds
  nothing, and the installed ``caishen rules`` reads the rule reference
  shipped as package data;
- a wheel built offline with ``python -m build`` (issue 45 item 3) installs
  into a fresh venv, and its ``caishen --version`` and ``caishen rules
  K-2.5`` run; its version is ``caishen.__version__``, the one version
  source, and it carries the LICENSE.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _copy_sources(dest: Path) -> Path:
    """The files a build reads, copied (setuptools builds inside the source tree: a stale build/ there
    could leak removed modules into the wheel)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "build", "*.egg-info")
    for name in ("caishen", "sim", "envs", "agents", "docs"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, dest / name)
    return dest


def test_license_is_an_spdx_expression_and_the_build_backend_reads_it():
    """PEP 639: ``project.license`` is an SPDX string (the TOML table form is deprecated), which needs
    setuptools >= 77 to build."""
    doc = _pyproject()
    assert isinstance(doc["project"]["license"], str) and doc["project"]["license"] == "MIT"
    assert "setuptools>=77" in doc["build-system"]["requires"]


def test_every_rule_set_ships_its_bots_data_files():
    """A rule set's package data takes its tuned weights and its learned bot (``tuned.json``,
    ``learned.npz``: ``tuned:NAME`` / ``learned:NAME``), so a file added to its folder ships in a wheel."""
    data = _pyproject()["tool"]["setuptools"]["package-data"]
    for folder in sorted((ROOT / "sim" / "rules").iterdir()):
        if (folder / "__init__.py").is_file() and (folder / "options.py").is_file():  # a rule set's package
            assert {"*.json", "*.npz"} <= set(data.get(f"caishen.sim.rules.{folder.name}", [])), folder.name


def test_listed_packages_are_the_package_folders():
    st = _pyproject()["tool"]["setuptools"]
    mapping = st["package-dir"]
    assert mapping == {"caishen": "caishen", "caishen.sim": "sim", "caishen.envs": "envs",
                       "caishen.agents": "agents", "caishen.rules_docs": "docs/rules"}
    found = set()
    for name, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder).parts
            if not {".venv", "__pycache__"} & set(rel):
                found.add(".".join((name, *rel)))
    assert set(st["packages"]) == found
    assert not any(p.split(".")[0] in ("sim", "envs", "agents") for p in st["packages"])
    assert _pyproject()["project"]["scripts"]["caishen"] == "caishen.cli:command"


def test_nothing_imports_the_bare_names():
    bare = re.compile(r"^\s*(from|import) (sim|envs|agents)\b(?!\.)", re.M)
    bad = []
    for folder in ("sim", "envs", "agents", "tests", "benchmarks", "notebooks", "caishen"):
        for p in (ROOT / folder).rglob("*.py"):
            if ".venv" not in p.parts and bare.search(p.read_text(encoding="utf-8")):
                bad.append(str(p.relative_to(ROOT)))
    assert not bad, f"bare sim / envs / agents imports in {bad}"


def test_pip_install_next_to_a_users_own_agents_and_envs(tmp_path):
    """A non-editable install beside a project with its own ``agents/`` and ``envs/`` (issue 10 "Done when")."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the test environment's dependencies (numpy, numba, gymnasium, ...) without its editable caishen
    (Path(site) / "test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    src = _copy_sources(tmp_path / "src")  # install from a copy of the sources
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-v", str(src)],  # -v: the backend's warnings
                       capture_output=True, text=True)
    if r.returncode != 0 and "Could not find a version that satisfies the requirement setuptools" in r.stderr:
        pytest.skip("no package index for the build requirements (setuptools) in this environment")
    assert r.returncode == 0, r.stderr[-3000:]
    # the SPDX string form of project.license: no "`project.license` as a TOML table is deprecated" (it stops
    # building after 2027-02-18), nor any other deprecation setuptools reports about pyproject.toml
    assert "SetuptoolsDeprecationWarning" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]

    project = tmp_path / "project"  # a user's project, with folders named like ours
    for name in ("agents", "envs", "sim_user"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f"WHO = {name!r}\n")
    code = (
        "import json, caishen.envs, caishen.agents, agents, envs\n"
        "from caishen.sim.ruledocs import pages, rule_text\n"
        "from caishen.sim.bots.registry import load_tuned, tuned_path\n"
        "try:\n    import sim\n    bare = sim.__file__\nexcept ImportError:\n    bare = None\n"
        "print(json.dumps({'agents': agents.WHO, 'envs': envs.WHO, 'bare_sim': bare,\n"
        "    'caishen.agents': caishen.agents.__file__, 'caishen.envs': caishen.envs.__file__,\n"
        "    'pages': sorted(pages()), 'k25': rule_text('K-2.5'),\n"
        "    'tuned': str(tuned_path('jiating')), 'tuned_rules': load_tuned('jiating')[1]['rules']}))\n"
    )
    env = dict(os.environ, CAISHEN_CACHE=str(tmp_path / "cache"))
    env.pop("PYTHONPATH", None)
    env.pop("NUMBA_CACHE_DIR", None)
    r = subprocess.run([str(py), "-c", code], cwd=project, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["agents"] == "agents" and got["envs"] == "envs"  # the user's own packages
    assert got["bare_sim"] is None  # nothing installed as `sim`
    for name in ("caishen.agents", "caishen.envs"):
        assert got[name].startswith(site), (name, got[name])  # the installed copy, not the repository
    assert got["pages"] == ["README.md", "jiating.md", "kaihua.md"]
    assert got["k25"].startswith("- **K-2.5**")
    assert got["tuned"].startswith(site) and got["tuned_rules"] == "jiating"  # tuned:NAME weights ship as data
    r = subprocess.run([str(venv / "bin" / "caishen"), "rules", "P27"], cwd=project, capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0 and "绝张子" in r.stdout, r.stderr[-2000:]


@pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")
def test_make_run_and_make_test_set_up_the_venv_then_run_what_the_readme_says(tmp_path):
    """Issue 28 item 4: ``make run`` / ``make test`` create the venv when it is missing, install (the package;
    ``.[dev]``), then run the README's long-form commands; an existing, installed venv is only used; the README's
    Quick start shows both, and ``.ci/run`` runs ``make test``."""
    venv = tmp_path / "venv"

    # not the variables of a `make test PYTEST_ARGS=...` that runs this suite: make passes them down, in
    # MAKEFLAGS and as environment variables of their own
    makefile_vars = ("PYTHON", "VENV", "RUN_ARGS", "PYTEST_ARGS")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", *makefile_vars)}

    def dry(target: str) -> list[str]:
        p = subprocess.run(["make", "-n", "-C", str(ROOT), target, f"VENV={venv}"], capture_output=True, text=True,
                           env=env)
        assert p.returncode == 0, p.stderr
        return [line.strip() for line in p.stdout.splitlines() if not line.startswith("make")]

    run, test = dry("run"), dry("test")
    for steps, install, last in ((run, f"{venv}/bin/python -m pip install -e .", f"{venv}/bin/caishen simulate "
                                  "--rules kaihua --games 100000 --seed 7 --out runs/k1"),
                                 (test, f'{venv}/bin/python -m pip install -e ".[dev]"', f"{venv}/bin/python -m pytest")):
        assert steps[0] == f"python3 -m venv {venv}" and install in steps and steps[-1] == last, steps
    # with the venv there and installed after the last change of pyproject.toml: nothing but the command
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    for marker in (".installed", ".installed-dev"):
        (venv / marker).write_text("")
    assert dry("run") == [run[-1]] and dry("test") == [test[-1]]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "make run" in quick and "make test" in quick
    assert "caishen simulate --rules kaihua --games 100000 --seed 7 --out runs/k1" in quick  # the long form
    assert "pip install -e \".[dev]\"" in quick and "python -m pytest" in quick
    assert re.search(r"^make test$", (ROOT / ".ci" / "run").read_text(), re.M)


def _build_backend_missing() -> str | None:
    """Why this environment cannot build a wheel without downloading anything, or None."""
    import importlib.metadata as md

    for dist, least in (("build", (1, 2)), ("setuptools", (77,)), ("wheel", (0,))):
        try:
            version = md.version(dist)
        except md.PackageNotFoundError:
            return f"{dist} is not installed (the [dev] extra has it)"
        if tuple(int(x) for x in re.findall(r"\d+", version)[:len(least)]) < least:
            return f"{dist} {version} is older than {'.'.join(map(str, least))}"
    return None


@pytest.mark.wheel
def test_a_wheel_built_offline_installs_into_a_fresh_venv_and_runs(tmp_path):
    """``python -m build --wheel --no-isolation`` (the build backend of this environment: nothing is
    downloaded), then ``pip install --no-deps --no-index`` into a fresh venv whose dependencies come from
    this environment's site-packages (a .pth line), not from its editable caishen."""
    import caishen

    missing = _build_backend_missing()
    if missing:
        pytest.skip(f"cannot build a wheel offline here: {missing}")
    src = _copy_sources(tmp_path / "src")
    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(src)],
                       capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    (wheel,) = dist.glob("caishen-*.whl")
    assert wheel.name.startswith(f"caishen-{caishen.__version__}-py3-none-any"), wheel.name
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = f"caishen-{caishen.__version__}.dist-info"
        assert f"{info}/licenses/LICENSE" in names, sorted(n for n in names if ".dist-info/" in n)
        metadata = z.read(f"{info}/METADATA").decode()
    assert re.search(rf"^Version: {re.escape(caishen.__version__)}$", metadata, re.M)
    assert re.search(r"^License-Expression: MIT$", metadata, re.M)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # numpy, numba, ...
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check",
                        str(wheel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]

    env = dict(os.environ, CAISHEN_CACHE=str(tmp_path / "cache"))
    for name in ("PYTHONPATH", "NUMBA_CACHE_DIR"):
        env.pop(name, None)
    caishen_bin = str(venv / "bin" / "caishen")
    r = subprocess.run([caishen_bin, "--version"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip() == f"caishen {caishen.__version__}", r.stdout + r.stderr[-2000:]
    r = subprocess.run([caishen_bin, "rules", "K-2.5"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.startswith("- K-2.5 "), (r.stdout, r.stderr[-2000:])
    assert "财神" in r.stdout
    r = subprocess.run([str(py), "-c", "import caishen; print(caishen.__file__)"], cwd=tmp_path, capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip().startswith(site), r.stdout + r.stderr  # the wheel's copy


def test_one_version_source():
    """The version is written once, in ``caishen/__init__.py``; pyproject.toml reads it (dynamic)."""
    project = _pyproject()["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert _pyproject()["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "caishen.__version__"}
    text = (ROOT / "caishen" / "__init__.py").read_text(encoding="utf-8")
    assert len(re.findall(r"^__version__ = \"\d+\.\d+\.\d+\"$", text, re.M)) == 1
