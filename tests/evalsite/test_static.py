"""Static assets come from the project or from installed packages, never from a CDN; package
files are published one by one (plotly's bundle, not its whole data folder)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles import finders
from django.core.management import call_command


def test_plotlys_bundle_is_served_from_the_installed_package_and_nothing_else_of_it() -> None:
    found = finders.find("plotly/plotly.min.js")
    assert found is not None
    assert Path(found).parts[-3:] == ("plotly", "package_data", "plotly.min.js")
    assert (
        "Plotly" in Path(found).read_text(encoding="utf-8", errors="replace")[:5000]
        or Path(found).stat().st_size > 1_000_000
    )
    assert finders.find("plotly/widgetbundle.js") is None


def test_collectstatic_copies_the_bundle(tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    settings.STATIC_ROOT = tmp_path
    call_command("collectstatic", interactive=False, verbosity=0)
    assert (tmp_path / "plotly" / "plotly.min.js").stat().st_size > 1_000_000
    assert not (tmp_path / "plotly" / "widgetbundle.js").exists()
    assert (tmp_path / "css" / "evalsite.css").exists()
