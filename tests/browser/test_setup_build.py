"""In a real Chromium, with a real Celery worker: an organizer clicks "Build tasks" on the setup
page, which answers at once with the build queued; a worker takes it, and the page shows it
running with its progress and then done with the counts, without a reload by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from annotation.models import Item, System, Task
from tests.browser.annotator_pages import log_in
from tests.factories import make_config, make_user, make_wide_campaign
from tests.support.threads import rows_locked

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_setup_page_shows_a_build_queued_running_and_done(  # type: ignore[no-untyped-def]
    page, live_server, celery_worker_process, output_dir: Path
) -> None:
    owner = make_user("oskar", organizer=True)
    # 1,000 segments × 12 systems, one output a screen: 15,000 items, a build of seconds.
    campaign = make_wide_campaign(owner=owner, segments=1000, systems=12)
    config = make_config(
        campaign, "direct_assessment", name="DA wide", build=False, outputs_per_screen=1
    )
    shots = output_dir / "screenshots"
    shots.mkdir(exist_ok=True)

    log_in(page, live_server, "oskar", lands_on="**/campaigns/")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/annotation/")
    page.click("#protocols button:has-text('Build tasks')")
    page.wait_for_selector(".messages")
    assert "Build queued" in page.inner_text(".messages")
    row = f"#build-{config.pk}"
    assert page.inner_text(f"{row} [data-build-field=status]") == "Queued"
    assert "Waiting for a worker." in page.inner_text(row)
    page.screenshot(path=shots / "setup-build-queued.png", full_page=True)

    # No worker was running: the build waited. One starts, and the page follows it. The build
    # writes its items, then waits at its first output for the systems held here: the page sees
    # it running with its progress, however fast the host builds.
    with rows_locked(System.objects.filter(campaign=campaign)):
        celery_worker_process()
        page.wait_for_function(
            "(row) => { const bar = document.querySelector(row + ' progress');"
            " return bar && !bar.hidden && bar.value > 0; }",
            arg=row,
            timeout=60_000,
        )
        assert page.inner_text(f"{row} [data-build-field=status]") == "Running"
        assert "Writing items:" in page.inner_text(row)
        page.locator("#protocols").screenshot(path=shots / "setup-build-running.png")

    page.wait_for_function(
        "(row) => (document.querySelector(row) || {}).dataset?.buildStatus === 'done'",
        arg=row,
        timeout=120_000,
    )
    page.wait_for_load_state()
    n_tasks = Task.objects.filter(config=config).count()
    n_items = Item.objects.filter(task__config=config).count()
    assert n_items == 15000
    # Counts with thousands separators, as on every page.
    page.wait_for_selector(f"{row}:has-text('Built {n_tasks:,} tasks with {n_items:,} items.')")
    assert page.inner_text(f"#config-{config.pk} td:nth-child(5)").strip() == "15,000"
    # The page reloaded by itself: the protocol now links to its tasks, offered for a rebuild.
    page.wait_for_selector("#protocols a:has-text('DA wide')")
    assert page.locator("#protocols button:has-text('Rebuild tasks')").count() == 1
    page.screenshot(path=shots / "setup-build-done.png", full_page=True)
