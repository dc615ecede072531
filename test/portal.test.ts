/**
 * The service's pages in a real headless Chromium (Debian's, driven by playwright-core).
 *
 * The developer portal (/developer): the operator signs in with the admin token, creates a key and
 * reads it off the page, the API serves that key beyond the keyless limit, the page counts its
 * requests, and once it is revoked in the page the API refuses it. A key's holder signs in with the
 * key, adds a webhook endpoint (a receiver on loopback) and reads its secret off the page; the test
 * delivery and a delegation's entry arrive signed by it; the endpoint is paused and deleted.
 *
 * The API reference (/docs), with every request beyond loopback refused: it renders every
 * operation of /openapi.json, and "Try it out" gets a 200 from the service. Its screenshot is kept
 * in `.ci/artifacts/docs.png` (ARTIFACTS_DIR to put it elsewhere).
 *
 * Controls are found by their accessible names (labels, button names, roles), as assistive
 * technology finds them.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { Webhook as Verifier } from "standardwebhooks";
import { getAddress, zeroHash } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../api/openapi/document";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { abis, installRegistries } from "../devkit/oracle";
import { chainClient } from "../devkit/rpc";
import { sendWrite } from "../devkit/send";
import { type Service, startService } from "../devkit/service";

const CHROMIUM = "/usr/bin/chromium";
const V2 =
  "/registry/v2/check/all?to=0x70997970C51812dc3A010C7d01b50e0d17dc79C8" +
  "&from=0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266&chainId=31337";

let anvil: Anvil;
let registries: Awaited<ReturnType<typeof installRegistries>>;
let service: Service;
let browser: Browser;

beforeAll(async () => {
  anvil = await startAnvil();
  registries = await installRegistries(anvil.url);
  [service, browser] = await Promise.all([
    // The webhook receiver is on loopback: the operator allows it.
    startService({ rpc: { 31337: anvil.url }, env: { WEBHOOK_ALLOW_PRIVATE: "true" } }),
    chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    }),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await anvil?.stop();
});

const api = (key: string) => ask(service.url, V2, { headers: { "X-API-KEY": key }, reask: false });
const text = async (page: Page, selector: string) => ((await page.locator(selector).textContent()) ?? "").trim();
/** What the page's live regions say: its status, and its error (empty when none). */
const said = async (page: Page) => `status: ${await text(page, "#status")} | error: ${await text(page, "#error")}`;
/** The page waits on the service, which shares two cores with the other tests. */
const POLL = { timeout: 15_000 };

