// Revenue answers only to a token with the revenue scope, and only about units the token may read.
import t from 'tap';
import { unitScopeSecuritySuite } from './unit-scope.security.js';

await unitScopeSecuritySuite(t, { endpoint: '/api/v1/analytics/revenue', scope: 'revenue', oneCheckOutField: 'check_outs' });
