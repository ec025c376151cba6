/**
 * Hash routes (`#/servers/docs`): the page is one file at `/`, so any route reloads into the same
 * page, and no server route is needed per view.
 */
import { useEffect, useState } from "preact/hooks";

/** The current route's path segments, e.g. `["servers", "docs"]`; updates on navigation. */
export function useRoute(): string[] {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => {
      const next = currentPath();
      setPath((shown) => (shown.join("/") === next.join("/") ? shown : next));
    };
    addEventListener("hashchange", update);
    // A navigation between the first render and this effect (effects run after paint) fired no event
    // this listener heard: catch up with it now.
    update();
    return () => removeEventListener("hashchange", update);
  }, []);
  return path;
}

/** The href of a route, from its segments (each encoded). */
export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join("/")}`;
}

/** Goes to a route. */
export function navigate(...segments: string[]): void {
  location.hash = href(...segments);
}

function currentPath(): string[] {
  return location.hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter(Boolean)
    .map((segment) => decodeURIComponent(segment));
}
