// The booking form: as the user types, where the request fits (all slots)
// and how much fits (max bandwidth); a refusal offers its alternatives.
import { api } from "./api.js";
import { clear, debounce, h, s } from "./dom.js";
import { UNITS, atZone, bw, bytes, fromInput, iso, span, timesZone, toInput, when } from "./fmt.js";
import { nowMarker, timeAxis, timeScale } from "./chart.js";
import { topology } from "./views-network.js";

const HOUR = 3600e3;
const DURATION_UNITS = { min: 60, h: 3600, d: 86400 };
const VOLUME_UNITS = ["GB", "TB", "PB"];

export async function bookView(root, go) {
  const topo = await topology();
  const f = fields(topo);
  const slots = h("div", { class: "chart-box", id: "slots" });
  const maxbw = h("p", { id: "max-bw", class: "hint", "aria-live": "polite" });
  const result = h("div", { id: "result", "aria-live": "polite" });
  const read = () => request(f);
  const preview = debounce(() => previewFits(read(), slots, maxbw, f), 350);
  const form = h("form", { class: "card book", onsubmit: (e) => { e.preventDefault(); book(read(), result, go, f); } },
    h("div", { class: "grid2" },
      h("label", { for: "b-src" }, "From"), f.src,
      h("label", { for: "b-dst" }, "To"), f.dst,
      h("label", { for: "b-bw", class: "rate-only" }, "Bandwidth"), h("span", { class: "pair rate-only" }, f.bandwidth, f.unit),
      h("span", { id: "when-label" }, "When"), h("span", { class: "pair", role: "radiogroup", "aria-labelledby": "when-label" },
        h("label", {}, f.fixed, " a fixed window"), h("label", {}, f.earliest, " the earliest slot"),
        h("label", {}, f.volume, " a volume by a deadline")),
      h("label", { for: "b-vol", class: "volume-only" }, "Volume"), h("span", { class: "pair volume-only" }, f.amount, f.volUnit),
      h("label", { for: "b-start", class: "fixed-only" }, `Start (${timesZone()})`), h("span", { class: "fixed-only" }, f.start),
      h("label", { for: "b-end", class: "fixed-only" }, `End (${timesZone()})`), h("span", { class: "fixed-only" }, f.end),
      h("label", { for: "b-dur", class: "earliest-only" }, "Duration"), h("span", { class: "pair earliest-only" }, f.duration, f.durUnit),
      h("label", { for: "b-after", class: "after-only" }, `Not before (${timesZone()})`), h("span", { class: "after-only" }, f.notBefore),
      h("label", { for: "b-before", class: "earliest-only" }, `Not after (${timesZone()})`), h("span", { class: "earliest-only" }, f.notAfter),
      h("label", { for: "b-deadline", class: "volume-only" }, `Deadline (${timesZone()})`), h("span", { class: "volume-only" }, f.deadline),
      h("label", { for: "b-objective", class: "volume-only" }, "Profile"), h("span", { class: "volume-only" }, f.objective),
      h("label", { for: "b-paths", class: "rate-only" }, "Paths at most"), h("span", { class: "rate-only" }, f.paths),
      h("span", {}, "Hold"), h("label", {}, f.hold, " hold it first, confirm later")),
    h("button", { type: "submit", id: "b-submit" }, "Book"));
  const modeChanged = () => {
    form.classList.toggle("mode-fixed", f.fixed.checked);
    form.classList.toggle("mode-earliest", f.earliest.checked);
    form.classList.toggle("mode-volume", f.volume.checked);
    preview();
  };
  form.addEventListener("input", preview);
  form.addEventListener("change", modeChanged);
  // The result right under the form (and scrolled to when it comes), not under the preview.
  root.append(h("h1", {}, "Book bandwidth"),
    h("div", { class: "split" }, h("div", {}, form, result),
      h("section", { class: "card", "aria-labelledby": "fits-title" },
        h("h2", { id: "fits-title" }, "Where it fits"), maxbw, slots)));
  modeChanged();
}

