import { describe, expect, it } from "vitest";
import { initialStatus } from "./status";
import {
  freshGeneration,
  readCatalogBody,
  readStoredStatus,
  salvagedServer,
  storedConfigProblems,
  unreadableConfigSentence,
} from "./stored-items";

const goodStatus = { ...initialStatus(true), generation: 3, supersededAt: "2026-01-01T00:00:00.000Z" };

describe("readStoredStatus", () => {
  it("reads a good status, internal fields left out; diagnostics stored before they existed read as null", () => {
    const { lastConnectionLatencyMs: _missing, ...older } = goodStatus;
    expect(readStoredStatus({ pk: "SERVER#x", sk: "STATUS", lastJobId: "j", ...older })).toEqual({
      ...goodStatus,
      lastConnectionLatencyMs: null,
    });
  });

  it.each([
    ["a string generation", { generation: "seven" }],
    ["a fractional generation", { generation: 1.5 }],
    ["a negative generation", { generation: -1 }],
    ["an unknown state", { state: "sleeping" }],
    ["a numeric state", { state: 42 }],
    ["a string tool count", { toolCount: "4" }],
    ["a numeric error", { error: 7 }],
  ])("treats a status with %s as absent", (_, change) => {
    expect(readStoredStatus({ ...goodStatus, ...change })).toBeUndefined();
  });

  it("reads the eras stored; eras that do not parse are left out, the status kept", () => {
    const eras = ["2026-07-28", "2025-11-25"];
    expect(readStoredStatus({ ...goodStatus, eras })).toEqual({ ...goodStatus, eras });
    expect(readStoredStatus({ ...goodStatus, eras: ["a b", 7] })).toEqual(goodStatus);
  });

  it("treats a status without a generation as absent", () => {
    const { generation: _g, ...item } = goodStatus;
    expect(readStoredStatus(item)).toBeUndefined();
  });
});

describe("freshGeneration", () => {
  const now = 1_800_000_000_000;

  it("is the clock's epoch ms when nothing stored is legible", () => {
    expect(freshGeneration(undefined, now)).toBe(now);
    expect(freshGeneration("seven", now)).toBe(now);
    expect(freshGeneration(-3, now)).toBe(now);
  });

  it("steps past a stored number still legible, even one ahead of the clock", () => {
    expect(freshGeneration("12", now)).toBe(now);
    expect(freshGeneration(now + 5, now)).toBe(now + 6);
    expect(freshGeneration(String(now + 5), now)).toBe(now + 6);
  });
});

describe("readCatalogBody", () => {
  const tool = { name: "echo", inputSchema: { type: "object" } };

  it("reads the body and the bare tools array of old", () => {
    expect(readCatalogBody(JSON.stringify({ tools: [tool] }))).toEqual({ tools: [tool] });
    expect(readCatalogBody(JSON.stringify([tool]))).toEqual({ tools: [tool] });
  });

  it.each([
    ["not JSON", "garbage"],
    ["tools not a list", JSON.stringify({ tools: "echo" })],
    ["a tool without a schema", JSON.stringify({ tools: [{ name: "echo" }] })],
    ["a bad profile", JSON.stringify({ tools: [tool], profile: { protocolVersion: 7 } })],
  ])("refuses %s", (_, json) => {
    expect(readCatalogBody(json)).toBeUndefined();
  });
});

describe("stored configs", () => {
  const good = {
    id: "11111111-2222-3333-4444-555555555555",
    name: "alpha",
    version: 2,
    enabled: true,
    transport: "http",
    url: "https://upstream.test/mcp",
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-02T00:00:00.000Z",
  };

  it("finds nothing wrong with a whole config, stdio or http", () => {
    expect(storedConfigProblems(good)).toEqual([]);
    const { url: _url, ...rest } = good;
    expect(storedConfigProblems({ ...rest, transport: "stdio", command: "node" })).toEqual([]);
  });

  it("names each required field missing or invalid", () => {
    const { name: _name, ...nameless } = good;
    expect(storedConfigProblems(nameless)).toEqual(["name missing"]);
    expect(storedConfigProblems({ ...good, version: "2", url: undefined })).toEqual([
      "version invalid",
      "url missing",
    ]);
    expect(storedConfigProblems({ ...good, transport: "carrier-pigeon" })).toEqual(["transport invalid"]);
  });

  it("salvages what can be shown: the name it is listed under, disabled, the sentence", () => {
    const { name: _name, ...nameless } = good;
    const salvaged = salvagedServer(good.id, { ...nameless, kindSort: "alpha" }, ["name missing"]);
    expect(salvaged).toMatchObject({
      id: good.id,
      name: "alpha",
      enabled: false,
      version: 2,
      transport: "http",
    });
    expect(salvaged.unreadable).toBe(unreadableConfigSentence(["name missing"]));
    expect(salvaged.unreadable).toBe(
      "the stored config is unreadable: name missing; delete the server and create it again",
    );
    expect(salvagedServer(good.id, {}, ["name missing"]).name).toBe(good.id);
  });
});
