import type { AuditPrincipal } from "@mcpgw/core";
import type { Principal } from "./env";

/** The principal as the audit names it (the admin by subject when signed in through the provider). */
export function auditPrincipal(principal: Principal | undefined): AuditPrincipal {
  if (!principal || principal.kind === "admin")
    return principal?.sub ? { kind: "admin", sub: principal.sub } : { kind: "admin" };
  if (principal.kind === "user") return { kind: "user", sub: principal.sub };
  return principal.keyName
    ? { kind: "key", keyId: principal.keyId, keyName: principal.keyName }
    : { kind: "key", keyId: principal.keyId };
}
