import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { type SealContext, SealError, type SealedValue, type Sealer, sealContextBytes } from "../sealing";

/**
 * Sealing without KMS: AES-256-GCM under one random key of this process, the context bound as the
 * associated data — so a value opened under another context fails as it does with KMS. Tests only.
 */
export function createMemorySealer(): Sealer {
  const key = randomBytes(32);
  return {
    async seal(value: unknown, context: SealContext): Promise<SealedValue> {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(sealContextBytes(context));
      const data = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
      return {
        v: 1,
        key: "memory",
        iv: iv.toString("base64"),
        tag: cipher.getAuthTag().toString("base64"),
        data: data.toString("base64"),
      };
    },

    async open<T>(sealed: SealedValue, context: SealContext): Promise<T> {
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(sealed.iv, "base64"));
        decipher.setAAD(sealContextBytes(context));
        decipher.setAuthTag(Buffer.from(sealed.tag, "base64"));
        const text = Buffer.concat([decipher.update(Buffer.from(sealed.data, "base64")), decipher.final()]);
        return JSON.parse(text.toString("utf8")) as T;
      } catch (cause) {
        throw new SealError("Sealed value failed authentication under this context", { cause });
      }
    },
  };
}
