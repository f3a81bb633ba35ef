// Part of `make test` (scripts/notebooks.sh lab-check): two notebooks opened in JupyterLab in headless
// Chromium, as a learner opens them, driven by playwright-core (pinned in package-lock.json).
//
//   node check.mjs URL TOKEN FOLDER SHOTS [--no-stop] FIRST SECOND
//
// URL and TOKEN reach a JupyterLab serving FOLDER, a scratch copy of notebooks/. Both notebooks are
// opened, and Run > Run All Cells is clicked in one and then the other, so their kernels run together.
// Then each is saved with Ctrl+S and the saved file is read back: every code cell has run (an execution
// count) and none holds an error. Every picture in the outputs (every SVG but a group of controls or one
// hidden from screen readers) must be an image (role="img") with a <title>, which a chart also draws as
// its caption; and the outputs (the project's HTML as JupyterLab shows it) must pass axe-core's WCAG
// 2.0/2.1 A and AA rules, as the pages outside it do (scripts/a11y-check.sh); JupyterLab's own interface
// is not ours and is left out. A screenshot of each notebook's first picture goes to SHOTS/NAME.png. Last (unless --no-stop),
// Stop (the toolbar's square) is pressed while Run All Above Selected Cell re-runs FIRST: the kernel must be idle again, and after Run All Above Selected Cell the
// last cell must run without an error, as docs/learners.md tells a learner. Stop pressed once more with no cell
// running must still forget the variables (the last cell, run alone, fails), and Run All Above Selected
// Cell must bring them back again. The kernels are then shut down.
// Prints one line per step; exits 1 with the reason on the first thing that is wrong.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

const axeSource = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

const [url, token, folder, shots, ...rest] = process.argv.slice(2);
// --no-stop leaves out the Stop steps (what Stop does to a kernel and its variables), for a quicker look at
// the pictures; `make test` runs them in both pairs.
const stopSteps = !rest.includes("--no-stop");
const names = rest.filter((arg) => arg !== "--no-stop");
const RUN_ALL_SECONDS = 900; // both notebooks together, on 2 cores; each alone takes under a minute
const say = (text) => console.log(`[jupyterlab] ${text}`);
const fail = (text) => {
  console.log(`[jupyterlab] FAILED ${text}`);
  process.exit(1);
};

async function api(route, method = "GET") {
  const response = await fetch(`${url}/api/${route}`, { method, headers: { Authorization: `token ${token}` } });
  if (!response.ok) fail(`${method} /api/${route}: HTTP ${response.status}`);
  return method === "GET" ? response.json() : null;
}

// Shut every kernel down as the Kernel menu does, before JupyterLab itself is stopped: a kernel shut
// down so removes its copy of the warmed build (scripts/kernel.py); one killed with its server cannot.
async function shutDownKernels() {
  const sessions = await api("sessions");
  for (const session of sessions) await api(`sessions/${session.id}`, "DELETE");
  await until("the kernels to shut down", 60, async () => (await api("kernels")).length === 0);
  say(`${sessions.length} kernels shut down`);
}

// The kernel behind a notebook, as the server sees it: "starting", "busy" or "idle".
async function kernelState(name) {
  const sessions = await api("sessions");
  const session = sessions.find((s) => s.path === name);
  return session ? session.kernel.execution_state : "no session";
}

// Waits for `test` to hold; past `seconds`, fails with what `state` (if given) says of the page then.
async function until(what, seconds, test, state) {
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    if (await test()) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  fail(`${what}: not within ${seconds} s${state ? `; ${await state()}` : ""}`);
}

async function menu(page, top, item) {
  await page.locator(".lm-MenuBar-itemLabel", { hasText: new RegExp(`^${top}$`) }).click();
  await page.locator(".lm-Menu-itemLabel", { hasText: new RegExp(`^${item}$`) }).first().click();
}

// How many of a page's cells wait or run: they show [*].
const waitingCells = (page) => page.locator(".jp-InputPrompt", { hasText: "[*]" }).count();

