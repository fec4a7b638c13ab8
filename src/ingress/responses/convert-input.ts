import { isEnvelope } from "../../routing/carriers/envelope.js";
import { GatewayError } from "../../foundation/errors/gateway-error.js";
import type { ChatMessage, Json, JsonObject, ToolCall } from "../../providers/contract.js";
import { shown } from "../../foundation/util/shown.js";
import { isJsonObject, readObject, readString } from "../../providers/json-readers.js";
import { NamespacedNames } from "./namespaced-names.js";
import { noteMember, type RequestStrings } from "../request-strings.js";

/** Looks up an output item by id (for `item_reference` inputs). */
export type ItemResolver = (id: string) => JsonObject | undefined;

/**
 * Responses `input` → canonical chat messages. Assistant-side items that
 * follow each other (reasoning, assistant message, function_call) fold into
 * one assistant message, as one turn of a chat history; a reasoning item
 * after visible output starts the next turn. Reasoning items become the
 * message's carriers (`reasoning_content`, and `reasoning_details` for
 * encrypted content): replay decides per route what of it goes upstream.
 * An envelope carrierd sealed (docs/api.md#encrypted-reasoning) is never
 * a carrier itself: it goes into `envelopes` under its message, the first
 * one of a message wins (but a text-less reasoning item closing a turn:
 * foldedIntoPrevious), and the caller opens it. With `strings` (the
 * input's long strings in the request bytes), a message's string that is an
 * item's string as it was sent is noted as those bytes (request-strings.ts).
 * With `carried` (a request carried as sent, docs/architecture.md#two-paths)
 * nothing is refused: an item the conversion cannot read is left out of the
 * turn's view only, and each assistant message's input positions are noted.
 */
export function convertInput(
  input: string | unknown[],
  resolve: ItemResolver,
  names: NamespacedNames = NamespacedNames.NONE,
  envelopes?: Map<ChatMessage, string>,
  strings?: RequestStrings,
  carried?: Map<ChatMessage, number[]>,
): ChatMessage[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  const messages: ChatMessage[] = [];
  let assistant: ChatMessage | undefined;
  const flush = () => {
    if (!assistant) return;
    if (!foldedIntoPrevious(assistant, messages, envelopes)) messages.push(assistant);
    else if (carried) carried.set(messages.at(-1)!, [...(carried.get(messages.at(-1)!) ?? []), ...(carried.get(assistant) ?? [])]);
    assistant = undefined;
  };
  const turn = (): ChatMessage => (assistant ??= { role: "assistant", content: null });

  input.forEach((raw, position) => {
    if (!carried) return void convertItem(raw, position);
    let joined: ChatMessage | undefined;
    try {
      joined = convertItem(raw, position);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
    }
    // the carried body finds a turn's items by these positions
    if (joined) carried.set(joined, [...(carried.get(joined) ?? []), position]);
  });
  flush();
  return messages;

  /** One item into the messages; returns the assistant turn it joined, if it did. */
  function convertItem(raw: unknown, position: number): ChatMessage | undefined {
    const path = `input[${position}]`;
    let item = asObject(raw, path);
    if (item.type === "item_reference") {
      const id = requireString(item.id, `${path}.id`);
      const found = resolve(id);
      if (!found) throw new GatewayError("not_found", `Item with id '${id}' not found.`, `${path}.id`);
      item = found;
    }
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    switch (type) {
      case "message": {
        const role = item.role;
        if (role === "assistant") {
          const text = assistantText(item.content, `${path}.content`);
          const current = turn();
          current.content = typeof current.content === "string" ? current.content + text : text;
          return current;
        } else if (role === "user" || role === "system" || role === "developer") {
          flush();
          // a developer message stays one: the plugin spells it as its upstream reads it
          const message: ChatMessage = { role, content: userContent(item.content, `${path}.content`) };
          if (strings && item === raw) noteSent(strings, position, item, message, "content", "content");
          messages.push(message);
        } else {
          throw new GatewayError(
            "invalid_request",
            `Invalid value for '${path}.role': must be one of 'user', 'assistant', 'system', 'developer'.`,
            `${path}.role`,
          );
        }
        break;
      }
      case "reasoning": {
        if (assistant && (assistant.content || assistant.tool_calls?.length)) flush();
        const current = turn();
        addReasoning(current, item, path, envelopes);
        return current;
      }
      case "function_call": {
        const name = requireString(item.name, `${path}.name`);
        // a namespace's function, as the client resends the call carrierd answered: the upstream knows it by its flat name
        const upstreamName = typeof item.namespace === "string" && item.namespace ? names.flatten(item.namespace, name) : name;
        const call: ToolCall = {
          id: requireString(item.call_id, `${path}.call_id`),
          type: "function",
          function: { name: upstreamName, arguments: typeof item.arguments === "string" ? item.arguments : "" },
        };
        const current = turn();
        (current.tool_calls ??= []).push(call);
        return current;
      }
      case "function_call_output": {
        flush();
        const message: ChatMessage = {
          role: "tool",
          tool_call_id: requireString(item.call_id, `${path}.call_id`),
          content: toolOutput(item.output, `${path}.output`),
        };
        if (strings && item === raw) noteSent(strings, position, item, message, "content", "output");
        messages.push(message);
        break;
      }
      default:
        throw new GatewayError("invalid_request", `Input items of type '${shown(type)}' are not supported by carrierd.`, `${path}.type`);
    }
    return undefined;
  }
}

/**
 * Notes `message[key]` as the bytes of the item's member `from` when it is
 * that string as sent (an item of the request itself, never one an
 * item_reference resolved to).
 */
