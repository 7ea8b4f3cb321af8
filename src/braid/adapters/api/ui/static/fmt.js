// Units and instants as an operator reads them: Gbit/s, times in the zone chosen.

// A bandwidth in any form the API uses, in Mbit/s: a number is Mbit/s, a
// string may carry a unit as the server reads it ("20G", "500M", "2.5Gbps",
// "1000bps" is bit/s, "800" is Mbit/s). NaN for anything else.
const BANDWIDTH = /^\s*([+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)(bps|bit\/s|b\/s|bit|b)?\s*$/;
const PREFIX_MBPS = { "": 1, k: 1e-3, m: 1, g: 1e3, t: 1e6 };

export function mbit(value) {
  if (typeof value === "number") return value;
  if (typeof value !== "string") return NaN;
  const found = BANDWIDTH.exec(value);
  if (!found) return NaN;
  const amount = Number(found[1]), prefix = found[2].toLowerCase();
  if (!prefix && found[3]) return amount / 1e6;
  return amount * PREFIX_MBPS[prefix];
}

export function bw(value) {
  if (value === null || value === undefined || value === "") return "–";
  const mbps = mbit(value);
  if (!Number.isFinite(mbps)) return typeof value === "string" ? value : "–";
  if (Math.abs(mbps) >= 1e6) return `${+(mbps / 1e6).toFixed(2)} Tbit/s`;
  if (Math.abs(mbps) >= 1000) return `${+(mbps / 1000).toFixed(2)} Gbit/s`;
  return `${+mbps.toFixed(2)} Mbit/s`;
}

// A volume in bytes, in the decimal unit a person reads best (the server's TB are 10^12 bytes).
export function bytes(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "–";
  for (const [unit, size] of [["PB", 1e15], ["TB", 1e12], ["GB", 1e9], ["MB", 1e6], ["kB", 1e3]]) {
    if (Math.abs(value) >= size) return `${+(value / size).toFixed(2)} ${unit}`;
  }
  return `${value} B`;
}

export function pct(share) {
  return `${Math.round(share * 100)} %`;
}

export function ms(iso) {
  return Date.parse(iso);
}

export function iso(msTime) {
  return new Date(msTime).toISOString().replace(/\.\d{3}Z$/, "Z");
}

// The zone the page shows its times in and reads its date-time inputs in: the one
// chosen at the top of the page, first the user's tz setting, else this browser's
// zone, else UTC. The browser's own tz database (Intl) converts; nothing is loaded.
let shownZone = "UTC";
let wallClock = wallFormat("UTC");

function wallFormat(zone) {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit",
  });
}

// Every zone this browser knows (IANA names), UTC among them.
export function knownZones() {
  const names = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return names.includes("UTC") ? names : ["UTC", ...names];
}

export function browserZone() {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone && knownZones().includes(zone) ? zone : null;
}

// Show and read times in `zone`; a zone this browser does not know leaves UTC.
export function showTimesIn(zone) {
  shownZone = "UTC"; wallClock = wallFormat("UTC");
  if (!zone) return shownZone;
  try { wallClock = wallFormat(zone); shownZone = zone; } catch { /* UTC it is */ }
  return shownZone;
}

export function timesZone() {
  return shownZone;
}

function wallParts(msTime) {
  return Object.fromEntries(wallClock.formatToParts(new Date(msTime)).map((p) => [p.type, p.value]));
}

// The wall clock in the shown zone at `msTime`, as the milliseconds that wall time has in UTC.
function wallOf(msTime) {
  const p = wallParts(msTime);
  return Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour % 24, +p.minute, +p.second);
}

// How far the shown zone's wall clock is ahead of UTC at `msTime`, in milliseconds.
export function zoneOffset(msTime) {
  return wallOf(msTime) - msTime;
}

// "2030-01-01 10:00 UTC", or "2030-01-01 11:00 Europe/Paris": always the zone named.
export function when(value) {
  if (!value) return "–";
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return "–";
  const p = wallParts(d);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute} ${shownZone}`;
}

export function span(seconds) {
  if (seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

// An <input type="datetime-local"> (a wall time, no zone) read in the shown zone, with
// the offset the zone has at that wall time (DST-correct): the offsets a day either
// side are the two a fold can have, and the earlier reading wins, as on the server.
// A wall time the clocks skip reads with the offset before the jump; a form sends
// `atZone` text, so the server refuses it and says why.
export function fromInput(value) {
  if (!value) return NaN;
  const wall = Date.parse(value + (value.length === 16 ? ":00Z" : "Z"));
  if (Number.isNaN(wall)) return NaN;
  const readings = [wall - 86400e3, wall, wall + 86400e3].map((t) => wall - (wallOf(t) - t));
  const real = readings.filter((t) => wallOf(t) === wall);
  return real.length ? Math.min(...real) : readings[0];
}

// An instant as a datetime-local input's value: its wall time in the shown zone.
export function toInput(msTime) {
  const p = wallParts(msTime);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

// A datetime-local value as the server reads a local time: the wall time and the
// zone's name ("2030-01-01T11:00 Europe/Paris"); "" stays "" (left out).
export function atZone(value) {
  return value ? `${value} ${shownZone}` : "";
}

// A share of capacity as a colour, green (free) through amber to red (full).
export function shareColour(share) {
  if (share <= 0) return "#3f8f5a";
  if (share < 0.5) return "#7aa63c";
  if (share < 0.8) return "#d49a12";
  if (share < 1) return "#d9601e";
  return "#c0262d";
}

export const UNITS = { M: 1, G: 1000, T: 1e6 };
