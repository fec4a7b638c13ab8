"use strict";
// What every panel of the page shares: the DOM helpers, the key, and requests to the gateway.
// Everything from the gateway is rendered with textContent: its text is data, never markup.
const Dash = (window.Dash = {});

Dash.STORAGE_KEY = "carrierd.key";
Dash.$ = (id) => document.getElementById(id);

Dash.el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
};

Dash.key = () => sessionStorage.getItem(Dash.STORAGE_KEY);

/** A refused or failed request, with the gateway's error code and message when it sent one. */
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
Dash.ApiError = ApiError;

/** GET (or `method`) a gateway path with the key; the parsed JSON, or an ApiError. */
Dash.api = async (path, method = "GET") => {
  const key = Dash.key();
  if (!key) throw new ApiError(401, "invalid_api_key", "no key");
  let response;
  try {
    response = await fetch(path, { method, headers: { authorization: "Bearer " + key }, cache: "no-store" });
  } catch (error) {
    throw new ApiError(0, "unreachable", "the gateway did not answer: " + error.message);
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    // an empty or non-JSON body: the status says enough
  }
  if (!response.ok) {
    const error = (body && body.error) || {};
    throw new ApiError(response.status, error.code || String(response.status), error.message || response.statusText);
  }
  return body;
};

/** What a panel says when its key lacks the scope it reads with: the key stays, for the panels it can read. */
Dash.lacks = (scope) => "This key lacks the " + scope + " scope this panel needs; use the owner key or a key with " + scope + ".";

/** Why a panel shows nothing, in words an operator can act on. */
Dash.explain = (error, scope) => {
  if (error.status === 403) return Dash.lacks(scope);
  if (error.status === 401) return "The gateway refused the key.";
  return error.message + (error.code ? " (" + error.code + ")" : "");
};

Dash.ms = (value) => {
  if (typeof value !== "number") return "–";
  if (value < 1) return "<1 ms";
  if (value < 1000) return Math.round(value) + " ms";
  return (value / 1000).toFixed(value < 10000 ? 2 : 1) + " s";
};

Dash.count = (value) => (typeof value === "number" ? value.toLocaleString("en-US") : "–");

Dash.when = (iso) => {
  if (typeof iso !== "string") return "–";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
};

/**
 * A carriers route by what the operator wrote in routes.yaml: its `match`
 * (`route_match`), never its position. `number` names a turn stored before
 * the match was recorded.
 */
Dash.routeName = (match, number) => {
  if (match && typeof match === "object") {
    const parts = Object.entries(match).map(([key, value]) => key + " " + (Array.isArray(value) ? value.join(" or ") : String(value)));
    return parts.length === 0 ? "carriers for every model" : "carriers for " + parts.join(", ");
  }
  if (number > 0) return "carriers route " + number + " of routes.yaml";
  return "default carriers (no route matches)";
};

/** A long id by its end, where ids that share a prefix differ; the whole id is the cell's title. */
Dash.idTail = (id, keep = 9) => (typeof id === "string" && id.length > keep + 1 ? "…" + id.slice(-keep) : id);

/** A time today as its clock time, an older one as its date: what fits a table cell. */
Dash.shortWhen = (iso) => {
  const date = new Date(iso);
  if (typeof iso !== "string" || Number.isNaN(date.getTime())) return "–";
  return date.toDateString() === new Date().toDateString() ? date.toLocaleTimeString() : date.toLocaleDateString();
};
