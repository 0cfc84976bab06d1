"""EvalSite's version carries a digest of its running source, so results computed by other code
(a deployment under the same release number) are never taken for the current code's."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
import scipy
import trueskill

from evalcore.version import (
    CODE_PACKAGES,
    code_folders,
    code_stamp,
    evalsite_version,
    signature_version,
    source_digest,
)
from metrics import pipeline
from metrics.models import AnalysisJob, StatsChunk
from metrics.tasks import _job, analysis_chunk, analysis_start

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_digest_follows_the_python_sources_and_nothing_else(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    write(package / "__init__.py", "")
    write(package / "scores.py", "def score(x):\n    return x\n")
    write(package / "migrations" / "0001_initial.py", "operations = []\n")
    write(package / "notes.txt", "a note\n")
    first = source_digest([package])
    assert re.fullmatch(r"[0-9a-f]{12}", first)

    # Neither a migration, nor a file that is not Python, nor a byte-code cache is the code.
    write(package / "migrations" / "0001_initial.py", "operations = [1]\n")
    write(package / "notes.txt", "another note\n")
    write(package / "__pycache__" / "scores.cpython-311.pyc", "\0")
    assert source_digest([package]) == first

    write(package / "scores.py", "def score(x):\n    return x + 1\n")
    changed = source_digest([package])
    assert changed != first

    # The same bytes under another name are other code, and so is a new module.
    (package / "scores.py").rename(package / "score.py")
    assert source_digest([package]) not in (first, changed)
    (package / "score.py").rename(package / "scores.py")
    assert source_digest([package]) == changed
    write(package / "extra.py", "")
    assert source_digest([package]) != changed


def run_version(cwd: Path, script: str = "") -> str:
    """The version a fresh interpreter reports for the packages it imports from ``cwd``, after
    ``script``."""
    return (
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"{script}\nfrom evalcore.version import evalsite_version as v\nprint(v())",
            ],
            cwd=cwd,
            env={**os.environ, "EVALSITE_VAR_DIR": str(cwd / "var")},
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )


def copy_code(to: Path) -> None:
    for name in CODE_PACKAGES:
        shutil.copytree(ROOT / name, to / name, ignore=shutil.ignore_patterns("__pycache__"))


def test_a_copy_of_the_code_has_its_version_and_a_changed_copy_another(tmp_path: Path) -> None:
    """The code is found where Python imports it from: an identical copy elsewhere (as in a
    wheel or the Docker image) gives this process's version; one changed line gives another."""
    assert [folder.resolve() for folder in code_folders()] == [
        ROOT / name for name in CODE_PACKAGES
    ]
    copy_code(tmp_path)
    assert run_version(tmp_path) == evalsite_version()

    scores = tmp_path / "evalcore" / "scoring" / "lexical.py"
    scores.write_text(scores.read_text() + "\n# a fix\n")
    changed = run_version(tmp_path)
    release = evalsite_version().split("+")[0]
    assert changed.startswith(f"{release}+src.")
    assert changed != evalsite_version()


def test_a_process_names_the_code_it_started_with_not_what_is_on_disk_later(
    tmp_path: Path,
) -> None:
    """Django's start reads the version (``MetricsConfig.ready``): sources changed afterwards,
    as by an edit under a running server, are not the code the process runs."""
    copy_code(tmp_path)
    changed = tmp_path / "evalcore" / "scoring" / "lexical.py"
    edit = f"open({str(changed)!r}, 'a').write('# edited')"
    assert run_version(tmp_path, f"import django\ndjango.setup()\n{edit}") == evalsite_version()
    assert run_version(tmp_path) != evalsite_version()  # the edit is there for the next start


def test_every_folder_of_our_code_is_a_package_so_a_wheel_holds_all_of_it() -> None:
    """setuptools puts only packages (folders with ``__init__.py``) in the wheel the Docker
    image installs; a folder of modules without one would be in a checkout's digest only."""
    for folder in code_folders():
        for path in folder.rglob("*.py"):
            assert (path.parent / "__init__.py").is_file(), path


