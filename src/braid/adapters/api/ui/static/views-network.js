// The map page (links coloured at a chosen time) and one link's utilisation over time.
import { api } from "./api.js";
import { clear, debounce, h } from "./dom.js";
import { bw, iso, pct, timesZone, toInput, fromInput, when } from "./fmt.js";
import { drawMap, legend, share } from "./map.js";
import { SERIES_COLOURS, sharesChart, usageChart } from "./chart.js";

const HOUR = 3600e3;
let topologyCache = null;

export async function topology() {
  if (!topologyCache) topologyCache = await api("GET", "/topology");
  return topologyCache;
}

export function forgetTopology() {
  topologyCache = null;
}

export async function levelsAt(t) {
  const data = await api("GET", "/links", { query: { at: iso(t) } });
  return new Map(data.links.map((l) => [l.id, l]));
}

export async function mapView(root, go) {
  const topo = await topology();
  const start = Math.floor(Date.now() / HOUR) * HOUR;
  const slider = h("input", {
    type: "range", id: "map-time", min: 0, max: 14 * 24, step: 1, value: 0,
    "aria-describedby": "map-time-label",
  });
  const shown = h("output", { id: "map-time-label", for: "map-time" });
  const canvas = h("div", { class: "map-box" });
  const table = h("div", { class: "table-wrap" });
  const draw = async () => {
    const t = start + Number(slider.value) * HOUR;
    shown.textContent = when(t);
    const levels = await levelsAt(t);
    clear(canvas).append(drawMap(topo, { levels, onLink: (id) => go(`#/links/${encodeURIComponent(id)}`) }));
    clear(table).append(linkTable(topo, levels, go));
  };
  slider.addEventListener("input", debounce(draw, 120));
  root.append(
    h("h1", {}, "Network"),
    h("p", { class: "hint" }, `${topo.nodes.length} nodes, ${topo.links.length} links (topology version ${topo.version}). Links are coloured by the share of their capacity booked at the chosen time; select a link for its utilisation over time.`),
    h("div", { class: "toolbar" },
      h("label", { for: "map-time" }, "Time"), slider, shown, legend()),
    canvas,
    h("h2", {}, "Links at this time"),
    table,
  );
  await draw();
}

