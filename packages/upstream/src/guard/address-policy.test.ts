import { describe, expect, it } from "vitest";
import {
  type AddressClass,
  checkUrl,
  classifyAddress,
  IPV4_GUARD_RANGES,
  IPV4_SPECIAL_REGISTRY,
  IPV6_GUARD_RANGES,
  IPV6_SPECIAL_REGISTRY,
  isForbidden,
  parseHostLiteral,
  type SpecialRange,
} from "./address-policy";

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

/** First and last address of an IPv4 or IPv6 CIDR, computed independently of the module under test. */
function bounds(cidr: string): [first: string, last: string] {
  const [ip = "", length = ""] = cidr.split("/");
  const bits = ip.includes(":") ? 128 : 32;
  const value = ip.includes(":")
    ? ipv6Bits(ip)
    : ip.split(".").reduce((acc, o) => (acc << 8n) | BigInt(o), 0n);
  const hostMask = (1n << BigInt(bits - Number(length))) - 1n;
  const format = bits === 128 ? formatIPv6 : formatIPv4;
  return [format(value & ~hostMask), format(value | hostMask)];
}

function ipv4Bits(ip: string): bigint {
  return ip.split(".").reduce((acc, octet) => (acc << 8n) | BigInt(octet), 0n);
}

function ipv6Bits(ip: string): bigint {
  const [head = "", tail = ""] = ip.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const zeros = ip.includes("::") ? Array<string>(8 - headGroups.length - tailGroups.length).fill("0") : [];
  return [...headGroups, ...zeros, ...tailGroups].reduce((acc, g) => (acc << 16n) | BigInt(`0x${g}`), 0n);
}

function formatIPv6(value: bigint): string {
  return [...Array(8).keys()].map((i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(":");
}

function formatIPv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 0xffn).join(".");
}

/** Whether the policy refuses an address of this class. */
function refused(cls: AddressClass, allowPrivate: boolean): boolean {
  if (cls === "public") return false;
  return cls === "loopback" || cls === "private" ? !allowPrivate : true;
}

