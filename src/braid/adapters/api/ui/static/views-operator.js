// Operator pages: maintenance windows (create, list) and the topology version.
import { allReservations, api, session } from "./api.js";
import { h } from "./dom.js";
import { fromInput, iso, toInput, when } from "./fmt.js";
import { topology } from "./views-network.js";

export async function maintenanceView(root, go) {
  if (session.user.role !== "operator") {
    root.append(h("h1", {}, "Maintenance"), h("p", {}, "Maintenance windows are for operators; your token is a user's."));
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
      const done = await api("POST", "/maintenance", { body: { [kind]: id, start: iso(fromInput(from.value)), end: iso(fromInput(to.value)), reason: reason.value } });
      const moved = `${done.rerouted.length} reservation(s) re-routed, ${done.failed.length} failed.`;
      status.replaceChildren(h("p", { class: "ok" }, `Maintenance ${done.maintenance.id} booked. ${moved}`));
      go(location.hash, true, status);
    } catch (err) {
      status.replaceChildren(h("p", { class: "error" }, err.message));
    }
  };
  const windows = (await allReservations({})).filter((r) => r.kind === "maintenance");
  root.append(
    h("h1", {}, "Maintenance"),
    h("form", { class: "card", onsubmit: submit },
      h("h2", {}, "Take a link or node out of service"),
      h("p", { class: "hint" }, "Reservations on it are re-planned around the window; those that cannot be are marked failed."),
      h("div", { class: "grid2" },
        h("label", { for: "mt-target" }, "Link or node"), what,
        h("label", { for: "mt-start" }, "Start (UTC)"), from,
        h("label", { for: "mt-end" }, "End (UTC)"), to,
        h("label", { for: "mt-reason" }, "Reason"), reason),
      h("button", { type: "submit", id: "mt-submit" }, "Book maintenance")),
    status,
    h("h2", {}, "Maintenance windows"),
    windows.length ? h("table", { class: "data", id: "mt-list" },
      h("thead", {}, h("tr", {}, ["id", "target", "from", "to", "state", "reason"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, windows.map((m) => h("tr", {},
        h("td", {}, h("a", { href: `#/reservations/${encodeURIComponent(m.id)}` }, m.id)),
        h("td", {}, m.request.target || `${m.src}–${m.dst}`),
        h("td", {}, when(m.start)), h("td", {}, when(m.end)), h("td", {}, m.state),
        h("td", {}, m.request.reason || ""))))) : h("p", {}, "None booked."),
    h("h2", {}, "Topology"),
    h("p", {}, `Version ${topo.version}: ${topo.nodes.length} nodes, ${topo.links.length} links. Replace it with braid network replace FILE.`),
  );
}