// Finished: no cell waits or runs ([*]) and the kernel has been idle for three seconds running. If it
// never is, the failure says which cells still show [*] and what the server says of the kernel, and a
// screenshot of the page goes to SHOTS/NAME-unfinished.png.
async function finished(page, name) {
  let idleFor = 0;
  const state = async () => {
    const prompts = await page.locator(".jp-InputPrompt").allTextContents();
    const waiting = prompts.flatMap((p, i) => (p.includes("[*]") ? [i + 1] : []));
    const file = path.join(shots, name.replace(/\.ipynb$/, "-unfinished.png"));
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    return `code cells showing [*]: ${JSON.stringify(waiting)} of ${prompts.length} drawn; the server says the ` +
      `kernel is ${await kernelState(name)}; prompts ${JSON.stringify(prompts)}; ${file}; ` +
      `what the page's kernel connection did: ${await writeKernelMessages(page, name)}`;
  };
  await until(`${name}: Run All to finish`, RUN_ALL_SECONDS, async () => {
    const running = await waitingCells(page);
    idleFor = running === 0 && (await kernelState(name)) === "idle" ? idleFor + 1 : 0;
    return idleFor >= 3;
  }, state);
}

// What the page's own connection to its kernel did, in order: its connection and kernel states and every
// message it sent or received (channel, type, and the type of the request it answers), from the moment
// the notebook's kernel connection exists. JupyterLab runs with `expose_app_in_browser`, so the page's
// application object is there to listen to. The status bar turns Idle only on a status message that
// answers a request of the page's own (JupyterLab ignores those of kernel_info requests): normally the
// history request the notebook sends once connected. Read when the page never says Idle.
async function recordKernelMessages(page) {
  await page.waitForFunction(() => window.jupyterapp !== undefined, null, { timeout: 120_000 });
  await page.evaluate(() => {
    const t0 = performance.now();
    const log = (window.kernelLog = []);
    const note = (text) => log.length < 400 && log.push(`${Math.round(performance.now() - t0)} ms ${text}`);
    const hooked = new Set();
    const hook = () => {
      for (const widget of window.jupyterapp.shell.widgets("main")) {
        const kernel = widget.sessionContext?.session?.kernel;
        if (!kernel || hooked.has(kernel)) continue;
        hooked.add(kernel);
        note(`kernel ${kernel.id}: connection ${kernel.connectionStatus}, status ${kernel.status}`);
        kernel.connectionStatusChanged.connect((_, s) => note(`connection -> ${s}`));
        kernel.statusChanged.connect((_, s) => note(`status -> ${s}`));
        kernel.anyMessage.connect((_, { msg, direction }) => {
          const state = msg.header.msg_type === "status" ? ` (${msg.content.execution_state})` : "";
          note(`${direction} ${msg.channel} ${msg.header.msg_type}${state}, answering ${msg.parent_header?.msg_type}`);
        });
      }
    };
    setInterval(hook, 20);
  });
}

// The record above, written to SHOTS/NAME-kernel-messages.txt beside the server's debug log
// (jupyterlab-server.log); the file's name is returned.
async function writeKernelMessages(page, name) {
  const file = path.join(shots, name.replace(/\.ipynb$/, "-kernel-messages.txt"));
  const log = await page.evaluate(() => window.kernelLog).catch((e) => [`(not read: ${e})`]);
  fs.writeFileSync(file, (log ?? ["(nothing recorded)"]).join("\n") + "\n");
  return `${file} (the server's, at debug level: jupyterlab-server.log beside it)`;
}

// Each notebook in a browser window of its own, with a workspace (JupyterLab's layout) of its own, so
// that neither window restores the other's notebook beside its own.
async function open(browser, name, window) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(`${url}/lab/workspaces/check-${window}/tree/${encodeURIComponent(name)}?reset&token=${token}`);
  await recordKernelMessages(page);
  await page.locator(".jp-Notebook .jp-Cell").first().waitFor({ timeout: 120_000 });
  // JupyterLab asks once whether to fetch its news; a learner says no, and the question covers outputs.
  const news = page.getByText("Would you like to get notified about official Jupyter news?");
  if (await news.waitFor({ timeout: 5000 }).then(() => true, () => false))
    await page.getByRole("button", { name: "No", exact: true }).click();
  await until(`${name}: its kernel to start`, 180, async () => (await kernelState(name)) === "idle");
  // The page's own connection to that kernel, as the status bar shows it ("Rust | Idle"): a learner
  // runs cells once it says Idle. On a loaded fresh machine a page once stayed "Unknown" while the
  // server had the kernel idle, and Run All's cells then waited ([*]) for a connection that never came.
  const status = page.locator(".jp-StatusBar-TextItem", { hasText: /\|/ }).first();
  const shown = async () => ((await status.textContent().catch(() => "")) ?? "").trim();
  await until(`${name}: the page's connection to its kernel`, 180, async () => /\| Idle$/.test(await shown()),
    async () => `the status bar says "${await shown()}", the server says the kernel is ${await kernelState(name)}; ` +
      `what the page's kernel connection did: ${await writeKernelMessages(page, name)}`);
  say(`${name}: opened, kernel idle`);
  return { page, errors, name };
}

