// Written by client/scripts/build.mjs from package.json's version before every build and pack:
// never edit it, raise the version in package.json. Committed, so that the type check and tsx run
// the sources of a fresh clone before any build.
export const CLIENT_VERSION = '1.4.0';
/** What a ColdtrackClient sends as User-Agent unless its `userAgent` option says otherwise. */
export const DEFAULT_USER_AGENT = `@coldtrack/client/${CLIENT_VERSION}`;
