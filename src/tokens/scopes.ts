// The data scopes a token can carry, one per data endpoint (docs/contract.md, "Tokens").
export const SCOPES = ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] as const;
export type Scope = (typeof SCOPES)[number];

export const TOKEN_STATES = ['active', 'expired', 'revoked'] as const;
export type TokenState = (typeof TOKEN_STATES)[number];
