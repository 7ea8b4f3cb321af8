// Reservations: a Gantt view with filters, and one reservation's detail.
import { api, session, someReservations } from "./api.js";
import { clear, h, s } from "./dom.js";
import { atZone, bw, bytes, fromInput, timesZone, toInput, when } from "./fmt.js";
import { drawMap } from "./map.js";
import { nowMarker, timeAxis, timeScale } from "./chart.js";
import { levelsAt, topology } from "./views-network.js";
import { deliverySection } from "./delivery.js";

const STATES = ["", "held", "reserved", "active", "finished", "cancelled", "failed", "expired"];
const MAX_ROWS = 200; // rows a page: beyond this a Gantt is unreadable; the filters narrow it

export async function listView(root, go, params) {
  const topo = await topology();
  const operator = session.user.role === "operator";
  const state = h("select", { id: "f-state" }, STATES.map((v) => h("option", { value: v, selected: v === (params.get("state") || "") }, v || "any")));
  const owner = h("input", { id: "f-owner", value: params.get("owner") || "", placeholder: "any", size: 10 });
  const node = h("select", { id: "f-node" }, h("option", { value: "" }, "any"), topo.nodes.map((n) => h("option", { value: n.id, selected: n.id === params.get("node") }, n.id)));
  const link = h("select", { id: "f-link" }, h("option", { value: "" }, "any"), topo.links.map((l) => h("option", { value: l.id, selected: l.id === params.get("link") }, l.id)));
  const apply = () => {
    const q = new URLSearchParams();
    for (const [k, el] of [["state", state], ["owner", owner], ["node", node], ["link", link]]) if (el.value) q.set(k, el.value);
    go(`#/reservations?${q}`);
  };
  for (const el of [state, node, link]) el.addEventListener("change", apply);
  owner.addEventListener("change", apply);
  const keep = (r) => matches(r, params);
  const query = { state: params.get("state"), owner: params.get("owner"), after: params.get("after") };
  const { rows: shown, next } = await someReservations(query, MAX_ROWS, keep);
  const more = new URLSearchParams(params);
  if (next) more.set("after", next);
  root.append(
    h("h1", {}, operator ? "All reservations" : "Your reservations"),
    h("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); apply(); } },
      h("label", { for: "f-state" }, "State"), state,
      operator ? [h("label", { for: "f-owner" }, "Owner"), owner] : null,
      h("label", { for: "f-node" }, "Node"), node,
      h("label", { for: "f-link" }, "Link"), link,
      h("a", { href: "#/book", class: "button" }, "Book bandwidth")),
    h("p", { class: "hint", id: "count" }, `${shown.length} reservation(s)${params.get("after") ? " from the page asked for" : ""}, by start. `,
      params.get("after") ? h("a", { href: "#/reservations" + firstPage(params), id: "first-page" }, "First page") : null,
      params.get("after") && next ? " · " : null,
      next ? h("a", { href: `#/reservations?${more}`, id: "next-page" }, `Next ${MAX_ROWS}`) : null),
    shown.length ? gantt(shown, go) : h("p", {}, "No reservations match. ", h("a", { href: "#/book" }, "Book one.")),
  );
}

function firstPage(params) {
  const q = new URLSearchParams(params);
  q.delete("after");
  return q.size ? `?${q}` : "";
}

function matches(r, params) {
  const node = params.get("node"), link = params.get("link");
  if (node && !r.paths.some((p) => p.nodes.includes(node))) return false;
  if (link && !r.paths.some((p) => p.links.includes(link))) return false;
  return true;
}

function gantt(rows, go) {
  const starts = rows.map((r) => Date.parse(r.start)), ends = rows.map((r) => Date.parse(r.end));
  const t0 = Math.min(...starts, Date.now()), t1 = Math.max(...ends, Date.now() + 3600e3);
  const pad = (t1 - t0) * 0.03;
  const rowH = 26, left = 250, w = 1000, top = 10;
  const h_ = top + rows.length * rowH + 30;
  const scale = timeScale(t0 - pad, t1 + pad, left, w - 10);
  const svg = s("svg", { viewBox: `0 0 ${w} ${h_}`, class: "gantt", role: "list", "aria-label": "reservations over time" });
  svg.append(timeAxis(scale, h_ - 24, h_ - 24 - top));
  rows.forEach((r, i) => {
    const y = top + i * rowH;
    const x0 = scale.x(Date.parse(r.start)), x1 = scale.x(Date.parse(r.end));
    const label = `${r.src} → ${r.dst}, ${bw(r.bandwidth)}, ${r.state}`;
    const open = () => go(`#/reservations/${encodeURIComponent(r.id)}`);
    svg.append(s("g", {
      class: `bar state-${r.state} kind-${r.kind}`, role: "listitem", tabindex: 0, "data-id": r.id,
      "aria-label": `${r.id}: ${label}, ${when(r.start)} to ${when(r.end)}`,
      onclick: open, onkeydown: (e) => { if (e.key === "Enter") open(); },
    },
      s("title", {}, `${r.id}\n${label}\n${when(r.start)} – ${when(r.end)}\nowner ${r.owner}`),
      // The whole row answers a click, not only the (maybe thin) bar.
      s("rect", { x: 0, y, width: w, height: rowH, class: "hit" }),
      s("text", { x: 6, y: y + 17, class: "row-label" }, `${r.kind === "maintenance" ? "⚠ " : ""}${r.src}→${r.dst} ${bw(r.bandwidth)} · ${r.owner}`),
      s("rect", { x: x0, y: y + 4, width: Math.max(x1 - x0, 3), height: rowH - 8, rx: 3, class: "span" })));
  });
  svg.append(nowMarker(scale, top, h_ - 24));
  return h("div", { class: "chart-box" }, svg, legendStates());
}

