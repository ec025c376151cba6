/** PLACEHOLDER (replaced before landing). */
export function SecretsPage() {
  return <h1>secrets</h1>;
}
