// The webhook routes' answers as the tests read them, taken from the routes' own schemas (not
// declared again by hand).
import type { z } from 'zod';
import type { delivery } from '../../src/routes/webhook-endpoints/deliveries.js';
import type { webhookEndpoint } from '../../src/routes/webhook-endpoints/schema.js';

/** An endpoint as the API shows it; `secret` only in the answers of create and rotate-secret. */
export type WebhookEndpointJson = z.infer<typeof webhookEndpoint> & { secret?: string };
/** An entry of an endpoint's delivery log. */
export type WebhookDeliveryJson = z.infer<typeof delivery>;