function noteSent(strings: RequestStrings, position: number, item: JsonObject, message: ChatMessage, key: string, from: string): void {
  if (typeof item[from] !== "string" || message[key] !== item[from]) return;
  noteMember(
    strings,
    message,
    key,
    strings.elements[position]?.members.find((member) => member.key === from),
  );
}

/**
 * A turn that is one reasoning item with no text and no output after it is
 * the last item of the turn before it: the envelope carrierd appends once a
 * turn's late carriers have arrived, after the text and calls it streamed
 * live (docs/api.md#encrypted-reasoning). Its envelope replaces the earlier
 * one of that turn, and its carriers join that turn's.
 */
function foldedIntoPrevious(turn: ChatMessage, messages: ChatMessage[], envelopes: Map<ChatMessage, string> | undefined): boolean {
  const previous = messages.at(-1);
  if (previous?.role !== "assistant" || turn.content || turn.tool_calls?.length || turn.reasoning_content) return false;
  const envelope = envelopes?.get(turn);
  if (envelope !== undefined) {
    envelopes!.delete(turn);
    envelopes!.set(previous, envelope);
  }
  if (Array.isArray(turn.reasoning_details))
    previous.reasoning_details = [...(Array.isArray(previous.reasoning_details) ? previous.reasoning_details : []), ...turn.reasoning_details];
  return envelope !== undefined || Array.isArray(turn.reasoning_details);
}

/** Summary and reasoning text are one plain reasoning text (docs/api.md#multi-turn); encrypted content is kept verbatim. */
function addReasoning(message: ChatMessage, item: JsonObject, path: string, envelopes: Map<ChatMessage, string> | undefined): void {
  const texts: string[] = [];
  for (const list of [item.summary, item.content]) {
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw new GatewayError("invalid_request", `Invalid type for '${path}.summary': expected an array.`, `${path}.summary`);
    for (const part of list) {
      const text = readString(readObject(part)?.text);
      if (text !== undefined) texts.push(text);
    }
  }
  const text = texts.join("\n\n");
  if (text) message.reasoning_content = message.reasoning_content ? `${message.reasoning_content}\n\n${text}` : text;
  if (isEnvelope(item.encrypted_content)) {
    if (!envelopes?.has(message)) envelopes?.set(message, item.encrypted_content);
  } else if (typeof item.encrypted_content === "string" && item.encrypted_content) {
    const detail: { [key: string]: Json } = { type: "reasoning.encrypted", data: item.encrypted_content, format: "openai-responses-v1" };
    if (typeof item.id === "string") detail.id = item.id;
    (message.reasoning_details ??= []).push(detail);
  }
}

/** Text-only content becomes a plain string: every chat upstream reads that, not all of them read part arrays (the AI SDK always sends parts). */
function userContent(content: unknown, path: string): string | JsonObject[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new GatewayError("invalid_request", `Invalid type for '${path}': expected a string or an array of content parts.`, path);
  const parts = contentParts(content, path);
  return parts.every((part) => part.type === "text") ? parts.map((part) => readString(part.text) ?? "").join("\n") : parts;
}

function contentParts(content: unknown[], path: string): JsonObject[] {
  return content.map((raw, index): JsonObject => {
    const part = asObject(raw, `${path}[${index}]`);
    switch (part.type) {
      case "input_text":
      case "output_text":
        return { type: "text", text: requireString(part.text, `${path}[${index}].text`) };
      case "input_image": {
        const url = typeof part.image_url === "string" ? part.image_url : undefined;
        if (!url)
          throw new GatewayError(
            "invalid_request",
            `'${path}[${index}]': only input_image parts with an image_url are supported.`,
            `${path}[${index}].image_url`,
          );
        return { type: "image_url", image_url: part.detail ? { url, detail: part.detail } : { url } };
      }
      case "input_file": {
        if (typeof part.file_data !== "string")
          throw new GatewayError("invalid_request", `'${path}[${index}]': only input_file parts with file_data are supported.`, `${path}[${index}].file_data`);
        const file: { [key: string]: Json } = { file_data: part.file_data };
        if (typeof part.filename === "string") file.filename = part.filename;
        return { type: "file", file };
      }
      default:
        throw new GatewayError(
          "invalid_request",
          `Invalid value for '${path}[${index}].type': unsupported content part type '${shown(part.type)}'.`,
          `${path}[${index}].type`,
        );
    }
  });
}

function assistantText(content: unknown, path: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new GatewayError("invalid_request", `Invalid type for '${path}': expected a string or an array of content parts.`, path);
  return content
    .map((raw, index) => {
      const part = asObject(raw, `${path}[${index}]`);
      if (part.type === "output_text" || part.type === "input_text") return requireString(part.text, `${path}[${index}].text`);
      if (part.type === "refusal") return typeof part.refusal === "string" ? part.refusal : "";
      throw new GatewayError(
        "invalid_request",
        `Invalid value for '${path}[${index}].type': unsupported content part type '${shown(part.type)}'.`,
        `${path}[${index}].type`,
      );
    })
    .join("");
}

function toolOutput(output: unknown, path: string): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map((part) => readString(readObject(part)?.text) ?? "").join("");
  throw new GatewayError("invalid_request", `Invalid type for '${path}': expected a string or an array of content parts.`, path);
}

function asObject(value: unknown, path: string): JsonObject {
  if (!isJsonObject(value)) throw new GatewayError("invalid_request", `Invalid type for '${path}': expected an object.`, path);
  return value;
}

function requireString(value: unknown, path: string): string {
  if (typeof value !== "string") throw new GatewayError("invalid_request", `Missing or invalid '${path}': expected a string.`, path);
  return value;
}
