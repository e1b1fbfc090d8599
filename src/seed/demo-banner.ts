// What `npm start` prints in the zero-configuration mode: where the service is, the token console
// signed in as the demo employee, that employee's JWT, the embedded database's URL for the CLI
// commands, and commands to paste. Every indented line runs verbatim in bash, in order
// (test/seed/demo-banner.test.ts runs them): values a later line needs (the new token and its id)
// are kept in shell variables by an earlier one. With DATABASE_URL there is no demo employee:
// only where the service and its console are (serviceBanner).
export interface DemoCompany {
  id: number;
  name: string;
  employee_jwt: string;
  cooling_unit_ids: number[];
}

export interface BannerExtras {
  /** The embedded database, for `npm run ingest` and the other CLI commands. */
  databaseUrl?: string | undefined;
}

/** The console's address with the JWT in the fragment: the page takes it and wipes it from the URL. */
export const consoleUrl = (baseUrl: string, jwt: string) => `${baseUrl}/console#jwt=${encodeURIComponent(jwt)}`;

export function demoBanner(baseUrl: string, company: DemoCompany, extras: BannerExtras = {}): string {
  const jwt = company.employee_jwt;
  const database = extras.databaseUrl
    ? `
The embedded PostgreSQL, for npm run ingest / seed / migrate in another terminal:
  export DATABASE_URL='${extras.databaseUrl}'
`
    : '';
  return `
ColdTrack API is running at ${baseUrl}  (docs: ${baseUrl}/docs, OpenAPI: ${baseUrl}/openapi.json)
Demo company: ${company.name} (id ${company.id}); units ${company.cooling_unit_ids.join(', ')}
${database}
Token console, signed in as the demo employee (the JWT rides in the fragment, which browsers never send):
${consoleUrl(baseUrl, jwt)}

Demo employee JWT (valid 12 hours; restart for a new one):
  export JWT='${jwt}'

Create a token (the raw token is in this response only: the next lines keep it and its id):
  CREATED=$(curl -s -X POST ${baseUrl}/api/v1/api-tokens -H "Authorization: Bearer $JWT" -H 'Content-Type: application/json' -d '{"name":"Partner ERP","scopes":["users","utilization","revenue","impact","sensor_data"],"cooling_unit_ids":[],"expires_at":null}')
  echo "$CREATED"
  TOKEN=$(node -p 'JSON.parse(process.argv[1]).token' "$CREATED"); TOKEN_ID=$(node -p 'JSON.parse(process.argv[1]).id' "$CREATED")

List and retrieve tokens:
  curl -s ${baseUrl}/api/v1/api-tokens -H "Authorization: Bearer $JWT"
  curl -s ${baseUrl}/api/v1/api-tokens/$TOKEN_ID -H "Authorization: Bearer $JWT"

Pull data with the token:
  curl -s '${baseUrl}/api/v1/analytics/utilization?period=week&page_size=5' -H "Authorization: Bearer $TOKEN"
  curl -s '${baseUrl}/api/v1/analytics/revenue?payment_status=pending' -H "Authorization: Bearer $TOKEN"
  curl -s '${baseUrl}/api/v1/sensor-data?aggregation=hourly&page_size=24' -H "Authorization: Bearer $TOKEN"

Revoke it (from now on the token is refused):
  curl -s -X POST ${baseUrl}/api/v1/api-tokens/$TOKEN_ID/revoke -H "Authorization: Bearer $JWT"
`;
}

/**
 * What `npm start` prints with DATABASE_URL: where the service is and the console's address, with
 * no JWT in it (nothing is seeded, so there is no demo employee): an employee signs in with their
 * own (docs/employees.md, "Your JWT").
 */
export function serviceBanner(baseUrl: string): string {
  return `
ColdTrack API is running at ${baseUrl}  (docs: ${baseUrl}/docs, OpenAPI: ${baseUrl}/openapi.json)
Token console, for Registered Employees (sign in with your JWT; npm run mint-jwt -- <user_id> makes a dev one):
${baseUrl}/console
`;
}
