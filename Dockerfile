# Production image: compiled JavaScript, production dependencies only, non-root user.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# the partner client is an npm workspace of the repository (npm ci links it; npm run build builds it)
COPY client ./client
RUN npm ci --no-audit --no-fund
COPY src ./src
COPY workers ./workers
COPY sql ./sql
# the console's source: npm run build also builds it (npm start serves the committed build)
COPY console ./console
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# the workspace's manifest only: npm ci needs it, the service never loads the client
COPY client/package.json ./client/package.json
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# dist/ holds the compiled code and a copy of sql/ (migrations and queries)
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# /readyz answers within the database pool's 3 s connect timeout: wait longer than that for its 503
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:3000/readyz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "dist/src/main.js"]