// The saved file, read from disk: what a learner keeps.
function saved(name) {
  const nb = JSON.parse(fs.readFileSync(path.join(folder, name), "utf8"));
  const code = nb.cells.filter((c) => c.cell_type === "code");
  const notRun = code.filter((c) => c.execution_count == null).length;
  const errors = code.flatMap((c) => c.outputs).filter((o) => o.output_type === "error");
  const html = code.flatMap((c) => c.outputs).map((o) => [].concat(o.data?.["text/html"] ?? []).join(""));
  // A picture is every SVG but one hidden from screen readers (a legend whose numbers are written beside it)
  // or a group of controls (the head view, whose tokens are buttons).
  const tags = html.join("").match(/<svg\b[^>]*>/g) ?? [];
  const pictures = tags.filter((t) => !/aria-hidden="true"|role="group"/.test(t)).length;
  return { code: code.length, notRun, errors, pictures };
}

// Ctrl+S, then the file as saved (once its modification time moves).
async function saveAndRead(page, name) {
  const file = path.join(folder, name);
  const before = fs.statSync(file).mtimeMs;
  await page.keyboard.press("Control+s");
  await until(`${name}: saved`, 30, async () => fs.statSync(file).mtimeMs !== before);
  await new Promise((r) => setTimeout(r, 500)); // the server writes the file whole, but give it a moment
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

// The errors the last code cell of a saved notebook holds, as "name: value" lines.
function lastCellErrors(nb) {
  const cell = nb.cells.filter((c) => c.cell_type === "code").at(-1);
  return cell.outputs.filter((o) => o.output_type === "error").map((o) => `${o.ename}: ${o.evalue}`.trim());
}

async function checkPictures({ page, name }) {
  const pictures = await page.locator(".jp-OutputArea-output svg:not(svg svg)").evaluateAll((svgs) =>
    svgs
      .filter((s) => s.getAttribute("aria-hidden") !== "true" && s.getAttribute("role") !== "group")
      .map((s) => ({
      image: s.getAttribute("role") === "img",
      title: s.querySelector(":scope > title")?.textContent.trim() ?? "",
      text: [...s.querySelectorAll("text")].map((t) => t.textContent).join(" "),
      chart: s.getBoundingClientRect().width > 100 && s.querySelector("text") !== null,
    })),
  );
  for (const [i, p] of pictures.entries()) {
    if (!p.image || !p.title)
      fail(`${name}: picture ${i + 1} is not an image with a <title> (role="img"; its text: ${p.text.slice(0, 80)})`);
    // A chart draws its title as its caption; a small picture without text (a view's cell) only names it.
    if (p.chart && !p.text.replace(/\s+/g, " ").includes(p.title.replace(/\s+/g, " ")))
      fail(`${name}: picture ${i + 1}'s title "${p.title}" is not drawn in it`);
  }
  return pictures.length;
}

// axe-core over the notebook's outputs only: every violation of a WCAG 2.0/2.1 A or AA rule fails.
async function checkOutputsAccessible({ page, name }) {
  if ((await page.locator(".jp-OutputArea-output").count()) === 0) return;
  await page.addScriptTag({ path: axeSource });
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(
      { include: [[".jp-OutputArea-output"]] },
      { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] },
    );
    return result.violations.map((v) => `${v.id} (${v.impact}) on ${v.nodes.length}: ${v.nodes[0].target.join(" ")}`);
  });
  if (violations.length) fail(`${name}: its outputs fail WCAG 2.1 AA (axe-core): ${violations.join("; ")}`);
}

