// Time axes for the SVG charts: the utilisation step function, the Gantt
// view of reservations and the booking form's feasible slots.
import { s } from "./dom.js";
import { bw, when, zoneOffset } from "./fmt.js";

const TICKS = [
  3600e3, 3 * 3600e3, 6 * 3600e3, 12 * 3600e3, 86400e3, 2 * 86400e3, 7 * 86400e3, 30 * 86400e3,
];

export function timeScale(t0, t1, x0, x1) {
  const k = (x1 - x0) / Math.max(t1 - t0, 1);
  const x = (t) => x0 + (Math.min(Math.max(t, t0), t1) - t0) * k;
  return { t0, t1, x0, x1, x };
}

export function timeAxis(scale, y, height) {
  const g = s("g", { class: "axis", "aria-hidden": "true" });
  const want = (scale.t1 - scale.t0) / 8;
  const step = TICKS.find((t) => t >= want) || TICKS[TICKS.length - 1];
  // Ticks on the shown zone's round hours and midnights, not UTC's.
  const shift = zoneOffset(scale.t0);
  const first = Math.ceil((scale.t0 + shift) / step) * step - shift;
  for (let t = first; t <= scale.t1; t += step) {
    const x = scale.x(t);
    g.append(s("line", { x1: x, x2: x, y1: y - height, y2: y, class: "grid" }));
    const label = step >= 86400e3 ? when(t).slice(5, 10) : when(t).slice(5, 16);
    g.append(s("text", { x, y: y + 16, "text-anchor": "middle" }, label));
  }
  g.append(s("line", { x1: scale.x0, x2: scale.x1, y1: y, y2: y, class: "base" }));
  return g;
}

export function nowMarker(scale, top, bottom) {
  const now = Date.now();
  if (now < scale.t0 || now > scale.t1) return s("g");
  const x = scale.x(now);
  return s("g", { class: "now" },
    s("line", { x1: x, x2: x, y1: top, y2: bottom }),
    s("text", { x: x + 3, y: top + 10 }, "now"));
}

// steps: [[startIso, endIso, mbps], ...] for each direction; capacity in Mbit/s.
export function usageChart({ steps, capacity, maintenance, t0, t1, label }) {
  const w = 1000, h = 320, left = 70, right = 20, top = 20, bottom = 260;
  const scale = timeScale(t0, t1, left, w - right);
  const y = (mbps) => bottom - (mbps / capacity) * (bottom - top - 20);
  const svg = s("svg", { viewBox: `0 0 ${w} ${h}`, class: "chart", role: "img", "aria-label": label });
  for (const m of maintenance) {
    const a = scale.x(Date.parse(m.start)), b = scale.x(Date.parse(m.end));
    svg.append(s("rect", { x: a, y: top, width: Math.max(b - a, 2), height: bottom - top, class: "maintenance" },
      s("title", {}, `maintenance ${when(m.start)} – ${when(m.end)}${m.reason ? ": " + m.reason : ""}`)));
    svg.append(s("text", { x: a + 4, y: bottom - 8, class: "maintenance-label" }, "maintenance"));
  }
  for (const frac of [0, 0.25, 0.5, 0.75, 1]) {
    const yy = y(capacity * frac);
    svg.append(s("line", { x1: left, x2: w - right, y1: yy, y2: yy, class: frac === 1 ? "capacity" : "grid" }));
    svg.append(s("text", { x: left - 6, y: yy + 4, "text-anchor": "end", class: "tick" }, bw(capacity * frac)));
  }
  svg.append(s("text", { x: w - right, y: y(capacity) - 5, "text-anchor": "end", class: "capacity-label" }, `capacity ${bw(capacity)}`));
  const dirs = [["a-b", "dir-ab"], ["b-a", "dir-ba"]];
  for (const [dir, cls] of dirs) {
    let d = "";
    for (const [a, b, mbps] of steps[dir]) {
      const xa = scale.x(Date.parse(a)), xb = scale.x(Date.parse(b)), yy = y(mbps);
      d += d ? ` L${xa},${yy} L${xb},${yy}` : `M${xa},${yy} L${xb},${yy}`;
    }
    if (dir === "a-b" && d) svg.append(s("path", { d: `${d} L${w - right},${bottom} L${left},${bottom} Z`, class: "area" }));
    svg.append(s("path", { d, class: `step ${cls}`, "data-direction": dir }));
  }
  svg.append(timeAxis(scale, bottom, bottom - top));
  svg.append(nowMarker(scale, top, bottom));
  return svg;
}

export const SERIES_COLOURS = ["#1f5fbf", "#8a3ffc", "#007d79", "#b8157a", "#a15c00", "#4d5868"];

// Several links over one time axis, each as its booked share of its own capacity:
// series: [{id, capacity, steps: {"a-b": [...], "b-a": [...]}}] (a→b solid, b→a dashed).
export function sharesChart({ series, t0, t1, label }) {
  const w = 1000, h = 320, left = 70, right = 20, top = 20, bottom = 260;
  const scale = timeScale(t0, t1, left, w - right);
  const peak = Math.max(1, ...series.flatMap((x) => ["a-b", "b-a"].flatMap((d) => x.steps[d].map((st) => st[2] / x.capacity))));
  const y = (sh) => bottom - (sh / peak) * (bottom - top - 20);
  const svg = s("svg", { viewBox: `0 0 ${w} ${h}`, class: "chart", role: "img", "aria-label": label });
  for (const frac of [0, 0.25, 0.5, 0.75, 1]) {
    const yy = y(frac);
    svg.append(s("line", { x1: left, x2: w - right, y1: yy, y2: yy, class: frac === 1 ? "capacity" : "grid" }));
    svg.append(s("text", { x: left - 6, y: yy + 4, "text-anchor": "end", class: "tick" }, `${frac * 100} %`));
  }
  svg.append(s("text", { x: w - right, y: y(1) - 5, "text-anchor": "end", class: "capacity-label" }, "each link's capacity"));
  series.forEach((x, i) => {
    const colour = SERIES_COLOURS[i % SERIES_COLOURS.length];
    for (const dir of ["a-b", "b-a"]) {
      let d = "";
      for (const [a, b, mbps] of x.steps[dir]) {
        const xa = scale.x(Date.parse(a)), xb = scale.x(Date.parse(b)), yy = y(mbps / x.capacity);
        d += d ? ` L${xa},${yy} L${xb},${yy}` : `M${xa},${yy} L${xb},${yy}`;
      }
      svg.append(s("path", { d, class: `step series ${dir === "b-a" ? "back" : ""}`, stroke: colour, "data-link": x.id, "data-direction": dir }));
    }
  });
  svg.append(timeAxis(scale, bottom, bottom - top));
  svg.append(nowMarker(scale, top, bottom));
  return svg;
}
