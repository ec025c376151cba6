/**
 * One tool: its name, description and input schema as a readable list of parameters (type,
 * required, description, allowed values, default), the raw schema as JSON on demand, and a "Try it"
 * form generated from the schema that calls the tool as `callName` (`<server>__<tool>`).
 */

import { CallStats } from "./call-stats";
import { paramsOf, typeLabel } from "./tool-schema";
import { TryIt } from "./tool-try";
import type { Tool } from "./types";

/** `stats`: the tool's calls over the last hour or day are shown too (by its server's name and its own). */
export function ToolView(props: { tool: Tool; callName: string; stats?: { server: string; tool: string } }) {
  const { tool, callName, stats } = props;
  const idBase = `tool-${callName.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const params = paramsOf(tool.inputSchema);
  return (
    <article class="tool" data-tool={callName} aria-labelledby={`${idBase}-name`}>
      <h3 id={`${idBase}-name`} class="tool-name">
        {tool.name}
      </h3>
      {callName !== tool.name ? (
        <p class="help">
          Called as <code>{callName}</code>
        </p>
      ) : null}
      {tool.description ? <p class="tool-description">{tool.description}</p> : null}
      <h4>Parameters</h4>
      {params === undefined ? (
        <p class="help">
          Not a plain list of parameters: see the schema below ({typeLabel(tool.inputSchema ?? {})}).
        </p>
      ) : params.length === 0 ? (
        <p class="help">None.</p>
      ) : (
        <ul class="params">
          {params.map(({ name, schema, required }) => (
            <li key={name}>
              <code class="param-name">{name}</code> <span class="param-type">{typeLabel(schema)}</span>{" "}
              <span class={required ? "param-required" : "param-optional"}>
                {required ? "required" : "optional"}
              </span>
              {schema.description ? <span class="param-description">{schema.description}</span> : null}
              {Array.isArray(schema.enum) ? (
                <span class="param-extra">
                  One of: {schema.enum.map((value) => JSON.stringify(value)).join(", ")}
                </span>
              ) : null}
              {schema.default !== undefined ? (
                <span class="param-extra">
                  Default: <code>{JSON.stringify(schema.default)}</code>
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      <details class="raw">
        <summary>Input schema as JSON</summary>
        <pre>{JSON.stringify(tool.inputSchema ?? {}, null, 2)}</pre>
        {tool.outputSchema ? (
          <>
            <p class="result-sub">Output schema</p>
            <pre>{JSON.stringify(tool.outputSchema, null, 2)}</pre>
          </>
        ) : null}
      </details>
      {stats ? (
        <>
          <h4>Calls</h4>
          <CallStats server={stats.server} tool={stats.tool} idBase={`${idBase}-calls`} />
        </>
      ) : null}
      <h4>Try it</h4>
      <TryIt tool={tool} callName={callName} idBase={idBase} />
    </article>
  );
}
