"""Times in the user's zone: the pages show and read every instant in the zone chosen
at the top (the user's tz setting, else the browser's), and the server reads the
forms' wall times in it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.ui.conftest import Server
from tests.ui.test_browser import expect, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.slow


def rest(server: Server, method: str, path: str, **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {server.tokens['alice']}"}
    answer = httpx.request(method, server.url + path, headers=headers, **kwargs)
    assert answer.is_success, answer.text
    return answer.json()


def test_the_booking_form_takes_wall_times_in_the_users_zone(
    browser: Browser, server: Server
) -> None:
    rest(server, "PATCH", "/v1/me", json={"tz": "Europe/Paris"})
    # The browser is elsewhere: the user's setting wins.
    page = browser.new_context(timezone_id="America/New_York").new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sent: list[Any] = []
    page.on(
        "request",
        lambda r: (
            sent.append(r.post_data_json) if r.method == "POST" and "/v1/res" in r.url else None
        ),
    )
    sign_in(page, server, "alice")
    expect(page.locator("#zone")).to_have_value("Europe/Paris")

    paris = ZoneInfo("Europe/Paris")
    day = (datetime.now(paris) + timedelta(days=2)).date()
    page.goto(server.url + "/#/book")
    expect(page.locator("label[for=b-start]")).to_have_text("Start (Europe/Paris)")
    page.fill("#b-bw", "10")
    page.fill("#b-start", f"{day}T11:00")
    page.fill("#b-end", f"{day}T12:30")
    page.wait_for_selector("#slots rect.slot")
    page.click("#b-submit")
    page.wait_for_selector("#booked-link")
    booked_id = (page.get_attribute("#booked-link", "href") or "").rsplit("/", 1)[-1]
    expect(page.locator("#result")).to_contain_text(f"{day} 11:00 Europe/Paris")

    stored = rest(server, "GET", f"/v1/reservations/{booked_id}")
    eleven = datetime(day.year, day.month, day.day, 11, tzinfo=paris).astimezone(UTC)
    assert stored["start"] == eleven.isoformat().replace("+00:00", "Z")
    # The wall time and the zone went as they are: the server read them.
    assert (sent[0]["start"], sent[0]["end"]) == (
        f"{day}T11:00 Europe/Paris",
        f"{day}T12:30 Europe/Paris",
    )

    # Another zone: the same instant shown there, named.
    page.select_option("#zone", "America/Chicago")
    page.goto(server.url + f"/#/reservations/{booked_id}")
    chicago = eleven.astimezone(ZoneInfo("America/Chicago"))
    expect(page.locator("main")).to_contain_text(f"{chicago:%Y-%m-%d %H:%M} America/Chicago")
    assert errors == []


def test_without_a_setting_the_page_uses_the_browsers_zone(
    browser: Browser, server: Server
) -> None:
    page = browser.new_context(timezone_id="Asia/Tokyo").new_page()
    sign_in(page, server, "alice")
    expect(page.locator("#zone")).to_have_value("Asia/Tokyo")
    page.goto(server.url + "/#/book")
    expect(page.locator("label[for=b-end]")).to_have_text("End (Asia/Tokyo)")
    # The refusal the server writes names its instants in the page's zone too.
    page.fill("#b-bw", "500")
    page.wait_for_selector("#max-bw")
    page.click("#b-submit")
    page.wait_for_selector("button.alt")
    expect(page.locator("#result")).to_contain_text("JST (+09:00)")
