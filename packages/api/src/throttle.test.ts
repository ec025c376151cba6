import { describe, expect, it } from "vitest";
import { SourceThrottle, sourceOf } from "./throttle";

describe("SourceThrottle", () => {
  it("lets a source act `limit` times per window, then answers the wait until the window ends", () => {
    const throttle = new SourceThrottle({ limit: 3, windowMs: 10_000 });
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) expect(throttle.take("a", t0 + i)).toBeUndefined();
    expect(throttle.take("a", t0 + 3)).toBe(10);
    expect(throttle.waitOf("a", t0 + 9_001)).toBe(1);
    // Another source is untouched; a new window starts afresh.
    expect(throttle.take("b", t0 + 4)).toBeUndefined();
    expect(throttle.take("a", t0 + 10_000)).toBeUndefined();
  });

  it("counts only what it is told to: waitOf alone never uses up the budget", () => {
    const throttle = new SourceThrottle({ limit: 1, windowMs: 1_000 });
    for (let i = 0; i < 5; i++) expect(throttle.waitOf("a", 0)).toBeUndefined();
    throttle.count("a", 0);
    expect(throttle.waitOf("a", 0)).toBe(1);
  });

  it("remembers at most maxSources, forgetting the least recently seen", () => {
    const throttle = new SourceThrottle({ limit: 1, windowMs: 60_000 }, 100);
    throttle.count("kept", 0);
    for (let i = 0; i < 1_000; i++) {
      throttle.count(`flood-${i}`, 0);
      if (i % 50 === 0) throttle.count("kept", 0);
    }
    expect(throttle.size).toBe(100);
    expect(throttle.waitOf("kept", 0)).toBe(60);
    expect(throttle.waitOf("flood-0", 0)).toBeUndefined();
  });
});

describe("sourceOf", () => {
  const context = (env: unknown) => ({ env, req: { header: () => undefined } }) as never;

  it("reads the Lambda function URL's source address, or the Node socket's peer", () => {
    expect(sourceOf(context({ requestContext: { http: { sourceIp: "203.0.113.9" } } }))).toBe("203.0.113.9");
    expect(sourceOf(context({ incoming: { socket: { remoteAddress: "::ffff:127.0.0.2" } } }))).toBe(
      "127.0.0.2",
    );
    expect(sourceOf(context(undefined))).toBe("local");
  });

  it("counts an IPv6 address by its /64", () => {
    const of = (address: string) => sourceOf(context({ incoming: { socket: { remoteAddress: address } } }));
    expect(of("2001:db8:1:2::1")).toBe(of("2001:db8:1:2:ffff:ffff:ffff:fffe"));
    expect(of("2001:db8:1:2::1")).not.toBe(of("2001:db8:1:3::1"));
    expect(of("2001:db8:1:2::1")).toBe("20010db800010002/64");
  });
});
