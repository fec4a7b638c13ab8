import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { Received } from "./http-emulator.js";

/**
 * Recomputes an AWS Signature Version 4 server-side, written from the AWS
 * specification (docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html),
 * independently of the client's signing library: canonical request (non-S3
 * services encode each path segment a second time), string to sign, derived
 * key, HMAC. Returns why it fails, or undefined when the signature is right.
 */
export function verifySigV4(
  request: Received,
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
  service: string,
): string | undefined {
  const authorization = String(request.headers.authorization ?? "");
  const parsed = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
    authorization,
  );
  if (!parsed) return "Missing Authentication Token";
  const [, accessKeyId, date, region, signedService, signedHeaders, signature] = parsed as unknown as string[];
  if (accessKeyId !== credentials.accessKeyId) return "The security token included in the request is invalid.";
  if (signedService !== service) return `Credential should be scoped to correct service: '${service}'.`;
  if (credentials.sessionToken !== undefined && request.headers["x-amz-security-token"] !== credentials.sessionToken)
    return "The security token included in the request is invalid.";
  const amzDate = String(request.headers["x-amz-date"] ?? "");
  if (!amzDate.startsWith(date!)) return "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP.";
  const names = signedHeaders!.split(";");
  if (!names.includes("host")) return "'Host' must be a 'SignedHeader' in the AWS Authorization.";

  const [rawPath, rawQuery = ""] = request.path.split("?");
  const canonicalUri = rawPath!
    .split("/")
    .map((segment) => encode(segment))
    .join("/");
  const canonicalQuery = rawQuery
    .split("&")
    .filter(Boolean)
    .map((pair) => pair.split("=").map((part) => encode(decodeURIComponent(part))))
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
    .map(([key, value = ""]) => `${key}=${value}`)
    .join("&");
  const canonicalHeaders = names
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const canonicalRequest = [request.method, canonicalUri, canonicalQuery, canonicalHeaders, signedHeaders, sha256(request.raw)].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n");
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date!);
  for (const part of [region!, service, "aws4_request"]) key = hmac(key, part);
  const expected = createHmac("sha256", key).update(stringToSign).digest("hex");
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature!))) {
    return "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";
  }
  return undefined;
}

/** RFC 3986 percent-encoding as SigV4 wants it: everything but unreserved characters. */
function encode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
}

function sha256(data: string | Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac("sha256", key).update(data).digest();
}
