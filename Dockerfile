FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
ENV PONDER_TELEMETRY_DISABLED=true
EXPOSE 42069
CMD ["npm", "start", "--", "--port", "42069"]
