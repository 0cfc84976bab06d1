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


def test_the_favicon_exists_and_every_page_names_it(client) -> None:  # type: ignore[no-untyped-def]
    from django.contrib.staticfiles import finders

    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"].endswith("favicon.ico")
    path = finders.find("favicon.ico")
    assert path
    with open(path, "rb") as icon:
        data = icon.read()
    # An ICO file (reserved 0, type 1, one image) holding a 32×32 PNG.
    assert data[:6] == b"\x00\x00\x01\x00\x01\x00"
    assert data[6:8] == b"\x20\x20"
    assert data[22:30] == b"\x89PNG\r\n\x1a\n"
    login = client.get("/login/").content.decode()
    assert 'rel="icon"' in login
