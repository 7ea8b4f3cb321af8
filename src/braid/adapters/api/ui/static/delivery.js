// A reservation's delivery, measured: offered and delivered Mbit/s per sampling
// interval against the booked rate (GET /v1/reservations/{id}/delivery), drawn
// as an SVG with the same axes as the other charts.
import { api } from "./api.js";
import { h, s } from "./dom.js";
import { bw } from "./fmt.js";
import { timeAxis, timeScale } from "./chart.js";

const EXPLAINED = {
  ok: "the traffic gets what it booked",
  degraded: "under 95 % of the booked rate arrives while the sender offers at least that",
  idle: "the sender offers less than the booked rate",
  unmeasured: "no counters sampled yet",
};

export async function deliverySection(id) {
  const found = await api("GET", `/reservations/${encodeURIComponent(id)}/delivery`);
  const parts = [
    h("h2", {}, "Delivery"),
    h("p", { id: "delivery-status" },
      h("span", { class: `pill delivery-${found.status}` }, found.status),
      ` ${EXPLAINED[found.status] || ""} (booked ${bw(found.booked)})`),
  ];
  for (const d of found.directions) {
    if (d.intervals.length) parts.push(h("div", { class: "chart-box" }, deliveryChart(d, found.booked)));
  }
  return h("section", { id: "delivery" }, ...parts);
}

function deliveryChart(direction, booked) {
  const w = 1000, ht = 300, left = 70, right = 20, top = 30, bottom = 250;
  const t0 = Date.parse(direction.intervals[0].start);
  const t1 = Date.parse(direction.intervals[direction.intervals.length - 1].end);
  const scale = timeScale(t0, t1, left, w - right);
  const peak = Math.max(booked * 1.2, ...direction.intervals.map((i) => Math.max(i.offered, i.delivered)));
  const y = (mbps) => bottom - (mbps / peak) * (bottom - top);
  const label = `${direction.from} → ${direction.to}: ${direction.status}`;
  const svg = s("svg", { viewBox: `0 0 ${w} ${ht}`, class: "chart", role: "img", "aria-label": label });
  svg.append(s("text", { x: left, y: top - 12, class: "tick" }, `${label}; solid: delivered, dashed: offered`));
  for (const frac of [0, 0.5, 1]) {
    const yy = y(peak * frac);
    svg.append(s("line", { x1: left, x2: w - right, y1: yy, y2: yy, class: "grid" }));
    svg.append(s("text", { x: left - 6, y: yy + 4, "text-anchor": "end", class: "tick" }, bw(peak * frac)));
  }
  svg.append(s("line", { x1: left, x2: w - right, y1: y(booked), y2: y(booked), class: "capacity" }));
  svg.append(s("text", { x: w - right, y: y(booked) - 5, "text-anchor": "end", class: "capacity-label" }, `booked ${bw(booked)}`));
  for (const [key, cls] of [["offered", "dir-ba"], ["delivered", "dir-ab"]]) {
    let d = "";
    for (const i of direction.intervals) {
      const xa = scale.x(Date.parse(i.start)), xb = scale.x(Date.parse(i.end)), yy = y(i[key]);
      d += d ? ` L${xa},${yy} L${xb},${yy}` : `M${xa},${yy} L${xb},${yy}`;
    }
    svg.append(s("path", { d, class: `step ${cls}`, "data-series": key }));
  }
  svg.append(timeAxis(scale, bottom, bottom - top));
  return svg;
}