function linkTable(topo, levels, go) {
  const rows = [...topo.links]
    .map((l) => ({ l, level: levels.get(l.id), sh: share(levels.get(l.id)) }))
    .sort((a, b) => b.sh - a.sh || a.l.id.localeCompare(b.l.id));
  return h("table", { class: "data" },
    h("thead", {}, h("tr", {}, ["link", "ends", "capacity", "booked a→b", "booked b→a", "share"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map(({ l, level, sh }) => h("tr", {},
      h("td", {}, h("a", { href: `#/links/${encodeURIComponent(l.id)}` }, l.id)),
      h("td", {}, `${l.a} – ${l.b}`),
      h("td", { class: "num" }, bw(l.capacity)),
      h("td", { class: "num" }, bw(level ? level.booked["a-b"] : 0)),
      h("td", { class: "num" }, bw(level ? level.booked["b-a"] : 0)),
      h("td", { class: "num" }, pct(sh)))),
    ));
}

// One link (its two directions in Mbit/s), or several (`?with=ID`, each as a
// share of its own capacity) over a chosen range.
export async function linkView(root, go, linkId, params = new URLSearchParams()) {
  const topo = await topology();
  const others = params.getAll("with").filter((id) => id !== linkId);
  const ids = [linkId, ...others];
  const address = (list) => `#/links/${encodeURIComponent(list[0])}` +
    (list.length > 1 ? "?" + new URLSearchParams(list.slice(1).map((id) => ["with", id])) : "");
  const option = (l, chosen) => h("option", { value: l.id, selected: chosen }, `${l.id} (${l.a} – ${l.b})`);
  const pick = h("select", { id: "link-pick" }, topo.links.map((l) => option(l, l.id === linkId)));
  pick.addEventListener("change", () => go(address([pick.value, ...others])));
  const add = h("select", { id: "link-add" }, h("option", { value: "" }, "choose a link"),
    topo.links.filter((l) => !ids.includes(l.id)).map((l) => option(l, false)));
  add.addEventListener("change", () => { if (add.value) go(address([...ids, add.value])); });
  const chips = h("ul", { class: "chips", "aria-label": "links shown" }, ids.map((id, i) => h("li", {},
    h("span", { class: "swatch", "data-colour": i % SERIES_COLOURS.length }), id,
    ids.length > 1 ? h("button", { type: "button", class: "ghost small", "aria-label": `remove ${id}`,
      onclick: () => go(address(ids.filter((x) => x !== id))) }, "✕") : null)));
  const now = Date.now();
  const from = h("input", { type: "datetime-local", id: "usage-from", value: toInput(now - 86400e3) });
  const to = h("input", { type: "datetime-local", id: "usage-to", value: toInput(now + 7 * 86400e3) });
  const box = h("div", { class: "chart-box" });
  const facts = h("p", { class: "hint", id: "usage-facts" });
  const draw = async () => {
    const t0 = fromInput(from.value), t1 = fromInput(to.value);
    if (!(t1 > t0)) { facts.textContent = "Choose an end after the start."; return; }
    const query = { start: iso(t0), end: iso(t1) };
    const all = await Promise.all(ids.map((id) => api("GET", `/links/${encodeURIComponent(id)}/usage`, { query })));
    clear(box);
    if (all.length === 1) oneLink(all[0], t0, t1, facts, box);
    else severalLinks(all, t0, t1, facts, box);
  };
  const presets = [["1 day", 1], ["7 days", 7], ["30 days", 30]].map(([label, days]) =>
    h("button", { type: "button", class: "ghost", onclick: () => {
      from.value = toInput(Date.now() - 3600e3); to.value = toInput(Date.now() + days * 86400e3); draw();
    } }, label));
  from.addEventListener("change", draw);
  to.addEventListener("change", draw);
  root.append(
    h("h1", {}, ids.length > 1 ? `Links ${ids.join(", ")}` : `Link ${linkId}`),
    h("div", { class: "toolbar" },
      h("label", { for: "link-pick" }, "Link"), pick,
      h("label", { for: "link-add" }, "Compare with"), add),
    ...(ids.length > 1 ? [chips] : []),
    h("div", { class: "toolbar" },
      h("label", { for: "usage-from" }, `From (${timesZone()})`), from,
      h("label", { for: "usage-to" }, `To (${timesZone()})`), to, ...presets),
    facts, box,
  );
  await draw();
}

function peakOf(u) {
  return Math.max(0, ...u.steps["a-b"].map((x) => x[2]), ...u.steps["b-a"].map((x) => x[2]));
}

function oneLink(u, t0, t1, facts, box) {
  const peak = peakOf(u);
  facts.textContent = `${u.a} → ${u.b} (filled) and ${u.b} → ${u.a} (dashed), capacity ${bw(u.capacity)} each way; peak booked ${bw(peak)} (${pct(peak / u.capacity)}); ${u.maintenance.length} maintenance window(s).`;
  box.append(usageChart({
    steps: u.steps, capacity: u.capacity, maintenance: u.maintenance, t0, t1,
    label: `booked bandwidth on ${u.id} from ${when(t0)} to ${when(t1)}`,
  }));
  maintenanceList(u.maintenance, box);
}

function severalLinks(all, t0, t1, facts, box) {
  facts.textContent = "Each link's booked share of its own capacity: a→b solid, b→a dashed.";
  box.append(sharesChart({
    series: all, t0, t1,
    label: `booked share of capacity on ${all.map((u) => u.id).join(", ")} from ${when(t0)} to ${when(t1)}`,
  }));
  box.append(h("table", { class: "data", id: "usage-table" },
    h("thead", {}, h("tr", {}, ["link", "ends", "capacity", "peak booked", "maintenance"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, all.map((u, i) => h("tr", {},
      h("td", {}, h("span", { class: "swatch", "data-colour": i % SERIES_COLOURS.length }), u.id),
      h("td", {}, `${u.a} – ${u.b}`), h("td", { class: "num" }, bw(u.capacity)),
      h("td", { class: "num" }, `${bw(peakOf(u))} (${pct(peakOf(u) / u.capacity)})`),
      h("td", {}, u.maintenance.map((m) => `${when(m.start)} – ${when(m.end)}`).join("; ") || "–"))))));
}

function maintenanceList(windows, box) {
  if (!windows.length) return;
  box.append(h("ul", { class: "plain" }, windows.map((m) =>
    h("li", {}, `Maintenance ${when(m.start)} – ${when(m.end)}${m.reason ? ": " + m.reason : ""}`))));
}
