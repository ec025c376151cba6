import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from "@aws-sdk/client-kms";

/** A value sealed by envelope encryption: a KMS-wrapped data key and the AES-256-GCM ciphertext. */
export interface SealedValue {
  v: 1;
  /** The data key, encrypted by KMS under the encryption context (base64). */
  key: string;
  iv: string;
  tag: string;
  data: string;
}

/** What a sealed value is bound to; opening it under any other context fails. */
export type SealContext = Record<string, string>;

/** Sealing or opening failed; the value was not written / cannot be read. */
export class SealError extends Error {
  override readonly name = "SealError";
}

/** Envelope sealing with one fresh data key per value; fails closed. */
export interface Sealer {
  seal(value: unknown, context: SealContext): Promise<SealedValue>;
  open<T>(sealed: SealedValue, context: SealContext): Promise<T>;
}

/** A sealer over KMS key `keyId`; the context is bound both by KMS and as the GCM associated data. */
export function createKmsSealer(kms: KMSClient, keyId: string): Sealer {
  return {
    async seal(value, context) {
      let dataKey: { Plaintext?: Uint8Array; CiphertextBlob?: Uint8Array };
      try {
        dataKey = await kms.send(
          new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: "AES_256", EncryptionContext: context }),
        );
      } catch (cause) {
        throw new SealError(`Could not get a data key from KMS (${errorName(cause)})`, { cause });
      }
      const { Plaintext: plainKey, CiphertextBlob: wrappedKey } = dataKey;
      if (!plainKey || !wrappedKey) throw new SealError("KMS returned no data key");
      try {
        const iv = randomBytes(12);
        const cipher = createCipheriv("aes-256-gcm", plainKey, iv);
        cipher.setAAD(sealContextBytes(context));
        const data = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
        return {
          v: 1,
          key: Buffer.from(wrappedKey).toString("base64"),
          iv: iv.toString("base64"),
          tag: cipher.getAuthTag().toString("base64"),
          data: data.toString("base64"),
        };
      } finally {
        plainKey.fill(0);
      }
    },

    async open<T>(sealed: SealedValue, context: SealContext): Promise<T> {
      let plainKey: Uint8Array | undefined;
      try {
        const result = await kms.send(
          new DecryptCommand({
            CiphertextBlob: Buffer.from(sealed.key, "base64"),
            EncryptionContext: context,
          }),
        );
        plainKey = result.Plaintext;
      } catch (cause) {
        throw new SealError(`Could not unwrap the data key (${errorName(cause)})`, { cause });
      }
      if (!plainKey) throw new SealError("KMS returned no plaintext key");
      try {
        const decipher = createDecipheriv("aes-256-gcm", plainKey, Buffer.from(sealed.iv, "base64"));
        decipher.setAAD(sealContextBytes(context));
        decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
        const text = Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]);
        return JSON.parse(text.toString("utf8")) as T;
      } catch (cause) {
        throw new SealError("Sealed value failed authentication under this context", { cause });
      } finally {
        plainKey.fill(0);
      }
    },
  };
}

/** Canonical bytes of a context (keys sorted), so the same context always authenticates. */
export function sealContextBytes(context: SealContext): Buffer {
  return Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : 1))));
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : "unknown error";
}

/** The context a server's sealed field is bound to. */
export function serverFieldContext(serverId: string, field: "headers" | "env" | "auth"): SealContext {
  return { "mcpgw:server": serverId, "mcpgw:field": field };
}

/** The context a secret-store entry is bound to. */
export function secretContext(name: string): SealContext {
  return { "mcpgw:secret": name };
}
