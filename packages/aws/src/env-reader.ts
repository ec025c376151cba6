/**
 * Reading configuration that fails fast: every variable is checked against what it must be (a whole
 * number in range, a URL, an absolute path, one of a few words), every problem is collected, and
 * `check()` throws them all at once — each naming its variable — so a bad value stops the process at
 * start instead of surfacing as a strange fault later.
 */

type Env = Record<string, string | undefined>;

/** A configuration value that is there but wrong; its message names every such variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  /** The variable, trimmed; undefined when unset or empty. */
  string(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  /** A whole number within [min, max]; `fallback` when unset. */
  integer(name: string, fallback: number, range?: { min?: number; max?: number }): number;
  integer(name: string, fallback: undefined, range?: { min?: number; max?: number }): number | undefined;
  integer(name: string, fallback: number | undefined, { min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
      return this.fail(name, `must be a whole number ${range}`, raw, fallback);
    }
    return value;
  }

  /** true/false (also 1/0, yes/no, on/off); `fallback` when unset. */
  boolean(name: string, fallback: boolean): boolean {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    return this.fail(name, "must be true or false", raw, fallback);
  }

  /** One of `values`; `fallback` when unset. */
  oneOf<const T extends string>(name: string, values: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    return this.fail(name, `must be one of ${values.join(", ")}`, raw, fallback);
  }

  /** An http(s) URL; undefined when unset. */
  url(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    try {
      const url = new URL(raw);
      if (url.protocol === "http:" || url.protocol === "https:") return raw;
    } catch {
      // reported below
    }
    return this.fail(name, "must be an http(s) URL", raw, undefined);
  }

  /** Comma-separated http(s) origins (`https://app.example.com`), normalised; [] when unset. */
  origins(name: string): string[] {
    const items = (this.string(name) ?? "")
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean);
    const bad = items.filter((item) => {
      try {
        const url = new URL(item);
        return !/^https?:$/.test(url.protocol) || url.origin !== item.replace(/\/$/, "").toLowerCase();
      } catch {
        return true;
      }
    });
    if (bad.length > 0)
      return this.fail(
        name,
        "must be comma-separated origins like https://app.example.com",
        bad.join(","),
        [],
      );
    return items.map((item) => item.replace(/\/$/, "").toLowerCase());
  }

  /** An absolute path (no NUL); undefined when unset. */
  absolutePath(name: string): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    if (raw.startsWith("/") && !raw.includes("\0")) return raw;
    return this.fail(name, "must be an absolute path", raw, undefined);
  }

  /** Records a problem with `name` and answers `fallback` (the process will not start anyway). */
  fail<T>(name: string, problem: string, got: string, fallback: T): T {
    this.problems.push(`${name} ${problem} (got '${got.length > 60 ? `${got.slice(0, 60)}…` : got}')`);
    return fallback;
  }

  /** Throws every problem found, at once. */
  check(): void {
    if (this.problems.length > 0) throw new ConfigError(`Invalid configuration: ${this.problems.join("; ")}`);
  }
}
