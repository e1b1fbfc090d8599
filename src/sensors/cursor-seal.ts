// Sealing a cursor's bytes so that a partner can neither read nor forge them: deterministic
// authenticated encryption (the SIV construction: the MAC of the plain bytes is the IV of their
// encryption), with keys derived per company and per purpose from the database's cursor key
// (sensor_changes_state.cursor_key). Every process and replica seals and opens alike, across
// restarts; a cursor of one company is not one for another, and the positions inside (which count
// every company's loads) stay hidden. Nothing is kept anywhere but in the cursor itself.
import { createCipheriv, createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 16;

function keysOf(databaseKey: Buffer, purpose: string, companyId: number) {
  const companyKey = createHmac('sha256', databaseKey).update(`${purpose}:${companyId}`).digest();
  return {
    mac: createHmac('sha256', companyKey).update('mac').digest(),
    encryption: createHmac('sha256', companyKey).update('encryption').digest(),
  };
}

const crypt = (key: Buffer, iv: Buffer, bytes: Buffer, decrypt: boolean) => {
  const cipher = (decrypt ? createDecipheriv : createCipheriv)('aes-256-ctr', key, iv);
  return Buffer.concat([cipher.update(bytes), cipher.final()]);
};

/** The plain bytes sealed for `companyId`, as base64url of MAC (16 bytes) then ciphertext (as long as `plain`). */
export function sealCursor(databaseKey: Buffer, purpose: string, companyId: number, plain: Buffer): string {
  const keys = keysOf(databaseKey, purpose, companyId);
  const mac = createHmac('sha256', keys.mac).update(plain).digest().subarray(0, MAC_BYTES);
  return Buffer.concat([mac, crypt(keys.encryption, mac, plain, false)]).toString('base64url');
}

/** The length of a sealed cursor of `plainBytes`, in base64url characters. */
export const sealedLength = (plainBytes: number) => Math.ceil(((MAC_BYTES + plainBytes) * 4) / 3);

/** The plain bytes of a cursor sealed for this company with this key, or null for anything else. */
export function openCursor(databaseKey: Buffer, purpose: string, companyId: number, sealed: string, plainBytes: number): Buffer | null {
  const bytes = Buffer.from(sealed, 'base64url');
  // a base64url text whose last character has stray low bits decodes to the same bytes: each
  // cursor has exactly one spelling
  if (bytes.length !== MAC_BYTES + plainBytes || bytes.toString('base64url') !== sealed) return null;
  const keys = keysOf(databaseKey, purpose, companyId);
  const mac = bytes.subarray(0, MAC_BYTES);
  const plain = crypt(keys.encryption, mac, bytes.subarray(MAC_BYTES), true);
  const expected = createHmac('sha256', keys.mac).update(plain).digest().subarray(0, MAC_BYTES);
  return timingSafeEqual(mac, expected) ? plain : null;
}