async function screenshot({ page, name }) {
  const first = page.locator('.jp-OutputArea-output svg[role="img"]:not(svg svg)').first();
  if ((await first.count()) > 0) {
    await first.scrollIntoViewIfNeeded();
    await first.waitFor({ state: "visible" });
    await page.waitForTimeout(1000); // the cells around it are drawn as they scroll into view
  }
  const file = path.join(shots, name.replace(/\.ipynb$/, ".png"));
  await page.screenshot({ path: file });
  return file;
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const tabs = [];
  for (const [i, name] of names.entries()) tabs.push(await open(browser, name, i + 1));
  const began = Date.now();
  for (const tab of tabs) await menu(tab.page, "Run", "Run All Cells");
  for (const tab of tabs) await finished(tab.page, tab.name);
  say(`${names.join(" and ")}: Run All in both at once, finished in ${Math.round((Date.now() - began) / 1000)} s`);
  for (const tab of tabs) {
    await tab.page.locator(".jp-Notebook").click({ position: { x: 5, y: 5 } }); // focus the notebook, not a cell's editor
    await tab.page.keyboard.press("Control+s");
    await until(`${tab.name}: saved`, 30, async () => saved(tab.name).notRun === 0);
    const file = saved(tab.name);
    if (file.errors.length) fail(`${tab.name}: saved with an error: ${file.errors[0].ename}: ${file.errors[0].evalue}`);
    const shown = await checkPictures(tab);
    if (shown < file.pictures) fail(`${tab.name}: ${file.pictures} pictures saved, ${shown} shown with their title`);
    if (tab.errors.length) fail(`${tab.name}: the page's script failed: ${tab.errors[0]}`);
    await checkOutputsAccessible(tab);
    say(`${tab.name}: saved, ${file.code} code cells run, no error, ${shown} pictures each with its title, outputs pass axe-core; ${await screenshot(tab)}`);
  }
  if (stopSteps) await checkStop(tabs[0]);
} finally {
  await browser.close();
  await shutDownKernels();
}

// Stop while the first notebook's cells run again (Run All Above Selected Cell, from its last cell), then
// with no cell running, as docs/learners.md tells a learner.
async function checkStop({ page, name }) {
  const last = page.locator(".jp-CodeCell").last();
  const runLast = async (item) => {
    await last.locator(".jp-InputArea-prompt").click();
    await menu(page, "Run", item);
    await finished(page, name);
  };
  await last.locator(".jp-InputArea-prompt").click();
  await menu(page, "Run", "Run All Above Selected Cell");
  // Running or queued: a cell shows [*]. (The kernel's own state is idle for a moment between two queued
  // cells, so it cannot say whether the cells have ended: read so, a loaded machine failed this once.)
  const queued = async () => (await waitingCells(page)) > 0;
  await until(`${name}: the cells to start`, 30, queued);
  await page.waitForTimeout(2000);
  if (!(await queued())) fail(`${name}: the cells ended before Stop could be pressed`);
  const stop = page.locator('jp-button[data-command="notebook:interrupt-kernel"], button[data-command="notebook:interrupt-kernel"]').first();
  await stop.click();
  await finished(page, name); // the cells queued behind the stopped one still run
  say(`${name}: Stop pressed while a cell ran; the kernel is idle again`);
  await runLast("Run All Above Selected Cell");
  await runLast("Run Selected Cell and Do not Advance"); // at the last cell, plain Run adds a cell below
  const restored = lastCellErrors(await saveAndRead(page, name));
  if (restored.length) fail(`${name}: after Stop and Run All Above, the last cell fails: ${restored[0]}`);
  say(`${name}: after Run All Above Selected Cell the last cell runs again without an error`);
  // As docs/learners.md says: Stop ends the process that holds the variables even when no cell runs, so the
  // last cell, run on its own, fails.
  await stop.click();
  await finished(page, name);
  await runLast("Run Selected Cell and Do not Advance"); // at the last cell, plain Run adds a cell below
  const stopped = lastCellErrors(await saveAndRead(page, name));
  if (!stopped.length) fail(`${name}: after Stop with no cell running, the last cell still ran: Stop kept the variables`);
  say(`${name}: after Stop with no cell running, the last cell fails: ${stopped[0]}`);
  await runLast("Run All Above Selected Cell");
  await runLast("Run Selected Cell and Do not Advance");
  const again = lastCellErrors(await saveAndRead(page, name));
  if (again.length) fail(`${name}: after Stop and Run All Above, the last cell still fails: ${again[0]}`);
  say(`${name}: and after Run All Above Selected Cell it runs again without an error`);
}
