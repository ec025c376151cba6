import { describe, expect, it } from "vitest";
import { checkUrl, classifyAddress, isForbidden, parseHostLiteral } from "./address-policy";

/** Host spellings of 169.254.169.254 accepted by WHATWG URL parsing and/or inet_aton. */
const METADATA_IPV4_SPELLINGS = [
  "169.254.169.254",
  "169.254.169.254.", // trailing dot
  "2852039166", // 32-bit decimal
  "0xa9fea9fe", // 32-bit hex
  "0XA9FEA9FE",
  "025177524776", // 32-bit octal
  "0251.0376.0251.0376", // octal parts
  "0xa9.0xfe.0xa9.0xfe", // hex parts
  "0xa9.254.0251.0xfe", // mixed radices
  "169.254.43518", // a.b.c (last part 16 bits)
  "169.16689662", // a.b (last part 24 bits)
  "0251.0xfe.43518",
  "000000251.254.169.254", // any number of leading zeros still means octal
];

const ALLOW = { allowPrivate: true };
const DENY = { allowPrivate: false };

describe("parseHostLiteral", () => {
  it.each(METADATA_IPV4_SPELLINGS)("reads %s as 169.254.169.254", (host) => {
    expect(parseHostLiteral(host)).toBe("169.254.169.254");
  });

  it.each([...METADATA_IPV4_SPELLINGS, "0169.254.169.254", "0x.0x.0x.0x", "1.0x10000", "1.2.3.4.5", "1.08"])(
    "agrees with the WHATWG URL parser on %s",
    (host) => {
      let fromUrl: string | null;
      try {
        fromUrl = new URL(`http://${host}/`).hostname;
      } catch {
        fromUrl = null; // the URL parser rejects it, so it must not be an IP literal for us either
      }
      expect(parseHostLiteral(host)).toBe(fromUrl);
    },
  );

  it("accepts full-width digits and ideographic dots, as URL hosts do", () => {
    expect(parseHostLiteral("１６９。２５４。１６９。２５４")).toBe("169.254.169.254");
  });

  it.each([
    ["[::ffff:169.254.169.254]", "::ffff:169.254.169.254"],
    ["[::FFFF:A9FE:A9FE]", "::ffff:a9fe:a9fe"],
    ["fd00:ec2::254", "fd00:ec2::254"],
    ["0x7f.1", "127.0.0.1"],
    ["0x", "0.0.0.0"],
    ["10.1", "10.0.0.1"],
  ])("reads %s as %s", (host, ip) => {
    expect(parseHostLiteral(host)).toBe(ip);
  });

  it.each([
    "example.com",
    "localhost",
    "1.2.3.4.5",
    "1.2.3.256",
    "08.1.1.1",
    "0169.254.169.254", // 9 is not an octal digit: the URL parser rejects this host
    "4294967296",
    "0x1g",
    "",
    "[1.2.3.4]",
    "[not-ipv6]",
  ])("does not treat %j as an IP literal", (host) => {
    expect(parseHostLiteral(host)).toBeNull();
  });
});

