// braid's web interface: sign in, then a hash router over the views.
import { api, session } from "./api.js";
import { clear, h, keepTextLegible } from "./dom.js";
import { browserZone, knownZones, showTimesIn, timesZone } from "./fmt.js";
import { forgetTopology, linkView, mapView } from "./views-network.js";
import { detailView, listView } from "./views-reservations.js";
import { bookView } from "./views-book.js";
import { maintenanceView, topologyView } from "./views-operator.js";
import { interdomainDetail, interdomainView } from "./views-interdomain.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const who = document.getElementById("who");

const ROUTES = [
  [/^#\/map$/, (root, go) => mapView(root, go)],
  [/^#\/links\/([^?]+)(?:\?(.*))?$/, (root, go, m) => linkView(root, go, decodeURIComponent(m[1]), new URLSearchParams(m[2] || ""))],
  [/^#\/reservations\/([^?]+)$/, (root, go, m) => detailView(root, go, decodeURIComponent(m[1]))],
  [/^#\/reservations(?:\?(.*))?$/, (root, go, m) => listView(root, go, new URLSearchParams(m[1] || ""))],
  [/^#\/book$/, (root, go) => bookView(root, go)],
  [/^#\/maintenance$/, (root, go) => maintenanceView(root, go)],
  [/^#\/topology$/, (root, go) => topologyView(root, go)],
  [/^#\/interdomain\/([^?]+)$/, (root, go, m) => interdomainDetail(root, go, decodeURIComponent(m[1]))],
  [/^#\/interdomain$/, (root, go) => interdomainView(root, go)],
];

// Navigate; `again` re-renders the same hash (after a change), keeping `keep` shown.
function go(hash, again = false, keep = null) {
  if (location.hash !== hash) { location.hash = hash; return; }
  if (again) render(keep);
}

async function render(keep = null) {
  if (!session.token()) return signIn();
  if (!session.user) {
    try { session.user = await api("GET", "/me"); } catch { return signIn("That token was not accepted."); }
    showTimesIn(session.zone() || session.user.tz || browserZone());
    showUser();
  }
  const hash = location.hash || "#/map";
  for (const a of nav.querySelectorAll("a")) {
    a.toggleAttribute("aria-current", hash.startsWith(a.getAttribute("href")));
  }
  const root = h("div", { class: "view" });
  clear(main).append(root);
  if (keep) root.append(keep);
  main.setAttribute("aria-busy", "true");
  try {
    const route = ROUTES.find(([re]) => re.test(hash));
    if (!route) { location.hash = "#/map"; return; }
    await route[1](root, go, hash.match(route[0]));
  } catch (e) {
    root.append(h("p", { class: "error", role: "alert" }, `Could not load this page: ${e.message}`));
  } finally {
    main.removeAttribute("aria-busy");
    const title = root.querySelector("h1");
    document.title = title ? `${title.textContent} — braid` : "braid";
    // For bench/ui_bench.py: when the view is drawn and the page answers input.
    performance.mark("braid:view-ready");
  }
}

function showUser() {
  nav.hidden = false;
  nav.querySelector('a[href="#/maintenance"]').hidden = session.user.role !== "operator";
  clear(who).append(
    h("span", {}, `${session.user.name} (${session.user.role})`),
    zonePicker(),
    h("button", { type: "button", class: "ghost", id: "sign-out", onclick: () => {
      session.signOut(); session.user = null; forgetTopology(); signIn();
    } }, "Sign out"));
}

// The zone every time on the pages is shown in and every date-time field is read in:
// the user's tz setting (PATCH /v1/me) or this browser's zone until another is chosen
// here; the choice lasts as long as the tab's session.
function zonePicker() {
  const zones = knownZones();
  const shown = timesZone();
  const picker = h("select", { id: "zone", onchange: () => {
    session.chooseZone(showTimesIn(picker.value));
    render();
  } }, (zones.includes(shown) ? zones : [shown, ...zones]).map((z) => h("option", { value: z, selected: z === shown }, z)));
  return h("label", { class: "zone", title: "your default: PATCH /v1/me {\"tz\": …}" }, "Times in ", picker);
}

function signIn(message) {
  session.signOut();
  session.user = null;
  nav.hidden = true;
  clear(who);
  const token = h("input", { id: "token", type: "password", autocomplete: "off", required: true, "aria-describedby": "token-help" });
  const form = h("form", { class: "card signin", onsubmit: (e) => {
    e.preventDefault();
    session.signIn(token.value.trim());
    render();
  } },
    h("h1", {}, "Sign in to braid"),
    message ? h("p", { class: "error", role: "alert" }, message) : null,
    h("label", { for: "token" }, "Token"), token,
    h("p", { id: "token-help", class: "hint" }, "A token from braid token create. It is kept in this browser tab only, and forgotten when the tab closes."),
    h("button", { type: "submit", id: "sign-in" }, "Sign in"));
  clear(main).append(form);
  token.focus();
}

keepTextLegible(main);
window.addEventListener("hashchange", () => render());
window.addEventListener("braid:signed-out", () => signIn("Your token is no longer accepted; sign in again."));
render();
