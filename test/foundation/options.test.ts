import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, test } from "vitest";
import { DEFAULT_BODY_LIMIT, DEFAULT_PORT, parseSize, resolveOptions } from "../../src/foundation/config/options.js";

describe("gateway options: flags, then environment, then defaults", () => {
  test("defaults", () => {
    const options = resolveOptions({}, {});
    expect(options).toMatchObject({
      home: join(homedir(), ".carrierd"),
      routesPath: resolve("routes.yaml"),
      host: "127.0.0.1",
      port: DEFAULT_PORT,
      apiKey: undefined,
      corsOrigins: [],
      pluginDirs: [],
      logLevel: "info",
      bodyLimit: 10 * 1024 * 1024,
    });
    expect(DEFAULT_PORT).toBe(8642);
  });

  test("environment variables", () => {
    const options = resolveOptions(
      {},
      {
        CARRIERD_HOME: "/srv/carrierd",
        CARRIERD_ROUTES: "/etc/carrierd/routes.yaml",
        CARRIERD_HOST: "0.0.0.0",
        CARRIERD_PORT: "0",
        CARRIERD_API_KEY: "k",
        CARRIERD_CORS_ORIGINS: "https://a.example, https://b.example",
        CARRIERD_PLUGINS: "/opt/p1:/opt/p2",
        CARRIERD_LOG_LEVEL: "debug",
        CARRIERD_BODY_LIMIT: "20MiB",
      },
    );
    expect(options).toMatchObject({
      home: "/srv/carrierd",
      routesPath: "/etc/carrierd/routes.yaml",
      host: "0.0.0.0",
      port: 0,
      apiKey: "k",
      corsOrigins: ["https://a.example", "https://b.example"],
      pluginDirs: ["/opt/p1", "/opt/p2"],
      logLevel: "debug",
      bodyLimit: 20 * 1024 * 1024,
    });
  });

  test("flags win over the environment", () => {
    const env = { CARRIERD_HOME: "/env-home", CARRIERD_PORT: "9000", CARRIERD_CORS_ORIGINS: "https://env.example", CARRIERD_BODY_LIMIT: "1MiB" };
    const options = resolveOptions({ home: "/flag-home", port: 9100, corsOrigins: "*", bodyLimit: "2048" }, env);
    expect(options).toMatchObject({ home: "/flag-home", port: 9100, corsOrigins: ["*"], bodyLimit: 2048 });
  });

  test("an empty CARRIERD_API_KEY counts as unset (a key is generated)", () => {
    expect(resolveOptions({}, { CARRIERD_API_KEY: "" }).apiKey).toBeUndefined();
  });

  test.each(["-1", "65536", "eighty", "80.5"])("port %j is refused", (port) => {
    expect(() => resolveOptions({}, { CARRIERD_PORT: port })).toThrow(/invalid port/);
  });

  test.each([
    ["10485760", DEFAULT_BODY_LIMIT],
    ["10MiB", DEFAULT_BODY_LIMIT],
    ["10m", DEFAULT_BODY_LIMIT],
    ["512KiB", 512 * 1024],
    ["512 k", 512 * 1024],
  ])("body limit %j is %d bytes", (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  test.each(["0", "ten", "10GB", "-5", "1.5MiB"])("body limit %j is refused", (text) => {
    expect(() => parseSize(text)).toThrow(/invalid body limit/);
  });
});

test("the WAL checkpoint interval and limit come from the environment, and nonsense is refused", () => {
  const options = resolveOptions({}, { CARRIERD_WAL_CHECKPOINT_MS: "250", CARRIERD_WAL_LIMIT: "16MiB" });
  expect(options.walCheckpointMs).toBe(250);
  expect(options.walLimitBytes).toBe(16 * 1024 * 1024);
  expect(resolveOptions({}, {}).walLimitBytes).toBeUndefined(); // the checkpoint's own defaults apply
  expect(() => resolveOptions({}, { CARRIERD_WAL_CHECKPOINT_MS: "0" })).toThrow(/invalid CARRIERD_WAL_CHECKPOINT_MS/);
  expect(() => resolveOptions({}, { CARRIERD_WAL_LIMIT: "lots" })).toThrow(/invalid CARRIERD_WAL_LIMIT/);
});