function fields(topo) {
  const nodes = topo.nodes.map((n) => n.id);
  const select = (id, chosen) => h("select", { id, required: true }, nodes.map((n) => h("option", { value: n, selected: n === chosen }, n)));
  const start = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
  return {
    src: select("b-src", nodes[0]),
    dst: select("b-dst", nodes[Math.min(4, nodes.length - 1)]),
    bandwidth: h("input", { id: "b-bw", type: "number", min: 0, step: "any", value: 10, required: true, "aria-label": "bandwidth amount" }),
    unit: h("select", { id: "b-unit", "aria-label": "bandwidth unit" }, Object.keys(UNITS).map((u) => h("option", { value: u, selected: u === "G" }, `${u}bit/s`))),
    fixed: h("input", { type: "radio", name: "when", id: "b-fixed", value: "fixed", checked: true }),
    earliest: h("input", { type: "radio", name: "when", id: "b-earliest", value: "earliest" }),
    volume: h("input", { type: "radio", name: "when", id: "b-volume", value: "volume" }),
    amount: h("input", { id: "b-vol", type: "number", min: 0, step: "any", value: 10, "aria-label": "volume amount" }),
    volUnit: h("select", { id: "b-vol-unit", "aria-label": "volume unit" }, VOLUME_UNITS.map((u) => h("option", { value: u, selected: u === "TB" }, u))),
    deadline: h("input", { id: "b-deadline", type: "datetime-local", value: toInput(start + 24 * HOUR) }),
    objective: h("select", { id: "b-objective" },
      h("option", { value: "earliest" }, "done as early as possible"),
      h("option", { value: "flattest" }, "the lowest rate that meets the deadline")),
    start: h("input", { id: "b-start", type: "datetime-local", value: toInput(start) }),
    end: h("input", { id: "b-end", type: "datetime-local", value: toInput(start + 2 * HOUR) }),
    duration: h("input", { id: "b-dur", type: "number", min: 1, value: 2, "aria-label": "duration amount" }),
    durUnit: h("select", { id: "b-dur-unit", "aria-label": "duration unit" }, Object.keys(DURATION_UNITS).map((u) => h("option", { value: u, selected: u === "h" }, u))),
    notBefore: h("input", { id: "b-after", type: "datetime-local", value: toInput(start - HOUR) }),
    notAfter: h("input", { id: "b-before", type: "datetime-local", value: toInput(start + 7 * 24 * HOUR) }),
    paths: h("select", { id: "b-paths" }, [1, 2, 3, 4].map((n) => h("option", { value: n }, String(n)))),
    hold: h("input", { id: "b-hold", type: "checkbox" }),
  };
}

// The request as the form says it, with the range to look for slots in.
function request(f) {
  if (f.volume.checked) {
    const t0 = fromInput(f.notBefore.value), t1 = fromInput(f.deadline.value);
    const body = { mode: "volume", src: f.src.value, dst: f.dst.value, volume: `${f.amount.value}${f.volUnit.value}`,
      not_before: atZone(f.notBefore.value), deadline: atZone(f.deadline.value), objective: f.objective.value };
    return { body, seconds: Math.round((t1 - t0) / 1000), t0, t1, window: null, volume: true };
  }
  const base = { src: f.src.value, dst: f.dst.value, bandwidth: `${f.bandwidth.value}${f.unit.value}` };
  const maxPaths = Number(f.paths.value);
  if (maxPaths > 1) base.max_paths = maxPaths;
  if (f.earliest.checked) {
    const seconds = Math.round(Number(f.duration.value) * DURATION_UNITS[f.durUnit.value]);
    const t0 = fromInput(f.notBefore.value), t1 = fromInput(f.notAfter.value);
    return { body: { ...base, mode: "earliest", duration: seconds, not_before: atZone(f.notBefore.value), not_after: atZone(f.notAfter.value) }, seconds, t0, t1, window: null };
  }
  const a = fromInput(f.start.value), b = fromInput(f.end.value);
  const seconds = Math.round((b - a) / 1000);
  const t0 = Math.min(a, Date.now()), t1 = Math.max(b, a) + 3 * 86400e3;
  return { body: { ...base, start: atZone(f.start.value), end: atZone(f.end.value) }, seconds, t0, t1, window: [a, b] };
}

async function previewFits(req, box, maxbw, f) {
  clear(box);
  if (!(req.seconds > 0) || !(req.t1 > req.t0) || Number.isNaN(req.t0)) {
    maxbw.textContent = "Give a window whose end is after its start.";
    return;
  }
  if (req.volume) return previewVolume(req, maxbw);
  const common = { src: req.body.src, dst: req.body.dst, max_paths: req.body.max_paths };
  const windowOf = req.window || [req.t0, req.t0 + req.seconds * 1000];
  try {
    const [all, most] = await Promise.all([
      api("GET", "/availability", { query: { ...common, mode: "all-slots", bandwidth: req.body.bandwidth, duration: req.seconds, window_start: iso(Math.max(req.t0, Date.now())), window_end: iso(req.t1) } }),
      api("GET", "/availability", { query: { ...common, mode: "max-bandwidth", start: iso(windowOf[0]), end: iso(windowOf[1]) } }),
    ]);
    maxbw.textContent = `At most ${bw(most.max_bandwidth)} fits ${when(windowOf[0])} – ${when(windowOf[1])}` +
      (most.paths ? ` over ${most.paths.length} path(s)` : "") + (most.max_flow ? `; ${bw(most.max_flow)} over every path together.` : ".");
    box.append(slotChart(all.slots || [], all.free || [], req, f));
    box.append(h("p", { class: "hint" }, all.slots && all.slots.length
      ? `${bw(all.bandwidth)} for ${span(req.seconds)} can start in the green ranges; select one to move the window there.`
      : "It fits nowhere in this range: ask for less, for longer, or look further ahead."));
  } catch (e) {
    maxbw.textContent = e.message;
  }
}

// Whether the volume moves by the deadline, and if not how much does and when all of it would.
async function previewVolume(req, maxbw) {
  try {
    const a = await api("GET", "/availability", { query: req.body });
    maxbw.textContent = a.status === "available"
      ? `All ${bytes(a.volume)} move by ${when(a.completion)}, at most ${bw(a.peak)}, in ${a.profile.length} step(s).`
      : a.reason;
  } catch (e) {
    maxbw.textContent = e.message;
  }
}

