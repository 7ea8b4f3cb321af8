"""The web interface in a real browser against a real `braid serve`.

A user signs in, sees the map, books through the form (and takes an
alternative after a 409), finds the booking on the timeline, opens it and
cancels it; an operator books a maintenance window. Every request the page
makes must go to the server itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.ui.conftest import SHOTS, Server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.slow


def expect(locator: Any) -> Any:
    # Imported late: without Playwright the fixtures skip before this runs.
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def shot(page: Page, name: str) -> None:
    """Screenshots for the docs, when BRAID_UI_SHOTS names a folder."""
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def sign_in(page: Page, server: Server, who: str) -> None:
    page.goto(server.url + "/")
    page.fill("#token", server.tokens[who])
    page.click("#sign-in")
    page.wait_for_selector("svg.map")


def book_from_form(page: Page, bandwidth: str) -> None:
    page.goto(page.url.split("#")[0] + "#/book")
    page.select_option("#b-src", "ORNL")
    page.select_option("#b-dst", "NERSC")
    page.fill("#b-bw", bandwidth)
    page.select_option("#b-unit", "G")
    # The preview answers as the user types: slots drawn, the most that fits said.
    page.wait_for_selector("#slots rect.slot")
    # (A locator, not wait_for_function: the page's CSP forbids evaluating strings.)
    expect(page.locator("#max-bw")).to_contain_text("At most")
    page.click("#b-submit")


def test_a_user_books_sees_and_cancels_and_an_operator_books_maintenance(
    browser: Browser, server: Server
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    sign_in(page, server, "alice")
    assert page.locator("svg.map g.node").count() == 14
    assert page.locator("svg.map path.link").count() == 18
    assert page.is_hidden("nav a[href='#/maintenance']")
    shot(page, "map")

    book_from_form(page, "10")
    shot(page, "book")
    page.wait_for_selector("#booked-link")
    reservation = page.get_attribute("#booked-link", "href") or ""
    booked_id = reservation.rsplit("/", 1)[-1]

    # 500 Gbit/s cannot fit: the refusal's alternatives are one click away.
    book_from_form(page, "500")
    page.wait_for_selector("button.alt")
    shot(page, "alternatives")
    page.click("button.alt >> nth=0")
    page.wait_for_selector("#booked-link")

    page.click("nav a[href='#/reservations']")
    page.wait_for_selector(f"svg.gantt g.bar[data-id='{booked_id}']")
    assert page.locator("svg.gantt g.bar").count() == 2
    shot(page, "reservations")
    page.click(f"svg.gantt g.bar[data-id='{booked_id}']")
    page.wait_for_selector("#audit tbody tr")
    assert page.text_content("#state") == "reserved"
    assert page.locator("svg.map path.route").count() >= 1
    shot(page, "detail")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#cancel")
    expect(page.locator("#state")).to_have_text("cancelled")
    assert page.locator("#audit tbody tr").count() == 2

    page.click("#sign-out")
    sign_in(page, server, "olga")
    page.click("nav a[href='#/maintenance']")
    page.select_option("#mt-target", "link:DENV-SUNN")
    page.fill("#mt-reason", "fibre splice")
    page.click("#mt-submit")
    page.wait_for_selector("#mt-list tbody tr")
    assert "fibre splice" in (page.text_content("#mt-list") or "")
    shot(page, "maintenance")
    page.goto(server.url + "/#/links/DENV-SUNN")
    page.wait_for_selector("svg.chart rect.maintenance")
    shot(page, "link")

    assert errors == []
    outside = [url for url in requested if not url.startswith(server.url + "/")]
    assert outside == [], outside


def test_a_user_token_sees_no_operator_page(browser: Browser, server: Server) -> None:
    page = browser.new_page()
    sign_in(page, server, "alice")
    page.goto(server.url + "/#/maintenance")
    page.wait_for_selector("text=Maintenance windows are for operators")
    assert page.locator("#mt-submit").count() == 0


def test_a_phone_width_screen_shows_every_view(browser: Browser, server: Server) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    sign_in(page, server, "alice")
    for view, ready in (("#/book", "#slots rect.slot"), ("#/reservations", "h1")):
        page.goto(server.url + "/" + view)
        page.wait_for_selector(ready)
        # Nothing wider than the screen: no sideways scrolling of the page.
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "phone-book")


def test_bandwidths_read_right_in_every_form_the_api_gives(
    browser: Browser, server: Server
) -> None:
    page = browser.new_page()
    sign_in(page, server, "alice")
    forms = [20000, 20000.5, "20G", "20000", "500M", "2.5Gbps", "10 Gbit/s", "1.5T", "250k"]
    shown = page.evaluate(
        "async (forms) => { const fmt = await import('/ui/fmt.js'); return forms.map(fmt.bw); }",
        forms,
    )
    assert shown == [
        "20 Gbit/s",
        "20 Gbit/s",
        "20 Gbit/s",
        "20 Gbit/s",
        "500 Mbit/s",
        "2.5 Gbit/s",
        "10 Gbit/s",
        "1.5 Tbit/s",
        "0.25 Mbit/s",
    ]


def test_the_earliest_start_alternative_says_its_bandwidth(
    browser: Browser, server: Server
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, server, "alice")
    book_from_form(page, "50")  # the northern route full for the window
    page.wait_for_selector("#booked-link")
    book_from_form(page, "50")  # sent as "50G", and the alternatives echo it so
    earliest = page.locator("button.alt[data-kind='earliest_start']")
    expect(earliest).to_contain_text("Earliest start: 50 Gbit/s")
    for text in page.locator("button.alt").all_text_contents():
        assert "NaN" not in text and "bit/s" in text, text


# Every visible SVG text's size on the screen: its font size in the drawing's
# units times the drawing's scale there.
TEXT_SIZES = """() => [...document.querySelectorAll("svg text")]
  .filter((t) => t.getClientRects().length)
  .map((t) => {
    const m = t.getScreenCTM();
    return [t.textContent, parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b)];
  })"""
SETTLED = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def _smallest_text(page: Page) -> list[Any]:
    page.evaluate(SETTLED)  # the drawings' text sized for the screen (a resize observer)
    sizes = page.evaluate(TEXT_SIZES)
    assert sizes, "no text drawn"
    return min(sizes, key=lambda pair: pair[1])


def test_on_a_phone_the_booking_shows_in_view_and_drawings_keep_legible_text(
    browser: Browser, server: Server
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    sign_in(page, server, "alice")
    text, size = _smallest_text(page)
    assert size >= 10, f"map: {text!r} at {size:.1f} px"
    book_from_form(page, "10")
    page.wait_for_selector("#booked-link")
    page.evaluate(SETTLED)
    box = page.locator("#result").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844, box
    text, size = _smallest_text(page)
    assert size >= 10, f"where it fits: {text!r} at {size:.1f} px"
    page.click("#booked-link")
    page.wait_for_selector("#audit tbody tr")
    text, size = _smallest_text(page)
    assert size >= 10, f"reservation: {text!r} at {size:.1f} px"
    for view, ready in (("#/reservations", "svg.gantt g.bar"), ("#/links/ORNL-CHIC", "svg.chart")):
        page.goto(server.url + "/" + view)
        page.wait_for_selector(ready)
        text, size = _smallest_text(page)
        assert size >= 10, f"{view}: {text!r} at {size:.1f} px"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # A refusal and its alternatives show in view too.
    page.goto(server.url + "/#/book")
    page.fill("#b-bw", "500")
    expect(page.locator("#max-bw")).to_contain_text("At most")
    page.click("#b-submit")
    page.wait_for_selector("button.alt")
    page.evaluate(SETTLED)
    heading = page.locator("#result h2").bounding_box()
    assert heading is not None and heading["y"] >= 0, heading
    assert page.locator("button.alt >> nth=0").is_visible()
    box = page.locator("button.alt >> nth=0").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 844, box


def test_a_user_books_a_volume_and_sees_its_profile(browser: Browser, server: Server) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, server, "alice")
    page.goto(page.url.split("#")[0] + "#/book")
    page.select_option("#b-src", "ORNL")
    page.select_option("#b-dst", "NERSC")
    page.check("#b-volume")
    assert page.is_hidden("#b-bw") and page.is_visible("#b-deadline")
    page.fill("#b-vol", "2")
    page.select_option("#b-vol-unit", "TB")
    # The preview says when all of it would have moved.
    expect(page.locator("#max-bw")).to_contain_text("move by")
    page.click("#b-submit")
    page.wait_for_selector("#booked-link")
    page.click("#booked-link")
    page.wait_for_selector("#profile tbody tr.step-row")
    assert "Gbit/s" in (page.text_content("#profile") or "")
    assert page.locator("svg.map path.route").count() >= 1
    # Doubling the volume re-plans the rest: the page shows the new amount.
    expect(page.locator("#m-volume")).to_have_value("2TB")
    page.fill("#m-volume", "4TB")
    page.click("#modify-title ~ button[type=submit]")
    expect(page.locator("dl.facts")).to_contain_text("4 TB")
    assert errors == []