function legendStates() {
  return h("ul", { class: "legend" }, ["held", "reserved", "active", "finished", "cancelled", "failed"].map((st) =>
    h("li", {}, h("span", { class: `swatch state-${st}` }), st)));
}

export async function detailView(root, go, id) {
  const [r, topo] = await Promise.all([api("GET", `/reservations/${encodeURIComponent(id)}`), topology()]);
  const audit = await api("GET", `/reservations/${encodeURIComponent(id)}/audit`);
  const levels = await levelsAt(Math.max(Date.parse(r.start), Date.now()));
  // Measured delivery only where braid programs the switches (it has a provisioning state).
  const delivery = r.provisioning && r.kind !== "maintenance" ? await deliverySection(id) : null;
  const status = h("p", { role: "status", class: "status" });
  const live = ["held", "reserved", "active"].includes(r.state);
  const fail = (e) => { status.className = "status error"; status.textContent = e.message; };
  const actions = h("div", { class: "toolbar" });
  if (r.state === "held") {
    actions.append(h("button", { type: "button", id: "confirm", onclick: async () => {
      try { await api("POST", `/reservations/${encodeURIComponent(id)}/confirm`); go(location.hash, true); } catch (e) { fail(e); }
    } }, "Confirm the hold"));
  }
  if (live && r.kind !== "maintenance") {
    actions.append(h("button", { type: "button", id: "cancel", class: "danger", onclick: async () => {
      if (!window.confirm(`Cancel reservation ${r.id}?`)) return;
      try { await api("DELETE", `/reservations/${encodeURIComponent(id)}`); go(location.hash, true); } catch (e) { fail(e); }
    } }, "Cancel reservation"));
  }
  // A volume's paths change from step to step: the map shows every one it uses.
  const mapPaths = r.volume ? r.volume.profile.flatMap((step) => step.paths) : r.paths;
  root.append(
    h("p", {}, h("a", { href: "#/reservations" }, "← all reservations")),
    h("h1", {}, `Reservation ${r.id}`),
    h("dl", { class: "facts" },
      fact("State", h("span", { class: `pill state-${r.state}`, id: "state" }, r.state)),
      fact("Owner", r.owner), fact("From → to", `${r.src} → ${r.dst}`),
      fact("Window", `${when(r.start)} – ${when(r.end)}`),
      ...(r.volume ? [
        fact("Volume", bytes(r.volume.bytes)),
        fact("Completion", when(r.volume.completion)),
        fact("Peak", bw(r.volume.peak) + (r.directional ? " (one way)" : " (both ways)")),
      ] : [
        fact("Bandwidth", bw(r.bandwidth) + (r.directional ? " (one way)" : " (both ways)")),
        fact("Split", `${r.split} over ${r.paths.length} path(s); ${r.recommended_streams} TCP streams recommended`),
      ]),
      r.hold_expires_at ? fact("Hold expires", when(r.hold_expires_at)) : null,
      r.provisioning ? fact("Provisioning", `${r.provisioning.state}${r.provisioning.error ? ": " + r.provisioning.error : ""}`) : null),
    actions, status,
    ...(r.volume ? [profileTable(r.volume.profile)] : pathsTable(r)),
    h("div", { class: "map-box" }, drawMap(topo, { levels, paths: mapPaths, onLink: (l) => go(`#/links/${encodeURIComponent(l)}`) })),
    delivery,
    ...(live && r.kind !== "maintenance" ? [(r.volume ? volumeModifyForm : modifyForm)(r, go, fail)] : []),
    h("h2", {}, "Audit log"),
    h("table", { class: "data", id: "audit" },
      h("thead", {}, h("tr", {}, ["when", "who", "what", "from", "to", "detail"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, audit.entries.map((e) => h("tr", {},
        h("td", {}, when(e.at)), h("td", {}, e.actor), h("td", {}, e.action),
        h("td", {}, e.from || "–"), h("td", {}, e.to || "–"),
        h("td", { class: "detail" }, JSON.stringify(e.detail)))))),
  );
}

// The heading and the table of a window booking's paths.
function pathsTable(r) {
  return [
    h("h2", {}, "Paths"),
    h("table", { class: "data" },
      h("thead", {}, h("tr", {}, ["path", "VLAN", "bandwidth", "share", "route"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, r.paths.map((p, i) => h("tr", { class: `path-row p${i}` },
        h("td", {}, h("span", { class: `swatch path${i % 4}` }), `path ${i + 1}`),
        h("td", {}, r.vlans[i] && r.vlans[i].vlan !== null ? String(r.vlans[i].vlan) : "–"),
        h("td", { class: "num" }, bw(p.bandwidth)),
        h("td", { class: "num" }, r.bandwidth ? `${Math.round((p.bandwidth / r.bandwidth) * 100)} %` : "–"),
        h("td", {}, p.nodes.join(" → "))))))];
}

// A volume's rate profile: each step's window, total rate and paths.
function profileTable(steps) {
  return h("section", { "aria-labelledby": "profile-title" },
    h("h2", { id: "profile-title" }, "Profile"),
    h("table", { class: "data", id: "profile" },
      h("thead", {}, h("tr", {}, ["from", "until", "rate", "paths"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, steps.map((step) => h("tr", { class: "step-row" },
        h("td", {}, when(step.start)), h("td", {}, when(step.end)),
        h("td", { class: "num" }, bw(step.rate)),
        h("td", {}, step.paths.map((p) => `${p.nodes.join(" → ")} (${bw(p.bandwidth)})`).join("; ")))))));
}

function fact(name, value) {
  return [h("dt", {}, name), h("dd", {}, value)];
}

// A volume is changed by what it must move and by when; what moved already stays as booked.
function volumeModifyForm(r, go, fail) {
  const asked = r.request;
  const deadline = h("input", { type: "datetime-local", id: "m-deadline",
    value: asked.deadline ? toInput(Date.parse(asked.deadline)) : "" });
  const volume = h("input", { type: "text", id: "m-volume", value: bytes(r.volume.bytes).replace(" ", "") });
  const objective = h("select", { id: "m-objective" },
    h("option", { value: "earliest", selected: asked.objective !== "flattest" }, "done as early as possible"),
    h("option", { value: "flattest", selected: asked.objective === "flattest" }, "the lowest rate that meets the deadline"));
  const submit = async (e) => {
    e.preventDefault();
    const body = {};
    if (deadline.value && fromInput(deadline.value) !== Date.parse(asked.deadline)) body.deadline = atZone(deadline.value);
    if (volume.value.replace(/\s/g, "") !== bytes(r.volume.bytes).replace(" ", "")) body.volume = volume.value.trim();
    if (objective.value !== (asked.objective || "earliest")) body.objective = objective.value;
    if (!Object.keys(body).length) return;
    try { await api("PATCH", `/reservations/${encodeURIComponent(r.id)}`, { body }); go(location.hash, true); } catch (err) { fail(err); }
  };
  return h("form", { class: "card", onsubmit: submit, "aria-labelledby": "modify-title" },
    h("h2", { id: "modify-title" }, "Modify (what moved stays; the rest is planned again)"),
    h("div", { class: "grid2" },
      h("label", { for: "m-volume" }, "Volume (e.g. 40TB, 500GiB)"), volume,
      h("label", { for: "m-deadline" }, `Deadline (${timesZone()})`), deadline,
      h("label", { for: "m-objective" }, "Profile"), objective),
    h("button", { type: "submit" }, "Apply change"));
}

function modifyForm(r, go, fail) {
  const end = h("input", { type: "datetime-local", id: "m-end", value: toInput(Date.parse(r.end)) });
  const bandwidth = h("input", { type: "number", id: "m-bw", min: 1, step: "any", value: r.bandwidth / 1000 });
  const submit = async (e) => {
    e.preventDefault();
    const body = {};
    if (fromInput(end.value) !== Date.parse(r.end)) body.end = atZone(end.value);
    if (Number(bandwidth.value) * 1000 !== r.bandwidth) body.bandwidth = `${bandwidth.value}G`;
    if (!Object.keys(body).length) return;
    try { await api("PATCH", `/reservations/${encodeURIComponent(r.id)}`, { body }); go(location.hash, true); } catch (err) { fail(err); }
  };
  return h("form", { class: "card", onsubmit: submit, "aria-labelledby": "modify-title" },
    h("h2", { id: "modify-title" }, "Modify (make-before-break)"),
    h("div", { class: "grid2" },
      h("label", { for: "m-end" }, `End (${timesZone()})`), end,
      h("label", { for: "m-bw" }, "Bandwidth (Gbit/s)"), bandwidth),
    h("button", { type: "submit" }, "Apply change"));
}
