/**
 * The access-token signer: the interface and both implementations live with the KMS adapter in
 * `@mcpgw/aws` (KMS ES256 deployed and in dev; node:crypto P-256 in unit tests).
 */
export { createKmsTokenSigner, createLocalTokenSigner, type TokenSigner } from "@mcpgw/aws";
