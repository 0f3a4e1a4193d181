// answer.js: reads a JSON array of URL strings on stdin and writes, for
// each, the href that whatwg-url (the URL Standard's reference
// implementation) gives, or null when it rejects the input. Run from this
// directory after "npm install whatwg-url@VERSION" (see README.md).
"use strict";
const { URL } = require("whatwg-url");
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => {
  const inputs = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const out = inputs.map((s) => {
    try {
      return new URL(s).href;
    } catch {
      return null;
    }
  });
  process.stdout.write(JSON.stringify(out) + "\n");
});
