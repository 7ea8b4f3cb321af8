// Multi-domain reservations (braid serve --domains): the list, booking one
// with DOMAIN:POINT endpoints, and one reservation's paths, domains and trace.
import { api, session } from "./api.js";
import { clear, h, s } from "./dom.js";
import { UNITS, atZone, bw, timesZone, toInput, when } from "./fmt.js";

const HOUR = 3600e3;
const STRATEGIES = ["partial-offers", "full-offers", "equal-split"];

// The domain view, or null when the server has no --domains (it answers 503).
async function network() {
  try {
    return await api("GET", "/interdomain/domains");
  } catch (e) {
    if (e.status === 503) return null;
    throw e;
  }
}

function notConfigured(root) {
  root.append(h("div", { class: "card", id: "no-domains" },
    h("p", {}, "This server makes no multi-domain reservations: it was started without a multi-domain topology."),
    h("p", {}, "An operator enables them by starting the server with a topology that has a domains section, one agent per domain running:"),
    h("pre", {}, "braid serve --domains net.yaml --negotiation-db negotiation.db"),
    h("p", { class: "hint" }, "See docs/multidomain.md, section Through braid serve.")));
}

export async function interdomainView(root, go) {
  root.append(h("h1", {}, "Multi-domain reservations"));
  const net = await network();
  if (!net) return notConfigured(root);
  const listed = await api("GET", "/interdomain/reservations", { query: { limit: 200 } });
  const result = h("div", { id: "x-result", "aria-live": "polite" });
  root.append(
    h("p", { class: "hint" }, `${net.domains.length} domains, ${net.links.length} links between them. Each domain's agent books its own part; the reservation commits only if every domain on its paths says yes.`),
    bookForm(net, result, go), result,
    h("h2", {}, session.user.role === "operator" ? "Everyone's" : "Yours"),
    listed.reservations.length ? table(listed.reservations) : h("p", {}, "None yet."),
    h("h2", {}, "Domains"), domainTable(net));
}

