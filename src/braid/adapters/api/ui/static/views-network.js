// The map page (links coloured at a chosen time) and one link's utilisation over time.
import { api } from "./api.js";
import { clear, debounce, h } from "./dom.js";
import { bw, iso, pct, toInput, fromInput, when } from "./fmt.js";
import { drawMap, legend, share } from "./map.js";
import { usageChart } from "./chart.js";

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

export async function linkView(root, go, linkId) {
  const topo = await topology();
  const pick = h("select", { id: "link-pick" },
    topo.links.map((l) => h("option", { value: l.id, selected: l.id === linkId }, `${l.id} (${l.a} – ${l.b})`)));
  pick.addEventListener("change", () => go(`#/links/${encodeURIComponent(pick.value)}`));
  const now = Date.now();
  const from = h("input", { type: "datetime-local", id: "usage-from", value: toInput(now - 86400e3) });
  const to = h("input", { type: "datetime-local", id: "usage-to", value: toInput(now + 7 * 86400e3) });
  const box = h("div", { class: "chart-box" });
  const facts = h("p", { class: "hint" });
  const draw = async () => {
    const t0 = fromInput(from.value), t1 = fromInput(to.value);
    if (!(t1 > t0)) { facts.textContent = "Choose an end after the start."; return; }
    const u = await api("GET", `/links/${encodeURIComponent(linkId)}/usage`, { query: { start: iso(t0), end: iso(t1) } });
    const peak = Math.max(0, ...u.steps["a-b"].map((x) => x[2]), ...u.steps["b-a"].map((x) => x[2]));
    facts.textContent = `${u.a} → ${u.b} (filled) and ${u.b} → ${u.a} (dashed), capacity ${bw(u.capacity)} each way; peak booked ${bw(peak)} (${pct(peak / u.capacity)}); ${u.maintenance.length} maintenance window(s).`;
    clear(box).append(usageChart({
      steps: u.steps, capacity: u.capacity, maintenance: u.maintenance, t0, t1,
      label: `booked bandwidth on ${u.id} from ${when(t0)} to ${when(t1)}`,
    }));
    if (u.maintenance.length) {
      box.append(h("ul", { class: "plain" }, u.maintenance.map((m) =>
        h("li", {}, `Maintenance ${when(m.start)} – ${when(m.end)}${m.reason ? ": " + m.reason : ""}`))));
    }
  };
  const presets = [["1 day", 1], ["7 days", 7], ["30 days", 30]].map(([label, days]) =>
    h("button", { type: "button", class: "ghost", onclick: () => {
      from.value = toInput(Date.now() - 3600e3); to.value = toInput(Date.now() + days * 86400e3); draw();
    } }, label));
  from.addEventListener("change", draw);
  to.addEventListener("change", draw);
  root.append(
    h("h1", {}, `Link ${linkId}`),
    h("div", { class: "toolbar" },
      h("label", { for: "link-pick" }, "Link"), pick,
      h("label", { for: "usage-from" }, "From (UTC)"), from,
      h("label", { for: "usage-to" }, "To (UTC)"), to, ...presets),
    facts, box,
  );
  await draw();
}