describe("the developer portal", () => {
  it("signs in with the admin token, creates a key shown once, counts its use, and revokes it", async () => {
    const page = await browser.newPage();
    // The revoke button asks for confirmation.
    page.on("dialog", (dialog) => void dialog.accept());
    const response = await page.goto(`${service.url}/developer`);
    expect(response?.status()).toBe(200);
    expect(await page.title()).toContain("Developer portal");
    expect(await page.getByRole("status").getAttribute("aria-live")).toBe("polite");

    // A wrong token is refused, and the page says why.
    await page.getByLabel("Admin token").fill("not the admin token, but long");
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await expect.poll(() => text(page, "#error"), POLL).toContain("ADMIN_TOKEN");
    expect(await page.getByRole("heading", { name: "API keys" }).isVisible()).toBe(false);

    await page.getByLabel("Admin token").fill(service.adminToken!);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await expect.poll(() => said(page), POLL).toBe("status: Signed in. | error: ");
    // The key startService made is listed, without its text.
    expect(await text(page, "#key-rows")).toContain("tests");
    expect(await page.content()).not.toContain(service.apiKey!.slice(17));

    await page.getByLabel("Label").fill("portal test");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => text(page, "#new-key"), POLL).toMatch(/^dlk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const key = await text(page, "#new-key");
    const id = key.slice(4, 16);
    await expect.poll(() => said(page), POLL).toMatch(/^status: Key “portal test” created\..* \| error: $/);
    // Focus moves to the key, for the operator to copy it.
    expect(await page.evaluate("document.activeElement?.id")).toBe("new-key");

    // The key on the API, beyond the keyless limit of 25 requests in 10 seconds.
    const answers = await Promise.all(Array.from({ length: 40 }, () => api(key)));
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));

    const row = page.locator(`#key-rows tr[data-key-id="${id}"]`);
    await page.getByRole("button", { name: "Refresh" }).click();
    await expect
      .poll(async () => (await row.locator("td").allTextContents()).map((t) => t.trim()), POLL)
      .toEqual([id, "portal test", expect.any(String), "Active", "40", "Revoke"]);

    // Signed in for the rest of the tab's session; the key itself is not shown again.
    await page.reload();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await row.waitFor();
    expect(await page.locator("#new-key-box").isVisible()).toBe(false);
    expect(await page.content()).not.toContain(key.slice(17));

    await page.getByRole("button", { name: `Revoke key portal test (${id})` }).click();
    await expect.poll(() => said(page), POLL).toBe(`status: Key “portal test” (${id}) is revoked. | error: `);
    expect(await row.locator("td").nth(3).textContent()).toMatch(/^Revoked /);
    expect(await row.getByRole("button").count()).toBe(0);
    const refused = await api(key);
    expect(refused.status).toBe(401);
    expect((JSON.parse(refused.text) as { code: string }).code).toBe("invalid_api_key");

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Admin token").waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    expect(await text(page, "#key-rows")).toBe("");
    await page.close();
  });
});

/** A webhook endpoint on loopback: every delivery it is sent, answered 204. */
async function receiver() {
  const received: { headers: Record<string, string>; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received, close: () => new Promise((done) => server.close(done)) };
}

describe("the developer portal, signed in with a key", () => {
  it("adds a webhook endpoint, its secret shown once; tests it, is sent a delegation; pauses, deletes it", async () => {
    const hooks = await receiver();
    const page = await browser.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    await page.goto(`${service.url}/developer`);
    await page.getByLabel("API key", { exact: true }).fill(service.apiKey!);
    await page.getByRole("button", { name: "Sign in with key" }).click();
    await page.getByRole("heading", { name: "Webhooks" }).waitFor();
    await expect.poll(() => said(page), POLL).toBe("status: Signed in with the key. | error: ");
    expect(await text(page, "#key-id")).toBe(service.apiKey!.slice(4, 16));
    expect(await page.getByRole("heading", { name: "API keys" }).isVisible()).toBe(false);

    // A URL that cannot receive deliveries is refused, and the page says why.
    await page.getByLabel("URL").fill("ftp://example.com/hook");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => text(page, "#error"), POLL).toContain("'url'");

    const [from, to] = await chainClient(anvil.url).getAddresses();
    await page.getByLabel("URL").fill(hooks.url);
    await page.getByLabel("Filter").fill(`chainId=31337&wallet=${from}&role=from`);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => text(page, "#new-secret"), POLL).toMatch(/^whsec_/);
    const secret = await text(page, "#new-secret");
    const id = await text(page, "#new-secret-of");
    expect(await page.evaluate("document.activeElement?.id")).toBe("new-secret");
    const row = page.locator(`#hook-rows tr[data-hook-id="${id}"]`);
    expect((await row.locator("td").allTextContents()).slice(0, 4)).toEqual([
      id,
      hooks.url,
      `chainId=31337&wallet=${from}&role=from`,
      "Active",
    ]);
    // Signed by the secret the page showed: a test delivery, then the delegation the filter selects.
    const verifier = new Verifier(secret);
    await page.getByRole("button", { name: `Send a test delivery to ${id}` }).click();
    await expect.poll(() => said(page), POLL).toMatch(new RegExp(`^status: Test delivery to ${id}: 204 in \\d+ ms\\.`));
    const test = verifier.verify(hooks.received[0]!.body, hooks.received[0]!.headers);
    expect(test).toEqual({ entries: [], test: true });
    await sendWrite(anvil.url, abis.v2, from!, registries.v2, "delegateAll", [to, zeroHash, true]);
    await expect.poll(() => hooks.received.length, { timeout: 60_000 }).toBeGreaterThan(1);
    const delivered = verifier.verify(hooks.received[1]!.body, hooks.received[1]!.headers) as {
      entries: { event: { event: string; from: string; to: string } }[];
    };
    expect(delivered.entries.map((e) => [e.event.event, e.event.from, e.event.to])).toEqual([
      ["DelegateAll", getAddress(from!), getAddress(to!)],
    ]);
    await page.getByRole("button", { name: `Recent deliveries of ${id}` }).click();
    await expect.poll(() => page.locator("#delivery-rows tr").count(), POLL).toBe(1);
    expect((await page.locator("#delivery-rows td").allTextContents()).slice(1, 4)).toEqual(["1", "1", "204"]);

    await page.getByRole("button", { name: `Pause ${id}` }).click();
    await expect.poll(() => row.locator("td").nth(3).textContent(), POLL).toBe("Paused");
    await page.getByRole("button", { name: `Delete ${id}` }).click();
    await expect.poll(() => said(page), POLL).toBe(`status: ${id} deleted. | error: `);
    expect(await text(page, "#hook-rows")).toBe("No endpoints yet.");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("API key", { exact: true }).waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    await page.close();
    await hooks.close();
  });
});

