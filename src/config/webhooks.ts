// Sending webhooks: whether this process sends, where besides the public internet it may send,
// and how long and how many attempts at once (src/webhooks/settings.ts has the rest).
import { z } from 'zod';
import { parseAllowedNetworks } from '../webhooks/address-policy.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../webhooks/settings.js';
import { integerText, optionalText } from './env.js';

export const webhookVariables = {
  WEBHOOK_DELIVERY: optionalText.pipe(z.enum(['on', 'off'], { error: 'must be on or off' }).optional()),
  WEBHOOK_ALLOWED_NETWORKS: optionalText.pipe(
    z
      .string()
      .transform((text, ctx) => {
        const networks = parseAllowedNetworks(text);
        if ('problem' in networks) {
          ctx.addIssue({ code: 'custom', message: networks.problem });
          return z.NEVER;
        }
        return networks;
      })
      .optional(),
  ),
  WEBHOOK_TIMEOUT_SECONDS: optionalText.pipe(integerText(1, 60).optional()),
  WEBHOOK_CONCURRENCY: optionalText.pipe(integerText(1, 256).optional()),
};

export const webhookSettingsOf = (e: z.infer<z.ZodObject<typeof webhookVariables>>): WebhookSettings => ({
  ...DEFAULT_WEBHOOK_SETTINGS,
  deliver: (e.WEBHOOK_DELIVERY ?? 'on') === 'on',
  allowedNetworks: e.WEBHOOK_ALLOWED_NETWORKS ?? [],
  timeoutMs: (e.WEBHOOK_TIMEOUT_SECONDS ?? DEFAULT_WEBHOOK_SETTINGS.timeoutMs / 1000) * 1000,
  concurrency: e.WEBHOOK_CONCURRENCY ?? DEFAULT_WEBHOOK_SETTINGS.concurrency,
});
