/** PLACEHOLDER (replaced before landing). */
export function ThreadsPage() {
  return <h1>threads</h1>;
}
