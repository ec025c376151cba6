/**
 * A server's resources and prompts on its page, each list collapsed until opened — then read live
 * from the server (`GET /v1/resources?server=…`, `GET /v1/prompts?server=…`) — behind a filter, with
 * what each item is (a resource's URI and type, a template's URI template, a prompt's arguments).
 */
import { useState } from "preact/hooks";
import { request } from "./api";
import { Filters, Problem } from "./components";

type Item = Record<string, unknown>;
interface ResourceList {
  resources: Item[];
  resourceTemplates: Item[];
  truncated: boolean;
}
interface PromptList {
  prompts: Item[];
  truncated: boolean;
}

/** The resources and prompts of `server` (connected), each a collapsed, lazily read list. */
export function ServerBrowse({ server }: { server: string }) {
  return (
    <>
      <Browse
        title="Resources"
        load={() =>
          request<ResourceList>("GET", `/v1/resources?server=${encodeURIComponent(server)}`).then((list) => ({
            items: [
              ...list.resources.map((item) => describeResource(item, false)),
              ...list.resourceTemplates.map((item) => describeResource(item, true)),
            ],
            truncated: list.truncated,
          }))
        }
        none="This server lists no resources."
      />
      <Browse
        title="Prompts"
        load={() =>
          request<PromptList>("GET", `/v1/prompts?server=${encodeURIComponent(server)}`).then((list) => ({
            items: list.prompts.map(describePrompt),
            truncated: list.truncated,
          }))
        }
        none="This server lists no prompts."
      />
    </>
  );
}

/** One listed item as shown: its name, what it is, and its description. */
interface Shown {
  key: string;
  name: string;
  detail: string;
  description: string;
}

function Browse(props: {
  title: string;
  load: () => Promise<{ items: Shown[]; truncated: boolean }>;
  none: string;
}) {
  const [loaded, setLoaded] = useState<{ items: Shown[]; truncated: boolean } | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [filter, setFilter] = useState("");
  const [opened, setOpened] = useState(false);
  const open = () => {
    setOpened(true);
    if (loaded) return;
    setError(undefined);
    props.load().then(setLoaded, setError);
  };
  const needle = filter.trim().toLowerCase();
  const shown = (loaded?.items ?? []).filter(
    (item) => !needle || `${item.name} ${item.detail} ${item.description}`.toLowerCase().includes(needle),
  );
  return (
    <details
      class="browse"
      data-browse={props.title.toLowerCase()}
      onToggle={(event) => event.currentTarget.open && open()}
    >
      <summary>
        <h2 class="browse-title">
          {props.title}
          {loaded ? <span class="count"> {loaded.items.length}</span> : null}
        </h2>
      </summary>
      <Problem error={error} />
      {!opened ? null : !loaded ? (
        error ? null : (
          <p class="loading">Reading them from the server…</p>
        )
      ) : loaded.items.length === 0 ? (
        <p class="help">{props.none}</p>
      ) : (
        <>
          <Filters text={filter} onText={setFilter} placeholder="name, URI or description" />
          <ul class="browse-list">
            {shown.map((item) => (
              <li key={item.key}>
                <span class="browse-name">{item.name}</span> <code class="browse-detail">{item.detail}</code>
                {item.description ? <span class="browse-description">{item.description}</span> : null}
              </li>
            ))}
          </ul>
          {shown.length === 0 ? <p>Nothing matches the filter.</p> : null}
          {loaded.truncated ? <p class="help">The first 1,000 are shown.</p> : null}
        </>
      )}
    </details>
  );
}

const text = (value: unknown) => (typeof value === "string" ? value : "");

function describeResource(item: Item, template: boolean): Shown {
  const uri = template ? text(item.uriTemplate) : text(item.uri);
  const type = text(item.mimeType);
  return {
    key: `${template ? "template" : "resource"}:${uri}:${text(item.name)}`,
    name: text(item.title) || text(item.name) || uri,
    detail: `${uri}${type ? ` (${type})` : ""}${template ? " — a template" : ""}`,
    description: text(item.description),
  };
}

function describePrompt(item: Item): Shown {
  const args = Array.isArray(item.arguments) ? (item.arguments as Item[]) : [];
  const names = args
    .map((arg) => `${text(arg.name)}${arg.required === true ? "" : "?"}`)
    .filter((name) => name !== "?");
  return {
    key: `prompt:${text(item.name)}`,
    name: text(item.title) || text(item.name),
    detail: `${text(item.name)}(${names.join(", ")})`,
    description: text(item.description),
  };
}
