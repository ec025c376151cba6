/**
 * "Connect a client": an MCP endpoint's URL and the config each common client takes for it — the
 * configs docs/clients.md shows, from one source (`@mcpgw/core/client-configs`) — each with a Copy
 * button. A server's page shows its own endpoint (`/mcp/{server}`) with `<key>` to replace; a key just
 * created shows `/mcp` with the key filled in, the one moment the page knows it.
 */
import { clientConfigs } from "@mcpgw/core/client-configs";
import { mcpUrl } from "./api";
import { CopyField } from "./components";

/** The placeholder a config holds where no key is known. */
const KEY_PLACEHOLDER = "<key>";

/** The endpoint's URL and configs; `keyValue` fills the key in (a key just created: its heading is an h3 there). */
export function ConnectClients(props: { id: string; server?: string; keyValue?: string }) {
  const Heading = props.keyValue ? "h3" : "h2";
  const url = mcpUrl(props.server);
  const name = props.server ?? "gateway";
  const configs = clientConfigs({ url, name, key: props.keyValue ?? KEY_PLACEHOLDER });
  return (
    <section class="connect" aria-labelledby={`${props.id}-title`}>
      <Heading id={`${props.id}-title`}>Connect a client</Heading>
      <p class="help">
        {props.server === undefined
          ? "Every server this key may use, its tools named <server>__<tool>. "
          : `This server alone, under its own tool names (every server a key may use: ${mcpUrl()}). `}
        {props.keyValue
          ? "The key is filled in: copy what you need now."
          : `Replace ${KEY_PLACEHOLDER} with a client API key (Keys).`}
      </p>
      <CopyField id={`${props.id}-url`} label="MCP URL" value={url} />
      {configs.map((config) => (
        <details key={config.client}>
          <summary>
            {config.title} <span class="help">— {config.where}</span>
          </summary>
          <CopyField
            id={`${props.id}-${config.client}`}
            label={`${config.title} config`}
            value={config.text}
            multiline
          />
        </details>
      ))}
    </section>
  );
}
