// The topology as an SVG map: nodes at their coordinates (or a force layout
// when some have none), links coloured by their booked share.
import { h, s } from "./dom.js";
import { bw, pct, shareColour } from "./fmt.js";

const W = 1000;
const H = 560;
const PAD = 40;
const PATH_COLOURS = ["#1f5fbf", "#8a3ffc", "#007d79", "#b8157a"];

const laidOut = new WeakMap(); // topology answer -> its layout: drawn again, not computed again

export function layout(nodes, links) {
  const located = nodes.filter((n) => typeof n.lat === "number" && typeof n.lon === "number");
  // Mostly on the map (a Topology Zoo file often misses a few): the others sit
  // among their neighbours; only a network mostly without coordinates is forced.
  const raw = located.length * 2 >= nodes.length && located.length
    ? placeMissing(projected(located), nodes, links)
    : forced(nodes, links);
  const fit = fitted(raw);
  // Sites a few kilometres apart would sit on each other: nudge them apart.
  separate(fit.pos, nodes.length > 60 ? 7 : 40);
  for (const p of fit.pos.values()) {
    // Labels sit to the right of their node: keep room for them.
    p.x = Math.min(Math.max(p.x, 12), W - 70);
    p.y = Math.min(Math.max(p.y, 12), fit.height - 12);
  }
  return fit;
}

function cachedLayout(topology) {
  if (!laidOut.has(topology)) laidOut.set(topology, layout(topology.nodes, topology.links));
  return laidOut.get(topology);
}

// Nodes without coordinates at the mean of their placed neighbours, a few rounds.
function placeMissing(pos, nodes, links) {
  const around = new Map(nodes.map((n) => [n.id, []]));
  for (const l of links) { around.get(l.a).push(l.b); around.get(l.b).push(l.a); }
  const missing = nodes.filter((n) => !pos.has(n.id));
  const xs = [...pos.values()].map((p) => p.x), ys = [...pos.values()].map((p) => p.y);
  const corner = { x: Math.min(...xs), y: Math.min(...ys) };
  for (let round = 0; round < 5 && missing.some((n) => !pos.has(n.id)); round++) {
    for (const n of missing) {
      const placed = around.get(n.id).map((id) => pos.get(id)).filter(Boolean);
      if (placed.length && !pos.has(n.id)) {
        pos.set(n.id, { x: placed.reduce((a, p) => a + p.x, 0) / placed.length, y: placed.reduce((a, p) => a + p.y, 0) / placed.length });
      }
    }
  }
  for (const n of missing) if (!pos.has(n.id)) pos.set(n.id, { ...corner });
  return pos;
}

// Push apart points closer than `gap`, comparing only points in neighbouring grid cells.
function separate(pos, gap) {
  const points = [...pos.values()];
  for (let round = 0; round < 40; round++) {
    const cells = new Map();
    points.forEach((p, i) => {
      const key = `${Math.floor(p.x / gap)},${Math.floor(p.y / gap)}`;
      if (!cells.has(key)) cells.set(key, []);
      cells.get(key).push(i);
    });
    let moved = false;
    points.forEach((p, i) => {
      const cx = Math.floor(p.x / gap), cy = Math.floor(p.y / gap);
      for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) {
        for (const j of cells.get(`${cx + dx},${cy + dy}`) || []) {
          if (j > i) moved = pushApart(p, points[j], gap) || moved;
        }
      }
    });
    if (!moved) break;
  }
}

function pushApart(p, q, gap) {
  let dx = q.x - p.x, dy = q.y - p.y, d = Math.hypot(dx, dy);
  if (d >= gap) return false;
  if (d < 1e-6) { dx = 1e-3; dy = 0.3e-3; d = Math.hypot(dx, dy); } // on top of each other
  const push = (gap - d) / 2 / d;
  p.x -= dx * push; p.y -= dy * push; q.x += dx * push; q.y += dy * push;
  return true;
}

function projected(nodes) {
  // Equirectangular, shrunk by the cosine of the mean latitude: close enough
  // for a continent, and needs no map data.
  const mean = nodes.reduce((sum, n) => sum + n.lat, 0) / nodes.length;
  const k = Math.cos((mean * Math.PI) / 180);
  return new Map(nodes.map((n) => [n.id, { x: n.lon * k, y: -n.lat }]));
}

function forced(nodes, links) {
  // Fruchterman–Reingold from a circle: deterministic, so a reload draws the same map.
  const pos = new Map();
  nodes.forEach((n, i) => {
    const a = (2 * Math.PI * i) / nodes.length;
    pos.set(n.id, { x: Math.cos(a), y: Math.sin(a) });
  });
  const k = Math.sqrt(4 / Math.max(nodes.length, 1));
  const rounds = nodes.length > 300 ? 30 : 150;
  for (let round = 0; round < rounds; round++) {
    const step = 0.1 * (1 - round / rounds);
    const move = new Map(nodes.map((n) => [n.id, { x: 0, y: 0 }]));
    for (const a of nodes) {
      for (const b of nodes) {
        if (a === b) continue;
        const p = pos.get(a.id), q = pos.get(b.id);
        const dx = p.x - q.x, dy = p.y - q.y;
        const d2 = Math.max(dx * dx + dy * dy, 1e-6);
        const m = move.get(a.id);
        m.x += (dx * k * k) / d2;
        m.y += (dy * k * k) / d2;
      }
    }
    for (const l of links) {
      const p = pos.get(l.a), q = pos.get(l.b);
      const dx = p.x - q.x, dy = p.y - q.y;
      const d = Math.max(Math.hypot(dx, dy), 1e-3);
      const f = d / k;
      move.get(l.a).x -= dx * f; move.get(l.a).y -= dy * f;
      move.get(l.b).x += dx * f; move.get(l.b).y += dy * f;
    }
    for (const n of nodes) {
      const m = move.get(n.id), p = pos.get(n.id);
      const len = Math.max(Math.hypot(m.x, m.y), 1e-9);
      p.x += (m.x / len) * Math.min(len, step);
      p.y += (m.y / len) * Math.min(len, step);
    }
  }
  return pos;
}

