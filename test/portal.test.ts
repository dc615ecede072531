/**
 * The service's pages in a real headless Chromium (Debian's, driven by playwright-core).
 *
 * The developer portal (/developer): the operator signs in with the admin token, creates a key and
 * reads it off the page, the API serves that key beyond the keyless limit, the page counts its
 * requests, and once it is revoked in the page the API refuses it.
 *
 * The API reference (/docs), with every request beyond loopback refused: it renders every
 * operation of /openapi.json, and "Try it out" gets a 200 from the service. Its screenshot is kept
 * in `.ci/artifacts/docs.png` (ARTIFACTS_DIR to put it elsewhere).
 *
 * Controls are found by their accessible names (labels, button names, roles), as assistive
 * technology finds them.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "../api/openapi/document";
import { type Anvil, startAnvil } from "../devkit/anvil";
import { ask } from "../devkit/ask";
import { installRegistries } from "../devkit/oracle";
import { type Service, startService } from "../devkit/service";

const CHROMIUM = "/usr/bin/chromium";
const V2 =
  "/registry/v2/check/all?to=0x70997970C51812dc3A010C7d01b50e0d17dc79C8" +
  "&from=0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266&chainId=31337";

let anvil: Anvil;
let service: Service;
let browser: Browser;

beforeAll(async () => {
  anvil = await startAnvil();
  await installRegistries(anvil.url);
  [service, browser] = await Promise.all([
    startService({ rpc: { 31337: anvil.url } }),
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
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => text(page, "#error"), POLL).toContain("ADMIN_TOKEN");
    expect(await page.getByRole("heading", { name: "API keys" }).isVisible()).toBe(false);

    await page.getByLabel("Admin token").fill(service.adminToken!);
    await page.getByRole("button", { name: "Sign in" }).click();
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

    const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
    const operations = Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m} ${path}`));
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
