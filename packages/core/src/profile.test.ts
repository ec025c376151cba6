import { describe, expect, it } from "vitest";
import {
  boundedFace,
  isModernRevision,
  MAX_DISCOVER_BYTES,
  MAX_INSTRUCTIONS_CHARS,
  MAX_LEGACY_TOOLS,
  MAX_PROFILE_OBJECT_BYTES,
  profileDigest,
  profileEras,
  ServerProfile,
  toServerProfile,
} from "./profile";

const profile = {
  protocolVersion: "2026-07-28",
  capabilities: { tools: { listChanged: true }, logging: {} },
  serverInfo: { name: "docs", version: "1.2.0", icons: [{ src: "https://example.com/i.png" }] },
  instructions: "Search before you fetch.",
  discover: { supportedVersions: ["2026-07-28", "2025-11-25"] },
};

/** A value nesting `levels` objects deep. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

describe("ServerProfile", () => {
  it("accepts a full profile and one with only a revision and capabilities", () => {
    expect(ServerProfile.parse(profile)).toEqual(profile);
    expect(ServerProfile.parse({ protocolVersion: "2025-03-26", capabilities: {} })).toEqual({
      protocolVersion: "2025-03-26",
      capabilities: {},
    });
  });

  it.each([
    ["2025-11-25", true],
    ["DRAFT-2026-v1", true],
    ["", false],
    ["2025-11-25 ", false],
    ["2025-11-25\n", false],
    ["x".repeat(33), false],
    ["<script>", false],
  ])("a protocol revision %j is %s", (protocolVersion, valid) => {
    expect(ServerProfile.safeParse({ ...profile, protocolVersion }).success).toBe(valid);
  });

  it("refuses instructions past the cap, objects too large or too deep, and arrays for objects", () => {
    const big = { blob: "x".repeat(MAX_PROFILE_OBJECT_BYTES) };

    expect(
      ServerProfile.safeParse({ ...profile, instructions: "x".repeat(MAX_INSTRUCTIONS_CHARS) }).success,
    ).toBe(true);
    expect(
      ServerProfile.safeParse({ ...profile, instructions: "x".repeat(MAX_INSTRUCTIONS_CHARS + 1) }).success,
    ).toBe(false);
    expect(ServerProfile.safeParse({ ...profile, capabilities: big }).success).toBe(false);
    expect(ServerProfile.safeParse({ ...profile, serverInfo: big }).success).toBe(false);
    expect(ServerProfile.safeParse({ ...profile, discover: big }).success).toBe(true);
    expect(
      ServerProfile.safeParse({ ...profile, discover: { blob: "x".repeat(MAX_DISCOVER_BYTES) } }).success,
    ).toBe(false);
    expect(ServerProfile.safeParse({ ...profile, capabilities: nested(100) }).success).toBe(false);
    expect(ServerProfile.safeParse({ ...profile, capabilities: [] }).success).toBe(false);
  });
});

describe("toServerProfile", () => {
  it("keeps a valid profile as it is, less unknown keys", () => {
    expect(toServerProfile({ ...profile, sessionId: "s-1" })).toEqual(profile);
  });

  it("is undefined without a usable revision or capabilities", () => {
    expect(toServerProfile(undefined)).toBeUndefined();
    expect(toServerProfile({ ...profile, protocolVersion: 20251125 })).toBeUndefined();
    expect(toServerProfile({ ...profile, capabilities: "all" })).toBeUndefined();
    expect(toServerProfile({ ...profile, capabilities: nested(10_000) })).toBeUndefined();
  });

  it("cuts long instructions short, never through a surrogate pair", () => {
    const long = `${"x".repeat(MAX_INSTRUCTIONS_CHARS - 1)}😀 and more`;

    const kept = toServerProfile({ ...profile, instructions: long });

    expect(kept?.instructions).toBe("x".repeat(MAX_INSTRUCTIONS_CHARS - 1));
    expect(ServerProfile.safeParse(kept).success).toBe(true);
  });

  it("leaves out a serverInfo or discover answer that is not a bounded JSON object", () => {
    const kept = toServerProfile({
      ...profile,
      serverInfo: "docs",
      discover: { blob: "x".repeat(MAX_DISCOVER_BYTES) },
      instructions: 42,
    });

    expect(kept).toEqual({ protocolVersion: profile.protocolVersion, capabilities: profile.capabilities });
  });

  it("keeps a dual-era server's 2025 surface bounded as the rest, and leaves out one that is unusable", () => {
    const legacy = {
      protocolVersion: "2025-11-25",
      capabilities: { completions: {}, logging: {} },
      serverInfo: "docs",
      instructions: "y".repeat(MAX_INSTRUCTIONS_CHARS + 10),
      discover: { not: "kept" },
    };

    const kept = toServerProfile({ ...profile, legacy });
    const unusable = toServerProfile({
      ...profile,
      legacy: { ...legacy, protocolVersion: "not a revision" },
    });

    expect(kept?.legacy).toEqual({
      protocolVersion: "2025-11-25",
      capabilities: legacy.capabilities,
      instructions: "y".repeat(MAX_INSTRUCTIONS_CHARS),
    });
    expect(ServerProfile.safeParse(kept).success).toBe(true);
    expect(unusable).toEqual(profile);
    expect(profileDigest(kept)).not.toBe(profileDigest(unusable));
  });
});

describe("toServerProfile: a 2025 surface's tool names", () => {
  it("keeps them bounded: names past the spec's length left out, the first MAX_LEGACY_TOOLS kept", () => {
    const legacy = { protocolVersion: "2025-11-25", capabilities: { tools: {} } };
    const many = Array.from({ length: MAX_LEGACY_TOOLS + 5 }, (_, i) => `t${i}`);

    const kept = toServerProfile({
      ...profile,
      legacy: { ...legacy, tools: ["echo", "x".repeat(129), 7, "y"] },
    });
    const capped = toServerProfile({ ...profile, legacy: { ...legacy, tools: many } });
    const unlisted = toServerProfile({ ...profile, legacy });

    expect(kept?.legacy?.tools).toEqual(["echo", "y"]);
    expect(ServerProfile.safeParse(kept).success).toBe(true);
    expect(capped?.legacy?.tools).toEqual([...many].sort().slice(0, MAX_LEGACY_TOOLS));
    expect(ServerProfile.safeParse(capped).success).toBe(true);
    expect(unlisted?.legacy).not.toHaveProperty("tools");
  });

  it("keeps each name once, in one order, so a server listing in another order each time keeps its digest", () => {
    const legacy = { protocolVersion: "2025-11-25", capabilities: { tools: {} } };
    const one = toServerProfile({ ...profile, legacy: { ...legacy, tools: ["b", "a", "b"] } });
    const other = toServerProfile({ ...profile, legacy: { ...legacy, tools: ["a", "b"] } });

    expect(one?.legacy?.tools).toEqual(["a", "b"]);
    expect(profileDigest(one)).toBe(profileDigest(other));
  });
});

describe("profileEras", () => {
  it("names the negotiated revision first, then a dual-era server's 2025 one", () => {
    const legacy = { protocolVersion: "2025-11-25", capabilities: {} };

    expect(profileEras({ ...profile, legacy })).toEqual(["2026-07-28", "2025-11-25"]);
    expect(profileEras(profile)).toEqual(["2026-07-28"]);
  });
});

describe("profileDigest", () => {
  it("is the same for the same profile whatever its key order, and differs when anything changed", () => {
    const reordered = {
      discover: profile.discover,
      instructions: profile.instructions,
      serverInfo: { icons: profile.serverInfo.icons, version: "1.2.0", name: "docs" },
      capabilities: { logging: {}, tools: { listChanged: true } },
      protocolVersion: "2026-07-28",
    };

    expect(profileDigest(reordered)).toBe(profileDigest(profile));
    expect(profileDigest({ ...profile, serverInfo: { ...profile.serverInfo, version: "1.3.0" } })).not.toBe(
      profileDigest(profile),
    );
    expect(profileDigest(undefined)).not.toBe(profileDigest(profile));
    expect(profileDigest(undefined)).toBe(profileDigest(undefined));
  });
});

describe("boundedFace", () => {
  it("bounds what a session reports of its server as a profile keeps it", () => {
    const face = boundedFace({
      capabilities: "not an object",
      serverInfo: { name: "up", title: "x".repeat(MAX_PROFILE_OBJECT_BYTES) },
      instructions: "i".repeat(MAX_INSTRUCTIONS_CHARS + 10),
    });

    expect(face).toEqual({ capabilities: {}, instructions: "i".repeat(MAX_INSTRUCTIONS_CHARS) });
    expect(boundedFace({ capabilities: { tools: {} }, serverInfo: { name: "up", version: "1" } })).toEqual({
      capabilities: { tools: {} },
      serverInfo: { name: "up", version: "1" },
    });
  });
});

describe("isModernRevision", () => {
  it("tells a 2026 revision from a 2025 one", () => {
    expect(["2026-07-28", "2027-01-01"].map(isModernRevision)).toEqual([true, true]);
    expect(["2025-11-25", "2025-03-26", "2024-11-05"].map(isModernRevision)).toEqual([false, false, false]);
  });
});
