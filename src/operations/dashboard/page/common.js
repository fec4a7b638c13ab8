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

/** Why a panel shows nothing, in words an operator can act on. */
Dash.explain = (error, scope) => {
  if (error.status === 403) return "This key lacks the " + scope + " scope this panel needs; use the owner key or a key with " + scope + ".";
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

/** A time today as its clock time, an older one as its date: what fits a table cell. */
Dash.shortWhen = (iso) => {
  const date = new Date(iso);
  if (typeof iso !== "string" || Number.isNaN(date.getTime())) return "–";
  return date.toDateString() === new Date().toDateString() ? date.toLocaleTimeString() : date.toLocaleDateString();
};
