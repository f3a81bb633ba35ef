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

// The head view from the keyboard alone: Tab reaches a token (the view's own 2 px ring shows it) and
// shows only its lines; Enter pins it (aria-pressed) so that its lines stay while the focus moves on;
// Enter again unpins it; Space does what Enter does; with the focus gone every line is back.
async function headViewByKeyboard(context, name, url) {
  const page = await context.newPage();
  await page.goto(url, { waitUntil: "load" });
  const drawn = () =>
    page.evaluate(() => [...document.querySelectorAll("g.lines line")].filter((l) => l.style.display !== "none").length);
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      if (!el || !el.matches(".anatomy-from")) return null;
      const style = getComputedStyle(el);
      return { text: el.textContent, pressed: el.getAttribute("aria-pressed"), ring: `${style.outlineStyle} ${style.outlineWidth}` };
    });
  const problems = [];
  const all = await drawn();
  let first = null;
  for (let i = 0; i < 20 && !first; i++) {
    await page.keyboard.press("Tab");
    first = await focused();
  }
  if (!first) {
    problems.push("no token reached with Tab");
  } else {
    if (first.ring !== "solid 2px") problems.push(`token "${first.text}" shows no 2 px focus ring (outline: ${first.ring})`);
    const own = await drawn();
    if (!(own > 0 && own < all)) problems.push(`focus on "${first.text}" left ${own} of ${all} lines`);
    await page.keyboard.press("Enter");
    if ((await focused())?.pressed !== "true") problems.push("Enter did not pin the token (aria-pressed)");
    await page.keyboard.press("Tab");
    if ((await drawn()) !== own) problems.push("the pinned token's lines did not stay when the focus moved on");
    await page.keyboard.press("Shift+Tab");
    await page.keyboard.press("Enter");
    if ((await focused())?.pressed !== "false") problems.push("a second Enter did not unpin the token");
    await page.keyboard.press(" ");
    if ((await focused())?.pressed !== "true") problems.push("Space did not pin the token as Enter does");
    await page.keyboard.press(" ");
    await page.evaluate(() => document.activeElement.blur());
    if ((await drawn()) !== all) problems.push(`with the token unpinned and the focus gone, ${await drawn()} of ${all} lines`);
  }
  await page.close();
  if (problems.length === 0) {
    console.log(`[a11y] ${name}: Tab, Enter and Space pin and unpin a token, its lines stay while pinned (${all} lines)`);
    return 0;
  }
  for (const p of problems) console.log(`[a11y] ${name}: keyboard: ${p}`);
  return 1;
}
