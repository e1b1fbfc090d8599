// The SRE's webhook settings (docs/operations.md, WEBHOOK_* variables), read by src/config.ts.
import type { AllowedNetworks } from './address-policy.js';

export interface WebhookSettings {
  /** whether this process sends deliveries (WEBHOOK_DELIVERY); events are written either way */
  deliver: boolean;
  /** networks sent to despite the address rules, and over plain http (WEBHOOK_ALLOWED_NETWORKS) */
  allowedNetworks: AllowedNetworks;
  /** one attempt's deadline: connect, send, answer (WEBHOOK_TIMEOUT_SECONDS) */
  timeoutMs: number;
  /** attempts under way at once in this process (WEBHOOK_CONCURRENCY) */
  concurrency: number;
  /** attempts under way at once to one endpoint, across every process */
  perEndpointInFlight: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  deliver: true,
  allowedNetworks: [],
  timeoutMs: 10_000,
  concurrency: 16,
  perEndpointInFlight: 4,
};