function table(rows) {
  return h("div", { class: "table-wrap" }, h("table", { class: "data", id: "x-list" },
    h("thead", {}, h("tr", {}, ["id", "status", "from", "to", "window", "asked", "granted", "owner"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((r) => h("tr", {},
      h("td", {}, h("a", { href: `#/interdomain/${encodeURIComponent(r.id)}` }, r.id)),
      h("td", {}, h("span", { class: `pill x-${r.status}` }, r.status)),
      h("td", {}, endpoint(r.src)), h("td", {}, endpoint(r.dst)),
      h("td", {}, `${when(r.start)} – ${when(r.end)}`),
      h("td", { class: "num" }, bw(r.bandwidth)), h("td", { class: "num" }, r.granted === undefined ? "–" : bw(r.granted)),
      h("td", {}, r.owner))))));
}

function endpoint(e) {
  return e ? `${e.domain}:${e.point}` : "–";
}

function domainTable(net) {
  return h("div", { class: "table-wrap" }, h("table", { class: "data", id: "x-domains" },
    h("thead", {}, h("tr", {}, ["domain", "kind", "answers", "points"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, net.domains.map((d) => h("tr", {},
      h("td", {}, d.id), h("td", {}, d.kind), h("td", {}, d.visible ? "offers" : "yes or no (blind)"),
      h("td", {}, d.points.join(", ")))))));
}

function pointPicker(side, sites, chosen) {
  const domain = h("select", { id: `x-${side}-domain`, required: true },
    sites.map((d) => h("option", { value: d.id, selected: d.id === chosen }, d.id)));
  const point = h("select", { id: `x-${side}-point`, required: true });
  const fill = () => {
    const site = sites.find((d) => d.id === domain.value);
    clear(point).append(...site.points.map((p) => h("option", { value: p }, p)));
  };
  domain.addEventListener("change", fill);
  fill();
  return { domain, point };
}

function bookForm(net, result, go) {
  const sites = net.domains.filter((d) => d.kind === "site");
  if (sites.length < 2) return h("p", {}, "The topology has fewer than two sites: there is nothing to book between.");
  const src = pointPicker("src", sites, sites[0].id), dst = pointPicker("dst", sites, sites[sites.length > 2 ? 2 : 1].id);
  const start = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
  const f = {
    bandwidth: h("input", { id: "x-bw", type: "number", min: 0, step: "any", value: 5, required: true }),
    unit: h("select", { id: "x-unit", "aria-label": "bandwidth unit" }, Object.keys(UNITS).map((u) => h("option", { value: u, selected: u === "G" }, `${u}bit/s`))),
    start: h("input", { id: "x-start", type: "datetime-local", value: toInput(start), required: true }),
    end: h("input", { id: "x-end", type: "datetime-local", value: toInput(start + 2 * HOUR), required: true }),
    strategy: h("select", { id: "x-strategy" }, STRATEGIES.map((v) => h("option", { value: v, selected: v === net.strategy }, v))),
    paths: h("select", { id: "x-paths" }, [1, 2, 3, 4].map((n) => h("option", { value: n, selected: n === net.max_paths }, String(n)))),
  };
  const submit = async (e) => {
    e.preventDefault();
    clear(result).append(h("p", { role: "status" }, "Negotiating with the domains…"));
    const body = {
      src: { domain: src.domain.value, point: src.point.value }, dst: { domain: dst.domain.value, point: dst.point.value },
      bandwidth: `${f.bandwidth.value}${f.unit.value}`, start: atZone(f.start.value), end: atZone(f.end.value),
      strategy: f.strategy.value, max_paths: Number(f.paths.value),
    };
    try {
      const r = await api("POST", "/interdomain/reservations", { body });
      go(`#/interdomain/${encodeURIComponent(r.id)}`);
    } catch (err) {
      const more = err.status === 409 && err.raw && err.raw.reservation ? err.raw.reservation : null;
      clear(result).append(h("div", { class: "card error", role: "alert" },
        h("h2", {}, err.status === 409 ? "The domains could not carry it" : "Not booked"), h("p", {}, err.message),
        more ? h("p", {}, h("a", { href: `#/interdomain/${encodeURIComponent(more)}` }, `See the negotiation ${more}`)) : null));
    }
  };
  return h("form", { class: "card", id: "x-form", onsubmit: submit, "aria-labelledby": "x-form-title" },
    h("h2", { id: "x-form-title" }, "Book across domains"),
    h("div", { class: "grid2" },
      h("label", { for: "x-src-domain" }, "From site"), h("span", { class: "pair" }, src.domain, h("label", { for: "x-src-point", class: "inline" }, "point"), src.point),
      h("label", { for: "x-dst-domain" }, "To site"), h("span", { class: "pair" }, dst.domain, h("label", { for: "x-dst-point", class: "inline" }, "point"), dst.point),
      h("label", { for: "x-bw" }, "Bandwidth"), h("span", { class: "pair" }, f.bandwidth, f.unit),
      h("label", { for: "x-start" }, `Start (${timesZone()})`), f.start,
      h("label", { for: "x-end" }, `End (${timesZone()})`), f.end,
      h("label", { for: "x-strategy" }, "Strategy"), f.strategy,
      h("label", { for: "x-paths" }, "Domain paths at most"), f.paths),
    h("button", { type: "submit", id: "x-submit" }, "Negotiate and book"));
}

export async function interdomainDetail(root, go, id) {
  root.append(h("p", {}, h("a", { href: "#/interdomain" }, "← all multi-domain reservations")));
  let r;
  try {
    r = await api("GET", `/interdomain/reservations/${encodeURIComponent(id)}`);
  } catch (e) {
    if (e.status !== 503) throw e;
    root.append(h("h1", {}, "Multi-domain reservation"));
    return notConfigured(root);
  }
  const status = h("p", { role: "status", class: "status" });
  const actions = h("div", { class: "toolbar" });
  if (r.status === "committed") {
    actions.append(h("button", { type: "button", id: "x-cancel", class: "danger", onclick: async () => {
      if (!window.confirm(`Release reservation ${r.id} in every domain?`)) return;
      try { await api("DELETE", `/interdomain/reservations/${encodeURIComponent(id)}`); go(location.hash, true); } catch (e) { status.className = "status error"; status.textContent = e.message; }
    } }, "Cancel in every domain"));
  }
  const change = r.status === "committed" ? modifyForm(r, id, go, status) : null;
  root.append(
    h("h1", {}, `Multi-domain reservation ${r.id}`),
    h("dl", { class: "facts" },
      fact("Status", h("span", { class: `pill x-${r.status}`, id: "x-status" }, r.status)),
      fact("Owner", r.owner), fact("From → to", `${endpoint(r.src)} → ${endpoint(r.dst)}`),
      fact("Window", `${when(r.start)} – ${when(r.end)}`),
      fact("Asked", bw(r.bandwidth)), r.granted !== undefined ? fact("Granted", bw(r.granted)) : null,
      fact("Strategy", `${r.strategy}, at most ${r.max_paths} domain path(s)`),
      r.reason ? fact("Reason", r.reason) : null),
    actions, status, change,
    h("h2", {}, "Paths"), pathsView(r),
    h("h2", {}, "Domains"), holdingsTable(r),
    ...((r.switches || []).length ? [h("h2", {}, "Switch rules"), rulesTable(r.switches)] : []),
    h("h2", {}, "Negotiation"), traceView(r.trace || []));
}

// A modify is make-before-break: the new version is negotiated beside the old
// bookings and, once committed everywhere, the old one is released; a 409
// leaves the old version as it was.
function modifyForm(r, id, go, status) {
  const f = {
    bandwidth: h("input", { id: "x-mod-bw", type: "number", min: 0, step: "any", value: r.bandwidth / 1000, required: true }),
    end: h("input", { id: "x-mod-end", type: "datetime-local", value: toInput(Date.parse(r.end)), required: true }),
  };
  const submit = async (e) => {
    e.preventDefault();
    status.className = "status";
    status.textContent = "Negotiating the new version with the domains…";
    const body = { bandwidth: `${f.bandwidth.value}G`, end: atZone(f.end.value) };
    try {
      await api("PATCH", `/interdomain/reservations/${encodeURIComponent(id)}`, { body });
      go(location.hash, true);
    } catch (err) {
      status.className = "status error";
      status.textContent = err.status === 409 ? `Not changed, the reservation stands as it was: ${err.message}` : err.message;
    }
  };
  return h("form", { class: "card", id: "x-modify", onsubmit: submit, "aria-labelledby": "x-modify-title" },
    h("h2", { id: "x-modify-title" }, "Change it (the new version is booked before the old is released)"),
    h("div", { class: "grid2" },
      h("label", { for: "x-mod-bw" }, "Bandwidth (Gbit/s)"), f.bandwidth,
      h("label", { for: "x-mod-end" }, `End (${timesZone()})`), f.end),
    h("button", { type: "submit", id: "x-modify-submit" }, "Negotiate the change"));
}

function fact(name, value) {
  return [h("dt", {}, name), h("dd", {}, value)];
}

function pathsView(r) {
  const paths = r.paths || [];
  if (!paths.length) return h("p", {}, "No path carries it.");
  return h("div", {}, pathDiagram(paths), h("div", { class: "table-wrap" }, h("table", { class: "data", id: "x-paths-table" },
    h("thead", {}, h("tr", {}, ["path", "bandwidth", "legs (domain: entry → exit)", "VLANs (link: VLAN)"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, paths.map((p, i) => h("tr", {},
      h("td", {}, h("span", { class: `swatch path${i % 4}` }), `path ${i + 1}`),
      h("td", { class: "num" }, bw(p.bandwidth)),
      h("td", {}, p.legs.map((g) => `${g.domain}: ${g.entry} → ${g.exit}`).join("; ")),
      h("td", {}, p.vlans.map((v) => `${v.link}: ${v.vlan}`).join(", ") || "–")))))));
}

// Each path a row of its domains, left to right, with its bandwidth.
function pathDiagram(paths) {
  const boxW = 110, gap = 34, rowH = 58, left = 10, top = 10;
  const widest = Math.max(...paths.map((p) => p.domains.length));
  const w = Math.max(left * 2 + widest * (boxW + gap), 300), hh = top + paths.length * rowH;
  const svg = s("svg", { viewBox: `0 0 ${w} ${hh}`, class: "domain-paths", role: "img",
    "aria-label": paths.map((p, i) => `path ${i + 1}, ${bw(p.bandwidth)}: ${p.domains.join(" → ")}`).join("; ") });
  paths.forEach((p, i) => {
    const y = top + i * rowH;
    p.domains.forEach((d, j) => {
      const x = left + j * (boxW + gap);
      if (j > 0) svg.append(s("line", { x1: x - gap, x2: x, y1: y + 18, y2: y + 18, class: `hop path${i % 4}` }));
      svg.append(s("rect", { x, y, width: boxW, height: 36, rx: 6, class: "domain" }));
      svg.append(s("text", { x: x + boxW / 2, y: y + 23, "text-anchor": "middle" }, d));
    });
    svg.append(s("text", { x: left, y: y + 50, class: "tick" }, `path ${i + 1}: ${bw(p.bandwidth)}`));
  });
  return h("div", { class: "chart-box" }, svg);
}

function holdingsTable(r) {
  const domains = Object.keys({ ...(r.domains || {}), ...(r.holdings || {}) });
  if (!domains.length) return h("p", {}, "No domain holds anything for it.");
  return h("div", { class: "table-wrap" }, h("table", { class: "data", id: "x-holdings" },
    h("thead", {}, h("tr", {}, ["domain", "carries", "holding"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, domains.map((d) => h("tr", {},
      h("td", {}, d), h("td", { class: "num" }, r.domains && d in r.domains ? bw(r.domains[d]) : "–"),
      h("td", {}, (r.holdings || {})[d] || "–"))))));
}

function rulesTable(switches) {
  return h("div", { class: "table-wrap" }, h("table", { class: "data", id: "x-rules" },
    h("thead", {}, h("tr", {}, ["switch", "domain", "arriving", "leaving"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, switches.flatMap((sw) => sw.rules.map((rule) => h("tr", {},
      h("td", {}, sw.switch), h("td", {}, sw.domain),
      h("td", {}, `port ${rule.in_port}, ${rule.vlan === null ? "untagged" : "VLAN " + rule.vlan}`),
      h("td", {}, rule.out.map((o) => `port ${o.port}, ${o.vlan === null ? "untagged" : "VLAN " + o.vlan} (weight ${o.weight})`).join("; "))))))));
}

// The trace as the sequence it happened in: offers, votes, decision, commits.
function traceView(lines) {
  if (!lines.length) return h("p", {}, "No trace kept for this reservation.");
  return h("ol", { class: "trace", id: "x-trace" }, lines.map((line) => {
    const m = /^\[([^\]]+)\]\s*(.*)$/s.exec(line);
    return h("li", {}, m ? [h("span", { class: "phase" }, m[1]), " ", m[2]] : line);
  }));
}
