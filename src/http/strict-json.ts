// What JSON.parse lets through silently and this service refuses: a key given twice in one object
// (the last would win, so `{"scopes":["users"],"scopes":["revenue","impact"]}` would quietly grant
// what a reviewer did not read) and strings that are not well-formed UTF-16 (a lone surrogate, from
// a `\ud800` escape, would be stored as U+FFFD). Both are 400 naming where they are.
import type { FastifyRequest } from 'fastify';
import { invalidRequest, unsupportedMediaType } from './errors.js';

const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

/**
 * preParsing hook of a route whose body must be JSON: any other (or no) Content-Type is 415
 * before the body is read, so a form or text body is refused as a media type, not as a shape.
 */
export async function requireJsonBody(request: FastifyRequest) {
  if (!JSON_MEDIA_TYPE.test(request.headers['content-type'] ?? '')) throw unsupportedMediaType();
}

/** The path of the first key given twice in one object of `text` (valid JSON), or null. */
export function duplicateKey(text: string): string | null {
  // a stack of open containers: for objects, the keys seen so far
  const stack: Array<{ keys: Set<string> | null; path: string; key: string | null }> = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = stack.at(-1);
      if (expectKey && top?.keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        const path = top.path ? `${top.path}.${key}` : key;
        if (top.keys.has(key)) return path;
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    } else if (char === '{' || char === '[') {
      const parent = stack.at(-1);
      const path = parent ? (parent.keys ? (parent.path ? `${parent.path}.${parent.key}` : (parent.key ?? '')) : parent.path) : '';
      stack.push({ keys: char === '{' ? new Set() : null, path, key: null });
      expectKey = char === '{';
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      expectKey = stack.at(-1)?.keys != null;
    }
  }
  return null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const isWellFormed = (text: string) => !LONE_SURROGATE.test(text);

/** The path of the first string (key or value) that is not well-formed UTF-16, or null. */
export function malformedString(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return isWellFormed(value) ? null : path || 'body';
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = malformedString(item, path ? `${path}.${index}` : String(index));
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (!isWellFormed(key)) return here;
      const found = malformedString(item, here);
      if (found) return found;
    }
  }
  return null;
}

/** The 400 for a parsed JSON body that breaks either rule, or null. */
export function strictJsonRefusal(text: string, value: unknown) {
  const duplicated = duplicateKey(text);
  if (duplicated) return invalidRequest(duplicated.split('.')[0]!, `Key "${duplicated}" is given more than once`);
  const malformed = malformedString(value);
  if (malformed) return invalidRequest(malformed.split('.')[0]!, `${malformed} holds a lone surrogate (not valid Unicode text)`);
  return null;
}
