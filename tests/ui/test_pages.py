"""The pages added after the first version: multi-domain reservations, the topology's
versions and links' state, several links' utilisation at once; every page through
the accessibility check; and a user's token against every operator action."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from braid.adapters.free_ports import free_port
from braid.bootstrap.local_cluster import LocalCluster
from braid.testing.serving import wait_healthy
from tests.ui.a11y import contrast, focus_problems, problems
from tests.ui.conftest import BRAID, EXAMPLE, Server, make_token
from tests.ui.test_browser import expect, shot, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.slow

FIG6A = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "fig6a.yaml"


def auth(server: Server, who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.tokens[who]}"}


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def maintenance_now(server: Server, link: str, reason: str) -> dict[str, Any]:
    now = int(datetime.now(UTC).timestamp())
    window = {"link": link, "start": iso(now + 2), "end": iso(now + 3 * 3600), "reason": reason}
    done = httpx.post(server.url + "/v1/maintenance", json=window, headers=auth(server, "olga"))
    assert done.status_code == 201, done.text
    answer: dict[str, Any] = done.json()
    return answer


@pytest.fixture
def md_server(tmp_path: Path) -> Iterator[Server]:
    """`braid serve --domains` over the Fig. 6a agents (the server is their orchestrator)."""
    cluster = LocalCluster(FIG6A, tmp_path / "run")
    cluster.start_files_only()
    try:
        for domain in cluster.domains:
            cluster.start_agent(domain)
        database = f"sqlite:///{tmp_path / 'braid.db'}"
        tokens = {"alice": make_token(database, "alice", "user")}
        tokens["bob"] = make_token(database, "bob", "user")
        port = free_port()
        command = [
            str(BRAID), "serve", "--topology", str(EXAMPLE), "--database", database,
            "--host", "127.0.0.1", "--port", str(port), "--domains", str(cluster.file),
            "--negotiation-db", str(tmp_path / "negotiation.db"),
            "--peer-token-file", str(cluster.peer_token_file),
        ]  # fmt: skip
        with (tmp_path / "serve.log").open("w") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
            try:
                wait_healthy(f"http://127.0.0.1:{port}", process)
                yield Server(f"http://127.0.0.1:{port}", tokens, database)
            finally:
                process.terminate()
                process.wait(timeout=20)
    finally:
        cluster.stop()


def test_a_user_books_views_and_cancels_a_multi_domain_reservation(
    browser: Browser, md_server: Server
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, md_server, "alice")
    page.click("nav a[href='#/interdomain']")
    page.wait_for_selector("#x-form")
    assert page.locator("#x-domains tbody tr").count() == 9
    page.select_option("#x-src-domain", "site-a")
    page.select_option("#x-src-point", "a-dtn")
    page.select_option("#x-dst-domain", "site-c")
    page.select_option("#x-dst-point", "c-dtn")
    page.fill("#x-bw", "12")  # more than one WAN's 10 Gbit/s: split over both
    page.select_option("#x-strategy", "full-offers")
    page.click("#x-submit")
    page.wait_for_selector("#x-trace li")
    expect(page.locator("#x-status")).to_have_text("committed")
    assert page.locator("#x-paths-table tbody tr").count() == 2
    assert "re1" in (page.text_content("#x-holdings") or "")
    assert page.locator("svg.domain-paths rect.domain").count() >= 8
    shot(page, "interdomain-detail")
    rid = page.url.rsplit("/", 1)[-1]

    # Another user neither sees it listed nor can open it.
    other = browser.new_page()
    sign_in(other, md_server, "bob")
    other.goto(md_server.url + "/#/interdomain")
    other.wait_for_selector("#x-form")
    assert other.locator(f"a[href='#/interdomain/{rid}']").count() == 0
    other.goto(md_server.url + f"/#/interdomain/{rid}")
    expect(other.locator("p.error")).to_contain_text("no multi-domain reservation")
    assert other.locator("#x-cancel").count() == 0

    # A change that does not fit (more than both 10G cores): refused, nothing changes.
    before = page.text_content("#x-holdings")
    page.fill("#x-mod-bw", "25")
    page.click("#x-modify-submit")
    expect(page.locator("p.status.error")).to_contain_text("stands as it was")
    assert page.text_content("#x-holdings") == before
    # One that fits (make-before-break): the new version is committed everywhere.
    page.fill("#x-mod-bw", "4")
    page.click("#x-modify-submit")
    expect(page.locator("dl.facts")).to_contain_text("4 Gbit/s")
    expect(page.locator("#x-status")).to_have_text("committed")
    assert problems(page) == []  # the change form passes the accessibility check too

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#x-cancel")
    expect(page.locator("#x-status")).to_have_text("cancelled")
    assert "released" in (page.text_content("#x-holdings") or "")
    page.click("text=← all multi-domain reservations")
    page.wait_for_selector(f"#x-list a[href='#/interdomain/{rid}']")
    shot(page, "interdomain")
    assert problems(page) == []


def test_without_domains_the_multi_domain_page_says_how_to_enable_it(
    browser: Browser, server: Server
) -> None:
    page = browser.new_page()
    sign_in(page, server, "alice")
    page.goto(server.url + "/#/interdomain")
    expect(page.locator("#no-domains")).to_contain_text("--domains")
    assert page.locator("#x-form").count() == 0


def test_an_operator_sees_topology_versions_and_links_out_of_service(
    browser: Browser, server: Server
) -> None:
    topology = httpx.get(server.url + "/v1/topology", headers=auth(server, "olga")).json()
    topology["links"][0]["capacity"] = topology["links"][0]["capacity"] * 2
    put = httpx.put(server.url + "/v1/topology", json=topology, headers=auth(server, "olga"))
    assert put.status_code == 200, put.text
    maintenance_now(server, "DENV-SUNN", "fibre splice")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, server, "olga")
    page.click("nav a[href='#/topology']")
    page.wait_for_selector("#versions tbody tr")
    assert page.locator("#versions tbody tr").count() == 2
    assert topology["links"][0]["id"] in (page.text_content("#versions tbody tr") or "")
    page.wait_for_timeout(2500)  # the window starts two seconds from its booking
    page.goto(server.url + "/#/map")
    page.click("nav a[href='#/topology']")
    expect(page.locator("#state-down")).to_contain_text("fibre splice")
    shot(page, "topology")


def test_several_links_are_drawn_against_their_own_capacities(
    browser: Browser, server: Server
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, server, "alice")
    page.goto(server.url + "/#/links/DENV-SUNN")
    page.wait_for_selector("svg.chart path.dir-ab", state="attached")
    page.select_option("#link-add", "CHIC-WASH")
    page.wait_for_selector("svg.chart path.series[data-link='CHIC-WASH']", state="attached")
    page.select_option("#link-add", "KANS-DENV")
    page.wait_for_selector("svg.chart path.series[data-link='KANS-DENV']", state="attached")
    # The chart is redrawn whole on each change: wait for the redrawn one.
    expect(page.locator("svg.chart path.series")).to_have_count(6)  # three links, two ways
    assert page.locator("#usage-table tbody tr").count() == 3
    assert "with=CHIC-WASH" in page.url and "with=KANS-DENV" in page.url
    shot(page, "links")
    page.click("button[aria-label='remove CHIC-WASH']")
    page.wait_for_selector("svg.chart path.series[data-link='CHIC-WASH']", state="detached")
    expect(page.locator("svg.chart path.series")).to_have_count(4)


def visit(page: Page, url: str, ready: str) -> list[str]:
    page.goto(url)
    page.wait_for_selector(ready, state="attached")
    page.wait_for_selector("main:not([aria-busy])", state="attached")
    return [f"{url.split('#')[-1]}: {p}" for p in problems(page)]


def test_every_page_passes_the_accessibility_check(browser: Browser, server: Server) -> None:
    maintenance_now(server, "DENV-SUNN", "fibre splice")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(server.url + "/")
    page.wait_for_selector("#token")
    found = [f"sign in: {p}" for p in problems(page)]
    sign_in(page, server, "olga")
    found += focus_problems(page)
    pages = [
        ("#/map", "svg.map"),
        ("#/links/DENV-SUNN", "svg.chart"),
        ("#/links/DENV-SUNN?with=CHIC-WASH", "svg.chart path.series"),
        ("#/reservations", "#count"),
        ("#/book", "#slots rect.slot"),
        ("#/maintenance", "#mt-list"),
        ("#/topology", "#versions"),
        ("#/interdomain", "#no-domains"),
    ]
    for hash_, ready in pages:
        found += visit(page, f"{server.url}/{hash_}", ready)
    mt = httpx.get(server.url + "/v1/maintenance", headers=auth(server, "olga")).json()
    found += visit(page, f"{server.url}/#/reservations/{mt['maintenance'][0]['id']}", "#audit")
    assert found == []


def test_the_contrast_calculation_matches_known_ratios() -> None:
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    assert contrast("rgb(119, 119, 119)", "rgb(255, 255, 255)") == pytest.approx(4.48, abs=0.01)
    assert contrast("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(1.0)


def test_a_user_token_gets_no_operator_control_and_is_refused_plainly(
    browser: Browser, server: Server
) -> None:
    done = maintenance_now(server, "DENV-SUNN", "fibre splice")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    sign_in(page, server, "alice")
    assert page.is_hidden("nav a[href='#/maintenance']")
    # Maintenance: the page says it is for operators and offers no form.
    page.goto(server.url + "/#/maintenance")
    expect(page.locator("#operators-only")).to_contain_text("for operators")
    assert page.locator("form, #mt-submit, #mt-target").count() == 0
    # Reservations: no owner filter (only operators see others' bookings).
    page.goto(server.url + "/#/reservations")
    page.wait_for_selector("#count")
    assert page.locator("#f-owner").count() == 0
    # An operator's maintenance booking: refused, with the server's reason, no controls.
    page.goto(server.url + f"/#/reservations/{done['maintenance']['id']}")
    expect(page.locator("p.error")).to_contain_text("Could not load this page")
    assert page.locator("#cancel, #confirm, #m-end").count() == 0
    # Topology: read-only for everyone, with no operator wording.
    page.goto(server.url + "/#/topology")
    page.wait_for_selector("#versions")
    assert page.locator("main button, main form").count() == 0
    assert "braid network replace" not in (page.text_content("main") or "")
    # The same actions straight through the API with the page's token: refused.
    body = {"link": "DENV-SUNN", "start": iso(2_000_000_000), "end": iso(2_000_003_600)}
    refused = httpx.post(server.url + "/v1/maintenance", json=body, headers=auth(server, "alice"))
    assert refused.status_code == 403
    topology = httpx.get(server.url + "/v1/topology", headers=auth(server, "alice")).json()
    put = httpx.put(server.url + "/v1/topology", json=topology, headers=auth(server, "alice"))
    assert put.status_code == 403
