/**
 * The OpenAPI document against a maintained validator. What it describes is held to the routes
 * by api/routes/table.test.ts.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "./document";

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1, as a maintained validator reads it", async () => {
    const result = await new Validator().validate(openApiDocument() as Parameters<Validator["validate"]>[0]);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(openApiDocument().openapi).toBe("3.1.0");
  });
});
