import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { sseComment, sseMessage, sseRetry } from "./sse";

/** What a standard client reads from `stream`: its messages, and the reconnection delays it was given. */
function read(stream: string) {
  const messages: EventSourceMessage[] = [];
  const retries: number[] = [];
  const parser = createParser({ onEvent: (m) => messages.push(m), onRetry: (ms) => retries.push(ms) });
  parser.feed(stream);
  return { messages, retries };
}

describe("SSE framing, read back by a standard parser (eventsource-parser)", () => {
  it("a message's id, event name and data", () => {
    const stream = sseMessage({ id: "42", event: "delegation", data: '{"seq":"42"}' });
    expect(stream).toBe('id: 42\nevent: delegation\ndata: {"seq":"42"}\n\n');
    expect(read(stream).messages).toEqual([{ id: "42", event: "delegation", data: '{"seq":"42"}' }]);
  });

  it("data with line breaks of each kind arrives whole, joined by LF", () => {
    const { messages } = read(sseMessage({ data: "one\ntwo\r\nthree\rfour" }));
    expect(messages.map((m) => m.data)).toEqual(["one\ntwo\nthree\nfour"]);
  });

  it("messages in order, one chunk or byte by byte", () => {
    const stream = [1, 2, 3].map((n) => sseMessage({ id: String(n), data: `d${n}` })).join("");
    const whole = read(stream).messages;
    expect(whole.map((m) => [m.id, m.data])).toEqual([
      ["1", "d1"],
      ["2", "d2"],
      ["3", "d3"],
    ]);
    const messages: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (m) => messages.push(m) });
    for (const char of stream) parser.feed(char);
    expect(messages).toEqual(whole);
  });

  it("comments are no messages, whatever they hold; retry sets the reconnection delay", () => {
    const stream = `${sseComment("heartbeat")}${sseComment("two\nlines")}${sseRetry(3000)}${sseMessage({ data: "x" })}`;
    const { messages, retries } = read(stream);
    expect(messages.map((m) => m.data)).toEqual(["x"]);
    expect(retries).toEqual([3000]);
  });

  it("refuses an id or event name that would break the stream, and a retry not in whole milliseconds", () => {
    expect(() => sseMessage({ id: "1\n", data: "" })).toThrow(/line break/);
    expect(() => sseMessage({ id: "1\0", data: "" })).toThrow(/NUL/);
    expect(() => sseMessage({ event: "a\rb", data: "" })).toThrow(/line break/);
    expect(() => sseRetry(1.5)).toThrow(/whole number/);
    expect(() => sseRetry(-1)).toThrow(/whole number/);
  });
});
