// Operator pages: maintenance windows (create, list); the topology's versions
// and the links' state now (out of service, busiest).
import { api, session } from "./api.js";
import { h } from "./dom.js";
import { atZone, bw, pct, timesZone, toInput, when } from "./fmt.js";
import { share } from "./map.js";
import { levelsAt, topology } from "./views-network.js";

export async function maintenanceView(root, go) {
  if (session.user.role !== "operator") {
    root.append(h("h1", {}, "Maintenance"), h("p", { id: "operators-only" }, "Maintenance windows are for operators; your token is a user's."));
    return;
  }
  const topo = await topology();
  const what = h("select", { id: "mt-target" },
    h("optgroup", { label: "links" }, topo.links.map((l) => h("option", { value: `link:${l.id}` }, l.id))),
    h("optgroup", { label: "nodes (every link of)" }, topo.nodes.map((n) => h("option", { value: `node:${n.id}` }, n.id))));
  const start = Math.ceil(Date.now() / 3600e3) * 3600e3 + 86400e3;
  const from = h("input", { id: "mt-start", type: "datetime-local", value: toInput(start), required: true });
  const to = h("input", { id: "mt-end", type: "datetime-local", value: toInput(start + 4 * 3600e3), required: true });
  const reason = h("input", { id: "mt-reason", maxlength: 200, placeholder: "e.g. fibre work" });
  const status = h("div", { role: "status", "aria-live": "polite" });
  const submit = async (e) => {
    e.preventDefault();
    const [kind, id] = what.value.split(/:(.*)/s);
    try {
      const done = await api("POST", "/maintenance", { body: { [kind]: id, start: atZone(from.value), end: atZone(to.value), reason: reason.value } });
      const moved = `${done.rerouted.length} reservation(s) re-routed, ${done.failed.length} failed.`;
      status.replaceChildren(h("p", { class: "ok" }, `Maintenance ${done.maintenance.id} booked. ${moved}`));
      go(location.hash, true, status);
    } catch (err) {
      status.replaceChildren(h("p", { class: "error" }, err.message));
    }
  };
  const windows = (await api("GET", "/maintenance")).maintenance;
  root.append(
    h("h1", {}, "Maintenance"),
    h("form", { class: "card", onsubmit: submit },
      h("h2", {}, "Take a link or node out of service"),
      h("p", { class: "hint" }, "Reservations on it are re-planned around the window; those that cannot be are marked failed."),
      h("div", { class: "grid2" },
        h("label", { for: "mt-target" }, "Link or node"), what,
        h("label", { for: "mt-start" }, `Start (${timesZone()})`), from,
        h("label", { for: "mt-end" }, `End (${timesZone()})`), to,
        h("label", { for: "mt-reason" }, "Reason"), reason),
      h("button", { type: "submit", id: "mt-submit" }, "Book maintenance")),
    status,
    h("h2", {}, "Maintenance windows now and to come"),
    windows.length ? h("div", { class: "table-wrap" }, h("table", { class: "data", id: "mt-list" },
      h("thead", {}, h("tr", {}, ["id", "target", "from", "to", "links", "by", "reason"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, windows.map((m) => h("tr", {},
        h("td", {}, h("a", { href: `#/reservations/${encodeURIComponent(m.id)}` }, m.id)),
        h("td", {}, m.target), h("td", {}, when(m.start)), h("td", {}, when(m.end)),
        h("td", {}, m.links.join(", ")), h("td", {}, m.owner), h("td", {}, m.reason)))))) : h("p", {}, "None booked."),
    h("p", {}, h("a", { href: "#/topology" }, `Topology version ${topo.version}`), `: ${topo.nodes.length} nodes, ${topo.links.length} links.`),
  );
}

// The topology's versions (any signed-in user may read them) and each link's state now.
export async function topologyView(root) {
  const now = Date.now();
  const [versions, windows, levels] = await Promise.all([
    api("GET", "/topology/versions"), api("GET", "/maintenance"), levelsAt(now)]);
  const out = windows.maintenance.filter((m) => Date.parse(m.start) <= now && now < Date.parse(m.end));
  const down = new Map(out.flatMap((m) => m.links.map((l) => [l, m])));
  const busy = [...levels.values()].map((l) => ({ l, sh: share(l) })).filter((x) => x.sh >= 0.8)
    .sort((a, b) => b.sh - a.sh || a.l.id.localeCompare(b.l.id));
  root.append(
    h("h1", {}, "Topology"),
    h("p", { class: "hint" }, session.user.role === "operator"
      ? "A new version is stored with braid network replace FILE (PUT /v1/topology); it is refused while live reservations would no longer fit, unless forced."
      : "The network's versions as operators stored them."),
    h("h2", {}, "Versions"), versionTable(versions.versions),
    h("h2", {}, "Links now"),
    h("p", { id: "link-state" }, `${levels.size} links: ${down.size} out of service for maintenance, ${busy.length} booked to 80 % or more. Link health from fail-over monitors is not reported through the API yet.`),
    h("div", {},
      down.size ? stateTable("Out of service", [...down].map(([id, m]) => [id, `maintenance ${m.id} until ${when(m.end)}${m.reason ? ": " + m.reason : ""}`]), "state-down") : null,
      busy.length ? stateTable("Busiest", busy.slice(0, 50).map(({ l, sh }) => [l.id, `${pct(sh)} of ${bw(l.capacity)} booked`]), "state-busy") : null),
  );
}

function versionTable(versions) {
  const changed = (c) => c.count ? `${c.count}${c.links.length ? ": " + c.links.join(", ") : ""}${c.count > c.links.length ? " …" : ""}` : "–";
  return h("div", { class: "table-wrap" }, h("table", { class: "data", id: "versions" },
    h("thead", {}, h("tr", {}, ["version", "stored", "by", "nodes", "links", "capacity", "links added", "removed", "capacity changed"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, versions.map((v) => h("tr", {},
      h("td", {}, String(v.version)), h("td", {}, when(v.created_at)), h("td", {}, v.actor),
      h("td", { class: "num" }, String(v.nodes)), h("td", { class: "num" }, String(v.links)), h("td", { class: "num" }, bw(v.capacity)),
      h("td", {}, changed(v.added)), h("td", {}, changed(v.removed)), h("td", {}, changed(v.resized)))))));
}

function stateTable(caption, rows, id) {
  return h("div", { class: "table-wrap" }, h("table", { class: "data", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ["link", "state"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map(([link, text]) => h("tr", {},
      h("td", {}, h("a", { href: `#/links/${encodeURIComponent(link)}` }, link)), h("td", {}, text))))));
}
