/** PLACEHOLDER (replaced before landing). */
export function KeysPage() {
  return <h1>keys</h1>;
}
