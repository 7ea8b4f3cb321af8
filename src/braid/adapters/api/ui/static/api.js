// The one way to the server: /v1 with the session's bearer token.
import { timesZone } from "./fmt.js";
const KEY = "braid.token";
const ZONE = "braid.zone";

export const session = {
  token: () => sessionStorage.getItem(KEY),
  signIn: (token) => sessionStorage.setItem(KEY, token),
  signOut: () => { sessionStorage.removeItem(KEY); sessionStorage.removeItem(ZONE); },
  zone: () => sessionStorage.getItem(ZONE),
  chooseZone: (zone) => sessionStorage.setItem(ZONE, zone),
  user: null, // {name, role} once signed in
};

export class ApiError extends Error {
  constructor(status, error) {
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code;
    this.field = error.field;
    this.alternatives = error.alternatives || [];
    this.conflicts = error.conflicts || [];
    this.raw = error;
  }
}

// `tz`: the server writes the instants in its messages (a refusal's reasons) in the
// zone the page shows; one the server's tz database lacks is asked again without.
export async function api(method, path, { query, body } = {}, zone = timesZone()) {
  const url = new URL("/v1" + path, location.origin);
  for (const [k, v] of Object.entries({ ...query, tz: zone })) {
    if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  }
  const headers = { Authorization: `Bearer ${session.token() || ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    if (zone && response.status === 422 && data.error && data.error.field === "tz") {
      return api(method, path, { query, body }, null);
    }
    const error = new ApiError(response.status, data.error || {});
    if (response.status === 401) window.dispatchEvent(new CustomEvent("braid:signed-out"));
    throw error;
  }
  return data;
}

// Whole pages of a listing until `want` rows pass `keep` (or the listing ends):
// one request when nothing is filtered here, so a page never waits for 10,000
// rows; `next` continues after the last page read (none of its rows is dropped).
export async function someReservations(query, want, keep = () => true) {
  const out = [];
  let after = query.after || null;
  for (let page = 0; page < 20; page++) {
    const data = await api("GET", "/reservations", { query: { ...query, after, limit: want } });
    out.push(...data.reservations.filter(keep));
    after = data.next;
    if (!after || out.length >= want) break;
  }
  return { rows: out, next: after };
}
