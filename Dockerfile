FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# The lock was made on a registry without foreign-platform builds: npm ci would call it out of sync.
RUN npm install --no-audit --no-fund
COPY . .
ENV PONDER_TELEMETRY_DISABLED=true
EXPOSE 42069 42070
CMD ["npm", "start", "--", "--port", "42069"]
