/**
 * A server's tool changes waiting for an admin (`GET /v1/servers/{id}/changes`): each change's tool and
 * kind, a per-field diff (long text wrapped, invisible characters shown by code point), its screening
 * flags, and Approve / Reject (Reject asks first).
 */
import { request, seg } from "./api";
import { ConfirmButton, Problem, useAction, usePolled, when } from "./components";
import type { PendingChange } from "./types";
import { valueText, visiblePieces } from "./visible-text";

/** `onDecided` gets the sentence saying what was decided, for the page to show (this list may go with it). */
export function PendingChanges(props: {
  path: string;
  count: number;
  onDecided: (sentence: string) => void;
}) {
  const changes = usePolled(
    () => request<{ changes: PendingChange[] }>("GET", `${props.path}/changes`).then((body) => body.changes),
    0,
    [props.path, props.count],
  );
  const action = useAction();
  const decide = (change: PendingChange, decision: "approve" | "reject") =>
    action.run(async () => {
      await request("POST", `${props.path}/changes/${seg(change.id)}/${decision}`);
      changes.reload();
      props.onDecided(
        decision === "approve"
          ? `Approved the change to ${change.tool}: clients now see the new definition.`
          : `Rejected the change to ${change.tool}: clients keep the pinned definition.`,
      );
      return "";
    });

  return (
    <section class="pending" aria-labelledby="pending-title">
      <h2 id="pending-title">
        Pending changes <span class="pending-count">{props.count}</span>
      </h2>
      <p class="help">
        The upstream changed these tools after they were pinned. Clients keep the pinned definitions (a new
        tool stays hidden) until a change is approved.
      </p>
      <Problem error={action.error ?? changes.error} />
      {changes.data?.map((change) => (
        <article
          class="change"
          key={change.id}
          data-change={change.tool}
          aria-label={`Change to ${change.tool}`}
        >
          <h3>
            <code>{change.tool}</code>{" "}
            <span class={`badge kind-${change.kind}`}>
              {change.kind === "added" ? "new tool" : "changed"}
            </span>{" "}
            <span class="help">{when(change.detectedAt)}</span>
          </h3>
          <Screening flags={change.screening} />
          <div class="table-wrap">
            <table class="stack diff">
              <caption class="visually-hidden">What changed in {change.tool}</caption>
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Pinned</th>
                  <th scope="col">Upstream now</th>
                </tr>
              </thead>
              <tbody>
                {change.diff.map((entry) => (
                  <tr key={entry.field}>
                    <th scope="row" class="mono">
                      {entry.field}
                    </th>
                    <td class="before">
                      <span class="cell-label">Pinned: </span>
                      <Shown value={entry.before} />
                    </td>
                    <td class="after">
                      <span class="cell-label">Upstream now: </span>
                      <Shown value={entry.after} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions">
            <button type="button" class="primary" onClick={() => decide(change, "approve")}>
              Approve
            </button>
            <ConfirmButton
              label="Reject"
              danger
              question={`Reject the change to ${change.tool}? Clients keep the pinned definition${change.kind === "added" ? " (the new tool stays hidden)" : ""}.`}
              onConfirm={() => decide(change, "reject")}
            />
          </div>
        </article>
      ))}
    </section>
  );
}

/** The screening's flags, marked as warnings (text and icon, never colour alone); none said so. */
function Screening({ flags }: { flags: PendingChange["screening"] }) {
  if (flags.length === 0) return <p class="help">Screening found nothing to flag.</p>;
  return (
    <ul class="screening" aria-label="Screening flags">
      {flags.map((flag) => (
        <li key={`${flag.rule}:${flag.detail}`}>
          <span aria-hidden="true">⚠ </span>
          <strong class="mono">{flag.rule}</strong>: <Visible text={flag.detail} />
        </li>
      ))}
    </ul>
  );
}

/** One side of a diff: wrapped, its hidden characters shown. */
function Shown({ value }: { value: unknown }) {
  return (
    <pre class="diff-value">
      <Visible text={valueText(value)} />
    </pre>
  );
}

/** Text with every character that would not show replaced by a marked code point. */
function Visible({ text }: { text: string }) {
  return (
    <>
      {visiblePieces(text).map((piece, index) =>
        piece.hidden ? (
          <mark class="hidden-char" key={index} title={`invisible character ${piece.codePoint}`}>
            {piece.codePoint}
          </mark>
        ) : (
          piece.text
        ),
      )}
    </>
  );
}