def test_lock_files_and_dangling_links_are_not_code(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    write(package / "__init__.py", "")
    first = source_digest([package])
    (package / ".#scores.py").symlink_to(tmp_path / "nowhere")  # an editor's lock file
    (package / "gone.py").symlink_to(tmp_path / "nowhere")
    assert source_digest([package]) == first
    write(package / "scores.py", "")
    assert source_digest([package]) != first


@pytest.mark.django_db
def test_an_analysis_is_fingerprinted_with_the_code_and_library_versions(campaign) -> None:  # type: ignore[no-untyped-def]
    assert re.fullmatch(r"[^+]+\+src\.[0-9a-f]{12}", evalsite_version())
    params = pipeline.analysis_params(campaign=campaign)
    assert params["version"] == evalsite_version()
    assert params["libraries"] == {
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "sacrebleu": sacrebleu.__version__,
        "trueskill": trueskill.__version__,
    }
    fingerprint = pipeline.campaign_fingerprint(campaign=campaign, params=params)
    assert pipeline.campaign_fingerprint(campaign=campaign, params=dict(params)) == fingerprint
    for other in (
        {**params, "version": evalsite_version().split("+")[0]},  # the release alone
        {**params, "libraries": {**params["libraries"], "numpy": "0.0.1"}},
    ):
        assert pipeline.campaign_fingerprint(campaign=campaign, params=other) != fingerprint

    # Results of the human analysis, jobs and our metrics' signatures name the same code, in one
    # wording (and the signature's field syntax).
    assert code_stamp() == (
        f"evalsite {evalsite_version()}; numpy {np.__version__}; sacrebleu "
        f"{sacrebleu.__version__}; scipy {scipy.__version__}; trueskill {trueskill.__version__}"
    )
    assert code_stamp(params["version"], params["libraries"]) == code_stamp()
    assert signature_version() == (
        f"evalsite-{evalsite_version()}+sacrebleu-{sacrebleu.__version__}"
    )


@pytest.mark.django_db(transaction=True)
def test_a_worker_running_other_code_fails_the_job_instead_of_computing_it(campaign) -> None:  # type: ignore[no-untyped-def]
    """During an upgrade, web and worker processes may run different code for a while: a job
    requested by one version and computed by another would be filed as the requester's."""
    params = pipeline.analysis_params(campaign=campaign)
    mine = AnalysisJob.objects.create(campaign=campaign, fingerprint="a" * 64, params=params)
    assert _job(str(mine.pk)) == mine

    running = (
        f"evalsite {evalsite_version()}; numpy {np.__version__}; sacrebleu "
        f"{sacrebleu.__version__}; scipy {scipy.__version__}; trueskill {trueskill.__version__}"
    )
    assert code_stamp(params["version"], params["libraries"]) == running
    requested = "0.1.0+src.000000000000"
    other = {**params, "version": requested}
    queued = AnalysisJob.objects.create(campaign=campaign, fingerprint="b" * 64, params=other)
    assert analysis_start.apply(args=(str(queued.pk),)).get() == 0
    under_way = AnalysisJob.objects.create(
        campaign=campaign,
        fingerprint="c" * 64,
        params=other,
        status=AnalysisJob.Status.RUNNING,
        stage=AnalysisJob.Stage.STATISTICS,
    )
    assert analysis_chunk.apply(args=(str(under_way.pk), 0, 10)).get() == 0
    # The same code with another numpy (an image rebuilt later, say) is other code too.
    numpy_other = {**params, "libraries": {**params["libraries"], "numpy": "0.0.1"}}
    rebuilt = AnalysisJob.objects.create(
        campaign=campaign, fingerprint="d" * 64, params=numpy_other
    )
    assert analysis_start.apply(args=(str(rebuilt.pk),)).get() == 0

    for job, code in (
        (queued, running.replace(evalsite_version(), requested)),
        (under_way, running.replace(evalsite_version(), requested)),
        (rebuilt, running.replace(f"numpy {np.__version__}", "numpy 0.0.1")),
    ):
        job.refresh_from_db()
        assert job.status == AnalysisJob.Status.FAILED
        assert job.error == (
            f"This analysis was requested by {code}, but a worker runs {running}: the web and "
            "worker processes run different code (an upgrade under way?). Request it again "
            "once they all run the same versions."
        )
        assert job.progress_total == 0
        assert not StatsChunk.objects.filter(job=job).exists()