describe("special-purpose address tables", () => {
  const rows: (readonly [table: string, row: SpecialRange])[] = [
    ...IPV4_SPECIAL_REGISTRY.map((row) => [`IANA IPv4 ${row.cidr} (${row.name})`, row] as const),
    ...IPV4_GUARD_RANGES.map((row) => [`guard IPv4 ${row.cidr} (${row.name})`, row] as const),
    ...IPV6_SPECIAL_REGISTRY.map((row) => [`IANA IPv6 ${row.cidr} (${row.name})`, row] as const),
    ...IPV6_GUARD_RANGES.map((row) => [`guard IPv6 ${row.cidr} (${row.name})`, row] as const),
  ];

  it.each(rows)("%s: first and last address have the row's class and refusal", (_table, row) => {
    // Prepare: an embedding row's first and last addresses carry 0.0.0.0 and 255.255.255.255.
    const expected = row.treatment === "embedded_ipv4" ? "unspecified" : row.treatment;

    for (const address of bounds(row.cidr)) {
      // Act
      const cls = classifyAddress(address);
      // Assess
      expect(cls, address).toBe(expected);
      expect(isForbidden(address, ALLOW), address).toBe(refused(expected, true));
      expect(isForbidden(address, DENY), address).toBe(true);
    }
  });

  it.each(rows.filter(([, row]) => row.treatment === "embedded_ipv4"))(
    "%s: classifies by the embedded IPv4 address",
    (_table, row) => {
      // Prepare: the IPv4 address sits in the 32 bits right after the prefix.
      const [ip = "", length = ""] = row.cidr.split("/");
      const embed = (v4: string) =>
        formatIPv6(ipv6Bits(ip) | (ipv4Bits(v4) << BigInt(128 - Number(length) - 32)));

      // Act + Assess
      expect(classifyAddress(embed("169.254.169.254"))).toBe("metadata");
      expect(classifyAddress(embed("127.0.0.1"))).toBe("loopback");
      expect(classifyAddress(embed("10.1.2.3"))).toBe("private");
      expect(classifyAddress(embed("192.0.2.1"))).toBe("unspecified");
      expect(classifyAddress(embed("8.8.8.8"))).toBe("public");
    },
  );

  it("has no public row: every special-purpose address is refused without allowPrivate", () => {
    expect(rows.filter(([, row]) => row.treatment === "public")).toEqual([]);
  });

  it("names every row", () => {
    for (const [table, row] of rows) {
      expect(row.name, row.cidr).not.toBe("");
      if (table.startsWith("IANA")) expect(row.rfc, row.cidr).toMatch(/^RFC \d+/);
    }
  });

  it("lists every block of the IANA IPv4 Special-Purpose Address Registry, in registry order", () => {
    expect(IPV4_SPECIAL_REGISTRY.map((row) => row.cidr)).toEqual([
      "0.0.0.0/8",
      "0.0.0.0/32",
      "10.0.0.0/8",
      "100.64.0.0/10",
      "127.0.0.0/8",
      "169.254.0.0/16",
      "172.16.0.0/12",
      "192.0.0.0/24",
      "192.0.0.0/29",
      "192.0.0.8/32",
      "192.0.0.9/32",
      "192.0.0.10/32",
      "192.0.0.170/32",
      "192.0.0.171/32",
      "192.0.2.0/24",
      "192.31.196.0/24",
      "192.52.193.0/24",
      "192.88.99.0/24",
      "192.168.0.0/16",
      "192.175.48.0/24",
      "198.18.0.0/15",
      "198.51.100.0/24",
      "203.0.113.0/24",
      "240.0.0.0/4",
      "255.255.255.255/32",
    ]);
  });

  it("lists every block of the IANA IPv6 Special-Purpose Address Registry, in registry order", () => {
    expect(IPV6_SPECIAL_REGISTRY.map((row) => row.cidr)).toEqual([
      "::1/128",
      "::/128",
      "::ffff:0:0/96",
      "64:ff9b::/96",
      "64:ff9b:1::/48",
      "100::/64",
      "100:0:0:1::/64",
      "2001::/23",
      "2001::/32",
      "2001:1::1/128",
      "2001:1::2/128",
      "2001:1::3/128",
      "2001:2::/48",
      "2001:3::/32",
      "2001:4:112::/48",
      "2001:10::/28",
      "2001:20::/28",
      "2001:30::/28",
      "2001:db8::/32",
      "2002::/16",
      "2620:4f:8000::/48",
      "3fff::/20",
      "5f00::/16",
      "fc00::/7",
      "fe80::/10",
    ]);
  });

  it.each([
    ["2001::1", "Teredo"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo (RFC 4380 example, client 192.0.2.45)"],
    ["2001:0:808:808:0:f227:f7f7:f7f7", "Teredo with public server and client 8.8.8.8"],
    ["192.0.0.0", "IETF Protocol Assignments"],
    ["192.0.0.1", "IPv4 Service Continuity Prefix"],
    ["192.0.0.9", "PCP anycast"],
    ["192.0.0.10", "TURN anycast"],
    ["192.0.0.170", "NAT64/DNS64 discovery"],
    ["192.0.0.255", "IETF Protocol Assignments"],
    ["192.0.2.1", "TEST-NET-1"],
    ["198.51.100.7", "TEST-NET-2"],
    ["203.0.113.254", "TEST-NET-3"],
    ["192.31.196.1", "AS112-v4"],
    ["192.52.193.1", "AMT"],
    ["192.88.99.1", "deprecated 6to4 relay anycast"],
    ["192.175.48.6", "direct delegation AS112"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "limited broadcast"],
    ["100::1", "discard-only"],
    ["100::ffff:ffff:ffff:ffff", "discard-only"],
    ["100:0:0:1::1", "dummy IPv6 prefix"],
    ["2001:1::1", "PCP anycast"],
    ["2001:1::3", "DNS-SD SRP anycast"],
    ["2001:2::1", "benchmarking"],
    ["2001:3::1", "AMT"],
    ["2001:4:112::1", "AS112-v6"],
    ["2001:10::1", "deprecated ORCHID"],
    ["2001:20::1", "ORCHIDv2"],
    ["2001:30::1", "drone DETs"],
    ["2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "IETF Protocol Assignments"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2620:4f:8000::6", "direct delegation AS112"],
    ["5f00::1", "SRv6 SIDs"],
    ["64:ff9b::192.0.2.1", "NAT64 of TEST-NET-1"],
    ["::ffff:192.0.0.9", "IPv4-mapped PCP anycast"],
    ["2002:c000:201::1", "6to4 of TEST-NET-1"],
    ["2002:c058:6301::1", "6to4 of the 6to4 relay anycast"],
  ])("refuses %s (%s) even with allowPrivate", (ip) => {
    expect(classifyAddress(ip)).toBe("unspecified");
    expect(isForbidden(ip, ALLOW)).toBe(true);
    expect(checkUrl(`http://${ip.includes(":") ? `[${ip}]` : ip}/mcp`, ALLOW)).toMatchObject({
      ok: false,
      reason: "forbidden_address",
    });
  });

  it.each(["198.18.0.1", "198.19.255.255", "64:ff9b:1::a00:1"])(
    "treats %s as private: reachable only with allowPrivate",
    (ip) => {
      expect(classifyAddress(ip)).toBe("private");
      expect(isForbidden(ip, ALLOW)).toBe(false);
      expect(isForbidden(ip, DENY)).toBe(true);
    },
  );

  it.each([
    "192.0.1.255",
    "192.0.3.0",
    "198.51.101.1",
    "203.0.114.1",
    "2001:200::1",
    "2001:db9::1",
    "2003::1",
  ])("leaves %s, just outside a special-purpose block, public", (ip) => {
    expect(classifyAddress(ip)).toBe("public");
    expect(isForbidden(ip, DENY)).toBe(false);
  });
});
