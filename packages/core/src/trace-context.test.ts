import { describe, expect, it } from "vitest";
import { errorTypeOf, pickTraceFields, withTraceMeta } from "./trace-context";

const PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

describe("withTraceMeta", () => {
  it("sets the trace context in a new _meta, leaving the given params and their _meta untouched", () => {
    const meta = { progressToken: 7 };
    const params = { name: "echo", arguments: { text: "x" }, _meta: meta };
    const traced = withTraceMeta(params, { traceparent: PARENT, tracestate: "a=b" });

    expect(traced).toEqual({
      name: "echo",
      arguments: { text: "x" },
      _meta: { progressToken: 7, traceparent: PARENT, tracestate: "a=b" },
    });
    expect(params._meta).toBe(meta);
    expect(meta).toEqual({ progressToken: 7 });
  });

  it("replaces a caller's own traceparent and drops its tracestate when ours has none", () => {
    const params = { _meta: { traceparent: "00-caller-caller-01", tracestate: "evil=1", other: true } };

    expect(withTraceMeta(params, { traceparent: PARENT })).toEqual({
      _meta: { other: true, traceparent: PARENT },
    });
  });

  it("removes a caller's trace context when there is none to send, and _meta with it when emptied", () => {
    expect(withTraceMeta({ uri: "file:///a", _meta: { traceparent: PARENT } }, {})).toEqual({
      uri: "file:///a",
    });
  });

  it("returns the very params when there is nothing to set or remove", () => {
    const params = { name: "echo", _meta: { progressToken: 1 } };
    expect(withTraceMeta(params, {})).toBe(params);
    expect(withTraceMeta(undefined, {})).toBeUndefined();
  });

  it("gives params to undefined params", () => {
    expect(withTraceMeta(undefined, { traceparent: PARENT })).toEqual({ _meta: { traceparent: PARENT } });
  });
});

describe("pickTraceFields", () => {
  it("keeps traceparent and tracestate strings only", () => {
    expect(
      pickTraceFields({ traceparent: PARENT, tracestate: 3, baggage: "secret=1", authorization: "x" }),
    ).toEqual({
      traceparent: PARENT,
    });
  });
});

describe("errorTypeOf", () => {
  it("names an error by its code, kind or class, never its message", () => {
    expect(errorTypeOf(Object.assign(new Error("secret text"), { code: "upstream.timeout" }))).toBe(
      "upstream.timeout",
    );
    expect(errorTypeOf(Object.assign(new Error("secret text"), { kind: "unreachable" }))).toBe("unreachable");
    expect(errorTypeOf(new TypeError("secret text"))).toBe("TypeError");
    expect(errorTypeOf("secret text")).toBe("Error");
  });
});
