/**
 * Tools as a collapsed list: each a summary line (name, the description's first line) that opens to
 * its parameters, schema and "Try it" form — mounted when first opened and kept while the page is — so
 * a catalogue of hundreds stays a page you can scan. The Tools page lists every server's this way, a
 * server's page its own, both behind a text filter ({@link matchesTool}).
 */
import { useState } from "preact/hooks";
import { ToolView } from "./tool-view";
import type { Tool } from "./types";

/** One tool of a list: what it shows (its own name), what it is called as, and its call stats' key. */
export interface ListedTool {
  tool: Tool;
  callName: string;
  stats?: { server: string; tool: string };
}

/**
 * The list; with `limit`, only that many at first and a button that shows the rest (a filter that
 * narrows the list below the limit shows every match).
 */
export function ToolList(props: { tools: ListedTool[]; limit?: number }) {
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());
  const [all, setAll] = useState(false);
  const limit = all || props.limit === undefined ? props.tools.length : props.limit;
  const hidden = props.tools.length - limit;
  return (
    <>
      <ul class="tool-list">
        {props.tools.slice(0, limit).map(({ tool, callName, stats }) => (
          <li key={callName}>
            <details
              data-tool={callName}
              onToggle={(event) => {
                if (event.currentTarget.open && !opened.has(callName))
                  setOpened(new Set([...opened, callName]));
              }}
            >
              <summary>
                <code class="tool-summary-name">{callName}</code>
                {tool.description ? (
                  <span class="tool-summary-description">{firstLine(tool.description)}</span>
                ) : null}
              </summary>
              {opened.has(callName) ? (
                <ToolView tool={tool} callName={callName} {...(stats ? { stats } : {})} />
              ) : null}
            </details>
          </li>
        ))}
      </ul>
      {hidden > 0 ? (
        <button type="button" onClick={() => setAll(true)}>
          Show {hidden} more {hidden === 1 ? "tool" : "tools"}
        </button>
      ) : null}
    </>
  );
}

/** Whether a tool's name (as called) or description holds `filter` (any case; an empty filter: all). */
export function matchesTool(filter: string, callName: string, description: string | undefined): boolean {
  const needle = filter.trim().toLowerCase();
  return (
    !needle || callName.toLowerCase().includes(needle) || (description ?? "").toLowerCase().includes(needle)
  );
}

/** A description's first line, cut to a summary's length. */
function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}
