# The service's image: `npm start` (the indexer) by default; API replicas run the bundle made here
# (docker-compose.yml). The packages are exactly the lockfile's, without the development tools
# (anvil, solc, Biome, vitest), and it runs as the image's unprivileged `node` user.
FROM node:20-bookworm-slim
# The lockfile is npm 11's: node 20's npm 10 counts vitest's vite's optional esbuild peer as
# missing from it and refuses `npm ci`.
RUN npm install --global npm@11.19.1 && npm cache clean --force
WORKDIR /app
RUN chown node:node /app
USER node
COPY --chown=node:node package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --chown=node:node . .
# The replicas' bundle (scripts/bundle.mjs), made once here rather than at each start.
RUN node scripts/bundle.mjs serve
ENV PONDER_TELEMETRY_DISABLED=true
EXPOSE 42069 42070
CMD ["npm", "start", "--", "--port", "42069"]
