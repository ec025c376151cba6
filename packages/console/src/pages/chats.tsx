/** PLACEHOLDER (replaced before landing). */
export function ChatsPage() {
  return <h1>chats</h1>;
}
