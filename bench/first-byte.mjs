// Time to the first reasoning byte of streamed answers, at a fixed concurrency.
// Run as its own process, pinned to the load generator's core, so
// the client never competes with the server it measures; plain sockets rather
// than an HTTP client library keep its own cost per byte small.
//   node first-byte.mjs URL BODY_FILE KEY [TOTAL] [CONCURRENCY] [WARMUP]
// Prints {"p50":ms,"p99":ms,"samples":n} once WARMUP requests have been made
// and discarded (the first requests through a cold JIT, on either side, are
// not what a running gateway costs).
import { readFileSync } from "node:fs";
import { connect } from "node:net";

const [url, bodyFile, key, totalText = "320", concurrencyText = "16", warmupText = "160"] = process.argv.slice(2);
const target = new URL(url);
const body = readFileSync(bodyFile);
const total = Number(totalText);
const warmup = Number(warmupText);
const head = Buffer.from(
  `POST ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\ncontent-type: application/json\r\n` +
    `authorization: Bearer ${key}\r\ncontent-length: ${body.length}\r\n\r\n`,
);
const MARKER = "think";
// every answer measured here is chunked (an event stream); its last chunk ends it
const LAST_CHUNK = "\r\n0\r\n\r\n";

let started = 0;
const samples = [];

function connection() {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname);
    socket.setNoDelay(true);
    let sentAt = 0;
    let seen = false;
    let tail = "";
    let received = "";
    const send = () => {
      if (started >= warmup + total) {
        socket.end();
        return resolve();
      }
      const measured = started++ >= warmup;
      sentAt = performance.now();
      seen = !measured; // a warm-up request records nothing
      tail = "";
      received = "";
      socket.write(head);
      socket.write(body);
    };
    socket.on("connect", send);
    socket.on("data", (data) => {
      const text = data.toString("latin1");
      if (!seen) {
        received += text;
        if (received.includes(MARKER)) {
          samples.push(performance.now() - sentAt);
          seen = true;
        }
      }
      tail = (tail + text).slice(-LAST_CHUNK.length);
      if (tail === LAST_CHUNK) send();
    });
    socket.on("error", reject);
  });
}

await Promise.all(Array.from({ length: Number(concurrencyText) }, connection));
samples.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ p50: samples[samples.length >> 1], p99: samples[Math.floor(samples.length * 0.99)], samples: samples.length })}\n`);
