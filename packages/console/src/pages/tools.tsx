/** PLACEHOLDER (replaced before landing). */
export function ToolsPage() {
  return <h1>tools</h1>;
}