function fitted(raw) {
  const xs = [...raw.values()].map((p) => p.x), ys = [...raw.values()].map((p) => p.y);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const scale = Math.min((W - 3 * PAD) / (x1 - x0 || 1), (H - 2 * PAD) / (y1 - y0 || 1));
  // As tall as the network needs: a wide continent leaves no empty band.
  const height = Math.max(200, (y1 - y0) * scale + 2 * PAD);
  const ox = (W - PAD - (x1 - x0) * scale) / 2, oy = (height - (y1 - y0) * scale) / 2;
  const pos = new Map();
  for (const [id, p] of raw) pos.set(id, { x: ox + (p.x - x0) * scale, y: oy + (p.y - y0) * scale });
  return { pos, height };
}

// Parallel links between the same two nodes bend apart.
function bends(links) {
  const seen = new Map(), out = new Map();
  for (const l of links) {
    const key = [l.a, l.b].sort().join("\u0000");
    const i = seen.get(key) || 0;
    seen.set(key, i + 1);
    out.set(l.id, i === 0 ? 0 : (i % 2 ? 1 : -1) * Math.ceil(i / 2) * 18);
  }
  return out;
}

function curve(p, q, bend) {
  const mx = (p.x + q.x) / 2, my = (p.y + q.y) / 2;
  const len = Math.hypot(q.x - p.x, q.y - p.y) || 1;
  const cx = mx - ((q.y - p.y) / len) * bend * 2, cy = my + ((q.x - p.x) / len) * bend * 2;
  return { d: `M${p.x},${p.y} Q${cx},${cy} ${q.x},${q.y}`, mid: { x: (mx + cx) / 2, y: (my + cy) / 2 } };
}

export function share(level) {
  if (!level || !level.capacity) return 0;
  return Math.max(level.booked["a-b"], level.booked["b-a"]) / level.capacity;
}

// topology: GET /v1/topology; levels: Map link id -> entry of GET /v1/links;
// paths: a reservation's paths to draw over the map.
export function drawMap(topology, { levels, paths, onLink, selected } = {}) {
  const { pos, height } = cachedLayout(topology);
  const bent = bends(topology.links);
  const many = topology.nodes.length > 60;
  const svg = s("svg", {
    viewBox: `0 0 ${W} ${height}`, class: "map", role: "group",
    "aria-label": `network map: ${topology.nodes.length} nodes, ${topology.links.length} links`,
  });
  const used = new Set((paths || []).flatMap((p) => p.links));
  for (const l of topology.links) {
    const level = levels && levels.get(l.id);
    const sh = share(level);
    const { d } = curve(pos.get(l.a), pos.get(l.b), bent.get(l.id));
    const label = level
      ? `${l.id}: ${bw(Math.max(level.booked["a-b"], level.booked["b-a"]))} of ${bw(l.capacity)} booked (${pct(sh)})`
      : `${l.id}: ${bw(l.capacity)}`;
    const dim = paths && !used.has(l.id);
    const line = s("path", {
      d, class: `link${dim ? " dim" : ""}${selected === l.id ? " selected" : ""}`,
      stroke: levels ? shareColour(sh) : "#8a94a6",
      "stroke-width": Math.max(2, Math.min(9, Math.log10(l.capacity / 100 + 1) * 3)),
      "data-link": l.id, tabindex: onLink ? 0 : null, role: onLink ? "button" : null,
      "aria-label": label,
      onclick: onLink ? () => onLink(l.id) : null,
      onkeydown: onLink ? (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onLink(l.id); } } : null,
    }, s("title", {}, label));
    svg.append(line);
  }
  const byId = new Map(topology.links.map((l) => [l.id, l]));
  (paths || []).forEach((path, i) => {
    const colour = PATH_COLOURS[i % PATH_COLOURS.length];
    path.links.forEach((id, j) => {
      const l = byId.get(id);
      if (!l) return;
      const { d, mid } = curve(pos.get(l.a), pos.get(l.b), bent.get(l.id));
      svg.append(s("path", { d, class: "route", stroke: colour, "data-path": i }));
      if (j === Math.floor(path.links.length / 2)) {
        svg.append(s("text", { x: mid.x, y: mid.y - 8, class: "route-label", fill: colour },
          `path ${i + 1}: ${bw(path.bandwidth)}`));
      }
    });
  });
  for (const n of topology.nodes) {
    const p = pos.get(n.id);
    const g = s("g", { class: "node", "data-node": n.id },
      s("circle", { cx: p.x, cy: p.y, r: many ? 3 : 7 }),
      s("title", {}, n.name ? `${n.id} — ${n.name}` : n.id));
    // Near the right edge the label goes left of its node, or a phone's larger text runs off.
    const left = p.x > W * 0.8;
    if (!many) g.append(s("text", { x: left ? p.x - 10 : p.x + 10, y: p.y + 4, "text-anchor": left ? "end" : null }, n.id));
    svg.append(g);
  }
  return svg;
}

export function legend() {
  const steps = [[0, "free"], [0.3, "< 50 %"], [0.6, "50–80 %"], [0.9, "80–99 %"], [1, "full"]];
  return h("ul", { class: "legend", "aria-label": "link colours" },
    steps.map(([v, label]) => h("li", {}, h("span", { class: `swatch sw${Math.round(v * 10)}` }), label)));
}
