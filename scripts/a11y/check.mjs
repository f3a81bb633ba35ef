// scripts/a11y-check.sh's browser side: opens each page it is given in headless Chromium (Debian's) and
// runs axe-core on it with the WCAG 2.0 and 2.1 rules of levels A and AA; prints every violation as
// "page: rule (impact): element — what is wrong" and exits 1 when there is any. Pages come as arguments,
// NAME=URL. With --keyboard NAME=URL, also drives the head view from the keyboard alone.
import { chromium } from "playwright-core";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const axeSource = require.resolve("axe-core/axe.min.js");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

const args = process.argv.slice(2);
const pages = [];
const keyboard = [];
for (let i = 0; i < args.length; i++) {
  const target = args[i] === "--keyboard" ? keyboard : pages;
  const spec = args[i] === "--keyboard" ? args[++i] : args[i];
  const at = spec.indexOf("=");
  target.push({ name: spec.slice(0, at), url: spec.slice(at + 1) });
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
});
let failures = 0;
try {
  const context = await browser.newContext({ viewport: { width: 1300, height: 1000 } });
  // Nothing from the network: every page is self-contained.
  await context.route(/^https?:/, (route) => route.abort());
  for (const { name, url } of pages) {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: "load" });
    await page.addScriptTag({ path: axeSource });
    const result = await page.evaluate(
      (tags) => window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] }),
      TAGS,
    );
    const nodes = result.violations.reduce((n, v) => n + v.nodes.length, 0);
    if (result.violations.length === 0) {
      console.log(`[a11y] ${name}: no violation (${result.passes.length} rules pass)`);
    } else {
      failures += 1;
      console.log(`[a11y] ${name}: ${result.violations.length} rules violated on ${nodes} elements`);
      for (const v of result.violations) {
        for (const node of v.nodes.slice(0, 5)) {
          const why = (node.failureSummary || "").split("\n").slice(1).join(" ").trim();
          console.log(`[a11y]   ${name}: ${v.id} (${v.impact}): ${node.target.join(" ")} — ${why}`);
        }
        if (v.nodes.length > 5) console.log(`[a11y]   ${name}: ${v.id}: and ${v.nodes.length - 5} more elements`);
      }
    }
    await page.close();
  }
  for (const { name, url } of keyboard) {
    failures += await headViewByKeyboard(context, name, url);
  }
} finally {
  await browser.close();
}
console.log(`[a11y] ${pages.length + keyboard.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);

// The head view from the keyboard alone: Tab reaches a token, Enter pins it (only its lines stay drawn),
// Enter again unpins it (all lines back); Space does what Enter does; the focused token shows a ring.
async function headViewByKeyboard(context, name, url) {
  const page = await context.newPage();
  await page.goto(url, { waitUntil: "load" });
  const drawn = () =>
    page.evaluate(() => [...document.querySelectorAll("g.lines line")].filter((l) => l.style.display !== "none").length);
  const problems = [];
  const all = await drawn();
  let reached = null;
  for (let i = 0; i < 20 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => {
      const el = document.activeElement;
      return el && el.matches(".anatomy-from") ? { text: el.textContent, ring: getComputedStyle(el).outlineStyle } : null;
    });
  }
  if (!reached) {
    problems.push("no token reached with Tab");
  } else {
    if (reached.ring === "none") problems.push(`token "${reached.text}" has no visible focus ring`);
    await page.keyboard.press("Enter");
    const pinned = await drawn();
    if (!(pinned > 0 && pinned < all)) problems.push(`Enter on "${reached.text}" left ${pinned} of ${all} lines`);
    await page.keyboard.press("Enter");
    if ((await drawn()) !== all) problems.push("a second Enter did not bring every line back");
    await page.keyboard.press(" ");
    if ((await drawn()) !== pinned) problems.push("Space did not pin the token as Enter does");
    await page.keyboard.press(" ");
  }
  await page.close();
  if (problems.length === 0) {
    console.log(`[a11y] ${name}: Tab reaches a token, Enter and Space pin and unpin it (${all} lines, pinned: fewer)`);
    return 0;
  }
  for (const p of problems) console.log(`[a11y] ${name}: keyboard: ${p}`);
  return 1;
}
