/**
 * `tsx bench/airdrop-client.ts <dir>`: the airdrop's client, in a process of its own as a user's
 * would be (bench/airdrop.ts starts it). It reads an AirdropRequest from <dir>/request.json, says
 * so (<dir>/ready), and once told (<dir>/go) asks its checks through the typed client's checkMany,
 * and writes AirdropAnswers to <dir>/answers.json.
 * Its own process: in the bench's, the client's garbage collections walked the bench's whole heap
 * (the seeded data), which a user's client does not hold.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toJson } from "../api/http/json";
import { checkMany, type V2BatchCheck } from "../client/batch";
import { createLookupClient } from "../client/index";

export type AirdropRequest = {
  url: string;
  apiKey?: string;
  chainId: number;
  blockNumber: string;
  checks: V2BatchCheck[];
};

/**
 * `answers`: each as JSON text (toJson: its amounts exact, as no JSON number could hold them); `ms`:
 * from checkMany's call to its last answer; `cpuMs`: this process's CPU meanwhile.
 */
export type AirdropAnswers = { answers: string[]; block: string | undefined; ms: number; cpuMs: number };

const dir = process.argv[2]!;
const request = JSON.parse(readFileSync(join(dir, "request.json"), "utf8")) as AirdropRequest;
const api = createLookupClient(request.url, request.apiKey === undefined ? {} : { apiKey: request.apiKey });
// Read (seconds, for a million checks): it starts when told, so that what is measured beside it
// (bench/profile.ts) spans its checks alone.
writeFileSync(join(dir, "ready"), "");
while (!existsSync(join(dir, "go"))) await new Promise((ok) => setTimeout(ok, 10));
const started = performance.now();
const cpu = process.cpuUsage();
const { answers, block } = await checkMany(api, "v2", request.checks, {
  chainId: request.chainId,
  blockNumber: request.blockNumber,
});
const ms = performance.now() - started;
const { user, system } = process.cpuUsage(cpu);
const out: AirdropAnswers = {
  answers: answers.map((answer) => toJson(answer)),
  block: block?.toString(),
  ms,
  cpuMs: (user + system) / 1000,
};
writeFileSync(join(dir, "answers.json"), JSON.stringify(out));