const ARTIFACTS = process.env.ARTIFACTS_DIR ?? resolve(import.meta.dirname, "../.ci/artifacts");
const isLoopback = (url: string) => ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);

describe("the API reference page", () => {
  it("renders every operation offline, and Try it out answers 200; a screenshot is kept", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const elsewhere: string[] = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("data:") || isLoopback(url)) return route.continue();
      elsewhere.push(url);
      return route.abort("internetdisconnected");
    });
    const response = await page.goto(`${service.url}/docs`);
    expect(response?.status()).toBe(200);

    // The operations, and the webhooks the service sends (OpenAPI 3.1's `webhooks`, listed by name).
    const document = openApiDocument() as { paths: object; webhooks: object };
    const operations = [document.paths, document.webhooks].flatMap((items) =>
      Object.entries(items).flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`)),
    );
    const rendered = async () =>
      page.locator(".opblock").evaluateAll((blocks) =>
        blocks.map((block) => {
          const method = block.querySelector(".opblock-summary-method")?.textContent?.toLowerCase();
          return `${method} ${block.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`;
        }),
      );
    await expect.poll(async () => (await rendered()).length, POLL).toBe(operations.length);
    expect(new Set(await rendered())).toEqual(new Set(operations));

    // Try it out: v2's check/all, parameters typed in the page, sent by the page to this service.
    const operation = page.locator("#operations-v2_registry-v2CheckAll");
    await operation.locator(".opblock-summary").click();
    const field = (name: string) => operation.locator(`tr[data-param-name="${name}"] input`);
    await field("chainId").fill("31337");
    await field("to").fill("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    await field("from").fill("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    await operation.locator("button.execute").click();
    const live = operation.locator(".live-responses-table .response");
    await expect
      .poll(async () => (await live.locator(".response-col_status").first().textContent())?.trim(), POLL)
      .toBe("200");
    expect(((await live.locator(".microlight, pre").first().textContent()) ?? "").trim()).toMatch(/^(true|false)$/);
    expect(elsewhere, "requests beyond loopback").toEqual([]);

    mkdirSync(ARTIFACTS, { recursive: true });
    const screenshot = join(ARTIFACTS, "docs.png");
    await page.screenshot({ path: screenshot, fullPage: false });
    expect(readFileSync(screenshot).subarray(1, 4).toString()).toBe("PNG");
    console.log(`[portal] the API reference's screenshot: ${screenshot}`);
    await page.close();
  });
});
