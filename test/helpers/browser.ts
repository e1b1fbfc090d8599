// Headless Chromium for the browser tests: Debian's `chromium` package driven by playwright-core
// (playwright's own browser download cannot work on these machines). .ci/run installs the
// package when it is missing. The flags keep Chromium off the network it has no access to.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function launchBrowser(t: Teardown): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}
