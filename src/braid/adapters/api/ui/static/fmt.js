// Units and instants as an operator reads them: Gbit/s, UTC.

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

// The zone shown times are in: the user's tz setting (GET /v1/me), else UTC.
// The browser's own tz database (Intl) converts; nothing is loaded for it.
let shownZone = null;
let wallClock = null;

export function showTimesIn(zone) {
  shownZone = null; wallClock = null;
  if (!zone) return;
  try {
    wallClock = new Intl.DateTimeFormat("en-GB", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit",
    });
    shownZone = zone;
  } catch { wallClock = null; }  // a zone this browser does not know: UTC it is
}

export function timesZone() {
  return shownZone || "UTC";
}

// "2030-01-01 10:00 UTC", or "2030-01-01 11:00 Europe/Paris" with the user's tz
export function when(value) {
  if (!value) return "–";
  const d = typeof value === "number" ? new Date(value) : new Date(value);
  if (!wallClock) return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  const part = Object.fromEntries(wallClock.formatToParts(d).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute} ${shownZone}`;
}

export function span(seconds) {
  if (seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

// <input type="datetime-local"> holds no zone: braid's pages read it as UTC.
export function fromInput(value) {
  return value ? Date.parse(value + (value.length === 16 ? ":00Z" : "Z")) : NaN;
}

export function toInput(msTime) {
  return new Date(msTime).toISOString().slice(0, 16);
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