describe("classifyAddress", () => {
  it.each([
    ["169.254.169.254", "metadata"],
    ["2852039166", "metadata"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:a9fe:a9fe", "metadata"],
    ["[::ffff:a9fe:a9fe]", "metadata"],
    ["64:ff9b::169.254.169.254", "metadata"], // NAT64 well-known prefix
    ["64:ff9b::a9fe:a9fe", "metadata"],
    ["::169.254.169.254", "metadata"], // deprecated IPv4-compatible
    ["2002:a9fe:a9fe::1", "metadata"], // 6to4
    ["fd00:ec2::254", "metadata"],
    ["FD00:EC2:0:0:0:0:0:254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["169.254.170.2", "metadata"],
    ["169.254.0.1", "link_local"],
    ["169.254.255.255", "link_local"],
    ["fe80::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["febf::1", "link_local"],
    ["::ffff:169.254.1.1", "link_local"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["::1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["100.127.255.255", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["::", "unspecified"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["255.255.255.255", "unspecified"],
    ["224.0.0.1", "unspecified"],
    ["ff02::1", "unspecified"],
    ["8.8.8.8", "public"],
    ["172.32.0.1", "public"],
    ["172.15.255.255", "public"],
    ["100.128.0.1", "public"],
    ["169.253.255.255", "public"],
    ["2606:4700:4700::1111", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["64:ff9b::808:808", "public"],
  ])("classifies %s as %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it("rejects non-addresses", () => {
    expect(() => classifyAddress("example.com")).toThrow(TypeError);
  });
});

describe("isForbidden", () => {
  it.each([
    ...METADATA_IPV4_SPELLINGS,
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "fd00:ec2::254",
    "169.254.1.1",
    "fe80::1",
    "0.0.0.0",
    "::",
  ])("always forbids %s", (ip) => {
    expect(isForbidden(ip, ALLOW)).toBe(true);
    expect(isForbidden(ip, DENY)).toBe(true);
  });

  it.each(["127.0.0.1", "::1", "10.0.0.1", "172.16.0.1", "192.168.0.1", "100.64.0.1", "fd12::1"])(
    "forbids %s only without allowPrivate",
    (ip) => {
      expect(isForbidden(ip, ALLOW)).toBe(false);
      expect(isForbidden(ip, DENY)).toBe(true);
    },
  );

  it("never forbids public addresses", () => {
    expect(isForbidden("8.8.8.8", DENY)).toBe(false);
    expect(isForbidden("2606:4700:4700::1111", DENY)).toBe(false);
  });
});

describe("checkUrl", () => {
  it.each([
    "file:///etc/passwd",
    "ftp://example.com/",
    "gopher://example.com:70/",
    "data:text/plain,hi",
    "ws://x/",
  ])("refuses the scheme of %s", (url) => {
    expect(checkUrl(url, ALLOW)).toMatchObject({ ok: false, reason: "scheme" });
  });

  it("refuses an unparseable URL", () => {
    expect(checkUrl("not a url", ALLOW)).toMatchObject({ ok: false, reason: "invalid" });
  });

  it.each([
    ...METADATA_IPV4_SPELLINGS,
    "１６９。２５４。１６９。２５４",
    "[::ffff:169.254.169.254]",
    "[::ffff:a9fe:a9fe]",
    "[64:ff9b::a9fe:a9fe]",
    "[fd00:ec2::254]",
    "[fe80::1]",
  ])("refuses http://%s/ even with allowPrivate", (host) => {
    const result = checkUrl(`http://${host}/latest/meta-data`, ALLOW);
    expect(result).toMatchObject({ ok: false, reason: "forbidden_address" });
  });

  it.each([
    "http://127.0.0.1:8080/mcp",
    "http://0x7f.1/",
    "http://2130706433/",
    "http://[::1]/",
    "http://localhost:3000/",
    "http://LOCALHOST./",
    "http://api.localhost/",
    "https://10.0.0.5/",
    "https://192.168.1.10/",
  ])("refuses %s only without allowPrivate", (url) => {
    expect(checkUrl(url, ALLOW).ok).toBe(true);
    expect(checkUrl(url, DENY)).toMatchObject({ ok: false, reason: "forbidden_address" });
  });

  it("passes public literals and hostnames (hostnames are vetted after DNS)", () => {
    const result = checkUrl("https://mcp.example.com/mcp?x=1", DENY);
    expect(result.ok && result.url.hostname).toBe("mcp.example.com");
    expect(checkUrl("http://8.8.8.8/", DENY).ok).toBe(true);
  });

  it("names the host but not the path, query or credentials", () => {
    const result = checkUrl("http://2852039166/latest/meta-data?token=secret", ALLOW);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.message).toContain("169.254.169.254");
      expect(result.message).not.toContain("secret");
      expect(result.message).not.toContain("meta-data");
    }
  });
});
