/**
 * Server-Sent Events as the WHATWG HTML standard frames them ("Server-sent events", the event
 * stream format): fields of `name: value` lines, a blank line ending each message, and lines that
 * begin with a colon ignored (comments, a heartbeat through proxies that close idle connections).
 * A value cannot hold a line break (CR, LF or CRLF all end a line): data is split over several
 * `data:` lines, which the client joins with LF; an id or event name with one is refused.
 */

/** One line break of any of the standard's three kinds. */
const LINE_BREAK = /\r\n|\r|\n/;

/** A field value that must fit on one line: an id (which may not hold NUL either) or an event name. */
function oneLine(field: string, value: string): string {
  if (LINE_BREAK.test(value) || (field === "id" && value.includes("\0")))
    throw new Error(`an SSE ${field} cannot hold a line break${field === "id" ? " or NUL" : ""}`);
  return value;
}

/** A message: `id` (what Last-Event-ID then says), an event name, and its data. */
export function sseMessage(message: { id?: string; event?: string; data: string }): string {
  let text = "";
  if (message.id !== undefined) text += `id: ${oneLine("id", message.id)}\n`;
  if (message.event !== undefined) text += `event: ${oneLine("event", message.event)}\n`;
  for (const line of message.data.split(LINE_BREAK)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** A comment: ignored by clients, it keeps the connection and its proxies from timing out. */
export const sseComment = (text: string): string =>
  `${text
    .split(LINE_BREAK)
    .map((line) => `: ${line}\n`)
    .join("")}\n`;

/** How long a client waits before it reconnects, in milliseconds. */
export function sseRetry(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error(`an SSE retry is a whole number of milliseconds: ${ms}`);
  return `retry: ${ms}\n\n`;
}
