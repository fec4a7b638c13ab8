/**
 * Everything a provider plugin may import from carrierd, published as
 * `carrierd/plugin` (package.json `exports`). A plugin outside this
 * repository imports only this module; the shipped plugins import it by
 * path. What is not exported here is carrierd's own and may change in any
 * release; what is exported changes only with `PLUGIN_API_VERSION`.
 */
export * from "./contract.js";
export { chatBodyBytes } from "./chat-json.js";
export { openCarriedBody, spliceTopLevel, type CarriedBody } from "./carried/carried-top.js";
export { isCarrierEnvelope } from "./carried/envelope-mark.js";
export { arraySpan, memberOf, objectSpan, type ArraySpan, type ElementSpan, type MemberSpan, type ObjectSpan } from "./carried/json-spans.js";
export { isJsonObject, parseObject, readArray, readNumber, readObject, readString, requireObject, requireObjects, UpstreamShapeError } from "./json-readers.js";
export { textOf } from "./message-text.js";
export { parseToolArguments } from "./tool-arguments.js";
export { detached } from "../foundation/util/detached.js";
export { sameJson } from "../foundation/util/same-json.js";
export { shown } from "../foundation/util/shown.js";
