// What `npm start` prints in the zero-configuration mode: where the service is, a demo employee
// JWT and curl commands to paste (the README's quick tour uses the same ones).
export interface DemoCompany {
  id: number;
  name: string;
  employee_jwt: string;
  cooling_unit_ids: number[];
}

export function demoBanner(baseUrl: string, company: DemoCompany): string {
  const jwt = company.employee_jwt;
  return `
ColdTrack API is running at ${baseUrl}  (docs: ${baseUrl}/docs)
Demo company: ${company.name} (id ${company.id}); units ${company.cooling_unit_ids.join(', ')}

Demo employee JWT (valid 12 hours; restart for a new one):
  export JWT='${jwt}'

Create a token (the raw token is shown once):
  curl -s -X POST ${baseUrl}/api/v1/api-tokens -H "Authorization: Bearer $JWT" \\
    -H 'Content-Type: application/json' \\
    -d '{"name":"Partner ERP","scopes":["users","utilization","revenue","impact","sensor_data"],"cooling_unit_ids":[],"expires_at":null}'
List, retrieve and revoke:
  curl -s ${baseUrl}/api/v1/api-tokens -H "Authorization: Bearer $JWT"
  curl -s ${baseUrl}/api/v1/api-tokens/<token_id> -H "Authorization: Bearer $JWT"
  curl -s -X POST ${baseUrl}/api/v1/api-tokens/<token_id>/revoke -H "Authorization: Bearer $JWT"

Pull data with the token (export TOKEN=ctk_... from the create response):
  curl -s '${baseUrl}/api/v1/analytics/utilization?period=week&page_size=5' -H "Authorization: Bearer $TOKEN"
  curl -s '${baseUrl}/api/v1/analytics/revenue?payment_status=pending' -H "Authorization: Bearer $TOKEN"
  curl -s '${baseUrl}/api/v1/sensor-data?aggregation=hourly&page_size=24' -H "Authorization: Bearer $TOKEN"
`;
}
