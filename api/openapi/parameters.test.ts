/**
 * Every parameter's schema against its parser: the document refuses no text the route would
 * accept (Ajv, as a client validating its request before sending it would).
 */
import Ajv2020 from "ajv/dist/2020";
import { describe, expect, it } from "vitest";
import { PARAMETERS } from "./parameters";

/** An address with letters, so that its uppercase spelling is another text (no checksum either way). */
const WALLET = `0x${"5a".repeat(20)}`;

describe("each parameter's schema", () => {
  it("refuses no text its parser accepts", () => {
    const ajv = new Ajv2020({ strict: false });
    const samples = [
      "",
      "0",
      "1",
      "0x",
      "0x0",
      "0x1f",
      "01",
      "1000",
      "1001",
      "9999",
      "10000",
      "-1",
      "1.5",
      "1e3",
      " 1",
      "abc",
      "all",
      "x".repeat(32),
      "x".repeat(33),
      "é",
      WALLET,
      WALLET.toUpperCase().replace("0X", "0x"),
      "0x52908400098527886E0F7030069857D2E4169EE7",
      "0x52908400098527886e0f7030069857d2e4169ee7",
      "0x52908400098527886E0F7030069857D2E4169Ee7",
      `0x${"ab".repeat(32)}`,
      `0x${"AB".repeat(32)}`,
      `0x${"ab".repeat(31)}`,
      (2n ** 256n - 1n).toString(),
      (2n ** 256n).toString(),
      (2n ** 63n - 1n).toString(),
      "9007199254740993",
    ];
    for (const [key, spec] of Object.entries(PARAMETERS)) {
      const validate = ajv.compile(spec.schema);
      for (const text of samples) {
        let accepted: boolean;
        try {
          accepted = spec.parse(text) !== undefined;
        } catch {
          accepted = false;
        }
        if (accepted) expect(validate(text), `${key}: the parser accepts ${JSON.stringify(text)}`).toBe(true);
      }
    }
  });
});
