import { describe, expect, test } from "vitest";
import { classifyOpenAIError } from "../../plugins/openai-compatible/errors.js";
import { fieldsToReject } from "../../src/routing/verdicts/unknown-field.js";
import { LOOK_ALIKES, PHRASINGS } from "./phrasings.js";

const ALL = ["reasoning_content", "reasoning", "reasoning_details"];

describe("classifier", () => {
  test.each(Object.entries(PHRASINGS))("%s: names the field", (_name, profile) => {
    expect(classifyOpenAIError(profile.status, profile.body(2, profile.fields[0]!), ALL)).toBe(profile.named);
  });

  test("the real Mistral, Groq and Cerebras bodies", () => {
    const mistral = `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","messages",2,"assistant","reasoning"],"msg":"Extra inputs are not permitted","input":"","url":"https://errors.pydantic.dev/2.6/v/extra_forbidden"}]},"type":"invalid_request_error","param":null,"code":null}`;
    expect(classifyOpenAIError(422, mistral, ALL)).toBe("reasoning");
    const groq = `{"error":{"message":"'messages.4' : for 'role:assistant' the following must be satisfied[('messages.4' : property 'reasoning_content' is unsupported)]","type":"invalid_request_error"}}`;
    expect(classifyOpenAIError(400, groq, ALL)).toBe("reasoning_content");
    const cerebras = `{"message":"messages.2.assistant.reasoning_content: property 'messages.2.assistant.reasoning_content' is unsupported","type":"invalid_request_error","param":"validation_error","code":"wrong_api_format"}`;
    expect(classifyOpenAIError(400, cerebras, ["reasoning"])).toBeUndefined(); // not sent: does not count
    expect(classifyOpenAIError(400, cerebras, ALL)).toBe("reasoning_content");
  });

  test.each(Object.entries(LOOK_ALIKES))("look-alike %s: nothing", (_name, error) => {
    expect(classifyOpenAIError(error.status, error.body, ["reasoning_content", "reasoning"])).toBeUndefined();
  });

  test("must-echo errors are not unknown-field errors", () => {
    const deepseek =
      '{"error":{"message":"The `reasoning_content` in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}';
    expect(classifyOpenAIError(400, deepseek, ALL)).toBeUndefined();
  });
});

describe("widening and exemptions", () => {
  test("reasoning_content named: everything sent; reasoning or details named: those two where sent", () => {
    expect(fieldsToReject("reasoning_content", ["reasoning_content", "reasoning", "reasoning_details"], false, [])).toEqual([
      "reasoning_content",
      "reasoning",
      "reasoning_details",
    ]);
    expect(fieldsToReject("reasoning", ["reasoning_content", "reasoning", "reasoning_details"], false, [])).toEqual(["reasoning", "reasoning_details"]);
    expect(fieldsToReject("reasoning_details", ["reasoning_content", "reasoning_details"], false, [])).toEqual(["reasoning_details"]);
  });
  test("must-echo: reasoning_content never recorded; nothing new, no retry", () => {
    expect(fieldsToReject("reasoning_content", ["reasoning_content"], true, [])).toEqual([]);
    expect(fieldsToReject("reasoning_details", ["reasoning_content", "reasoning_details"], true, [])).toEqual(["reasoning_details"]);
    expect(fieldsToReject("reasoning", ["reasoning"], false, ["reasoning"])).toEqual([]);
    expect(fieldsToReject(undefined, ALL as never, false, [])).toEqual([]);
  });
});
