import aws4 from "aws4";
import type { PluginContext, ProviderConfig, RawAnswer, UpstreamCall } from "../../src/providers/plugin-api.js";

/** AWS credentials, read from the environment at each call so rotated session tokens are picked up. */
export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

function credentialsFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): AwsCredentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return undefined;
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}

/**
 * What is missing before `provider` can be called: a Bedrock API key (the
 * variable `api_key_env` names) or AWS credentials. The credentials are read
 * from the process environment, where the transport reads them at each
 * call (as the AWS SDKs do); the API key from the gateway's environment,
 * where every provider's key is read.
 */
export function missingAwsCredentials(provider: ProviderConfig, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (provider.apiKeyEnv && env[provider.apiKeyEnv]) return undefined;
  if (credentialsFromEnv(process.env)) return undefined;
  const credentials = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary credentials)";
  return provider.apiKeyEnv ? `${provider.apiKeyEnv} (a Bedrock API key) or ${credentials}` : `${credentials}, or name a Bedrock API key in api_key_env`;
}

/** The region: from a `bedrock-runtime.REGION.amazonaws.com` host, else AWS_REGION / AWS_DEFAULT_REGION, else us-east-1. */
function regionFor(host: string, env: NodeJS.ProcessEnv = process.env): string {
  return /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/.exec(host)?.[1] ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
}

/** A Bedrock runtime endpoint URL for one operation on one model (the model id is one path segment, `:` encoded). */
export function operationUrl(call: UpstreamCall, operation: string): URL {
  const base = call.provider.baseUrl ?? `https://bedrock-runtime.${regionFor(call.provider.host)}.amazonaws.com`;
  return new URL(`${base.replace(/\/+$/, "")}/model/${encodeURIComponent(call.model)}/${operation}`);
}

/**
 * Headers for one request: a Bedrock API key (`api_key_env`, sent as a
 * bearer token) when the route names one, else SigV4 (service `bedrock`)
 * from the environment's credentials, signed by aws4 over the exact body.
 */
function authorise(call: UpstreamCall, url: URL, body: string, accept: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept };
  if (call.apiKey) return { ...headers, authorization: `Bearer ${call.apiKey}`, ...call.provider.headers };
  const credentials = credentialsFromEnv();
  if (!credentials)
    throw new Error(
      "bedrock: no AWS credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or name a Bedrock API key in api_key_env",
    );
  const signed = aws4.sign(
    {
      host: url.host,
      path: url.pathname + url.search,
      method: "POST",
      service: "bedrock",
      region: regionFor(url.hostname),
      headers: { ...headers, ...call.provider.headers },
      body,
    },
    credentials,
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers ?? {})) {
    // undici derives Host and Content-Length itself, from the same URL and body that were signed
    if (value === undefined || /^(host|content-length)$/i.test(name)) continue;
    out[name.toLowerCase()] = String(value);
  }
  return out;
}

/**
 * POSTs a signed request through the core's pool, under the provider's
 * routes.yaml deadlines; an error's body is read whole by the caller.
 */
export function post(http: PluginContext["http"], call: UpstreamCall, url: URL, body: string, accept: string): Promise<RawAnswer> {
  return http.post(call, { url: url.href, headers: authorise(call, url, body, accept), body });
}
