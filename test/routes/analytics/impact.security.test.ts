// Impact answers only to a token with the impact scope, and only about units the token may read.
import t from 'tap';
import { unitScopeSecuritySuite } from './unit-scope.security.js';

await unitScopeSecuritySuite(t, { endpoint: '/api/v1/analytics/impact', scope: 'impact', oneCheckOutField: 'farmers_served' });
