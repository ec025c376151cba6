/** PLACEHOLDER (replaced before landing). */
export function ImportPage() {
  return <h1>import</h1>;
}