// `slots` are spans of start times; `free[i]` is span i's free time, which runs on
// until a booking at its last start ends (the server says it: last start + duration).
function slotChart(slots, free, req, f) {
  const w = 600, top = 10, bottom = 70;
  const scale = timeScale(req.t0, req.t1, 10, w - 10);
  const svg = s("svg", { viewBox: `0 0 ${w} 96`, class: "slots", role: "group", "aria-label": "feasible start times" });
  slots.forEach(([a, b], i) => {
    const xa = scale.x(Date.parse(a)), xb = scale.x(Date.parse(b));
    const choose = () => moveTo(f, Date.parse(a), req.seconds);
    const until = free[i] ? `; free ${when(free[i][0])} – ${when(free[i][1])}` : "";
    svg.append(s("rect", { x: xa, y: top + 10, width: Math.max(xb - xa, 3), height: 24, class: "slot", tabindex: 0, role: "button",
      "aria-label": `can start from ${when(a)} to ${when(b)}${until}`, onclick: choose,
      onkeydown: (e) => { if (e.key === "Enter") choose(); } }, s("title", {}, `can start ${when(a)} – ${when(b)}${until}`)));
  });
  if (req.window) {
    const xa = scale.x(req.window[0]), xb = scale.x(req.window[1]);
    svg.append(s("rect", { x: xa, y: top + 40, width: Math.max(xb - xa, 3), height: 14, class: "asked" }, s("title", {}, "the window asked for")));
    svg.append(s("text", { x: xa, y: top + 38, class: "tick" }, "asked"));
  }
  svg.append(timeAxis(scale, bottom, bottom - top));
  svg.append(nowMarker(scale, top, bottom));
  return svg;
}

function moveTo(f, start, seconds) {
  if (f.earliest.checked) {
    f.notBefore.value = toInput(start);
  } else {
    f.start.value = toInput(start);
    f.end.value = toInput(start + seconds * 1000);
  }
  f.start.dispatchEvent(new Event("input", { bubbles: true }));
}

async function book(req, box, go, f) {
  clear(box);
  const body = { ...req.body };
  if (f.hold.checked) body.hold = true;
  try {
    const r = await api("POST", "/reservations", { body });
    box.append(booked(r, go));
    box.scrollIntoView({ block: "nearest" });
  } catch (e) {
    box.append(h("div", { class: "card error", role: "alert" },
      h("h2", {}, e.status === 409 ? "It does not fit as asked" : "Not booked"),
      h("p", {}, e.message),
      e.alternatives.length ? h("p", {}, "Book one of these instead:") : null,
      h("ul", { class: "alternatives" }, e.alternatives.map((alt) => h("li", {},
        h("button", { type: "button", class: "alt", "data-kind": alt.kind, onclick: () => book({ body: alt.body }, box, go, f) },
          describe(alt)))))));
    box.scrollIntoView({ block: "nearest" });
  }
}

function describe(alt) {
  const b = alt.body;
  if (b.mode === "volume") {
    const kind = { earliest_completion: "All of it by a later deadline", most_by_deadline: "Less by this deadline" }[alt.kind] || alt.kind;
    return `${kind}: ${typeof b.volume === "number" ? bytes(b.volume) : b.volume} by ${when(b.deadline)}`;
  }
  const window = b.start ? `${when(b.start)} – ${when(b.end)}` : `${span(Number(b.duration))} from ${when(b.not_before)}`;
  const kind = { earliest_start: "Earliest start", max_bandwidth: "Highest bandwidth", split: "Split over paths" }[alt.kind] || alt.kind;
  return `${kind}: ${bw(b.bandwidth)}, ${window}${b.max_paths ? `, up to ${b.max_paths} paths` : ""}`;
}

function booked(r, go) {
  const confirm = async () => {
    await api("POST", `/reservations/${encodeURIComponent(r.id)}/confirm`);
    go(`#/reservations/${encodeURIComponent(r.id)}`);
  };
  return h("div", { class: "card ok", role: "status" },
    h("h2", {}, r.state === "held" ? "Held" : "Booked"),
    h("p", {}, r.volume
      ? `${r.id}: ${r.src} → ${r.dst}, ${bytes(r.volume.bytes)} from ${when(r.start)}, done by ${when(r.volume.completion)} in ${r.volume.profile.length} step(s).`
      : `${r.id}: ${r.src} → ${r.dst}, ${bw(r.bandwidth)}, ${when(r.start)} – ${when(r.end)}, over ${r.paths.length} path(s).`),
    r.state === "held" ? h("p", {}, `The hold expires ${when(r.hold_expires_at)}. `, h("button", { type: "button", id: "confirm-hold", onclick: confirm }, "Confirm")) : null,
    h("p", {}, h("a", { href: `#/reservations/${encodeURIComponent(r.id)}`, id: "booked-link" }, "Open the reservation")));
}
