"""Builds the static book (`make book`): one HTML page per executed notebook and an index, readable offline.

Reads the notebooks that `make test` (scripts/run_notebooks.py) executed into target/executed-notebooks/,
converts each (but a homework notebook that holds its solution) with nbconvert's HTML exporter (no MathJax or require.js from the network; the pictures are
inline SVG and HTML already), adds a navigation bar, and writes target/book/. Each page records how many
pictures its outputs hold (data-pictures on <body>) so that scripts/book-check.sh can verify that the
browser shows all of them. Run inside .deps/venv-nb (scripts/notebooks.sh book does).
"""
import glob
import html
import json
import os
import re
import sys

import nbformat
from nbconvert import HTMLExporter

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
executed = os.path.join(root, "target", "executed-notebooks")
book = os.path.join(root, "target", "book")
notebooks = sorted(glob.glob(os.path.join(executed, "*.ipynb")))
chapters = sorted(glob.glob(os.path.join(root, "chapters", "*.md")))
if len(notebooks) != len(chapters):
    sys.exit(f"book: {len(notebooks)} executed notebooks for {len(chapters)} chapters: run `make test` "
             "(or scripts/notebooks.sh run) first")
os.makedirs(book, exist_ok=True)
exporter = HTMLExporter(template_name="lab", mathjax_url="", require_js_url="")


def title_of(nb):
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return "?"


def pictures(nb):
    count = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {}) if out.get("output_type") in ("display_data", "execute_result") else {}
            count += "<svg" in "".join(data.get("text/html", "")) or "image/svg+xml" in data or "image/png" in data
    return count


pages = []
for path in notebooks:
    nb = nbformat.read(path, as_version=4)
    # A homework notebook shows the task (its check says "not done"), and so does its page; the instructors'
    # version, which run_notebooks.py runs beside it, is never kept here. One that still holds a solution
    # (a chapter that keeps it inline) stays out of the book, which may be put online.
    if any("BEGIN SOLUTION" in c.source for c in nb.cells if c.cell_type == "code"):
        print(f"[book] left out {os.path.basename(path)}: it holds the solution (students get it from "
              "`anatomy notebooks release`)")
        continue
    name = os.path.splitext(os.path.basename(path))[0] + ".html"
    pages.append((name, title_of(nb), nb))

# Prose at a readable width (about 90 characters a line); code, outputs and pictures keep the page's width.
# Colours: JupyterLab's light theme draws the prompts half transparent and some highlighted tokens (comments,
# numbers, operators, ...) below WCAG's 4.5:1 for text on the code's grey; these are ours, each at 4.9:1 or
# more on #f5f5f5 (scripts/a11y-check.sh holds every page to WCAG 2.1 AA with axe-core).
STYLE = """<style>
:root {
  --jp-cell-prompt-not-active-opacity: 1;
  --jp-cell-prompt-not-active-font-color: #595959;
  --jp-cell-inprompt-font-color: #1f5f99;
  --jp-cell-outprompt-font-color: #a0452b;
  --jp-mirror-editor-atom-color: #4040c0;
  --jp-mirror-editor-number-color: #006400;
  --jp-mirror-editor-variable-3-color: #006b3c;
  --jp-mirror-editor-operator-color: #8a1bd8;
  --jp-mirror-editor-meta-color: #8a1bd8;
  --jp-mirror-editor-comment-color: #306060;
  --jp-mirror-editor-bracket-color: #6b6b4f;
  --jp-mirror-editor-quote-color: #006400;
  --jp-mirror-editor-error-color: #c00000;
  --jp-mirror-editor-hr-color: #6b6b6b;
}
.jp-RenderedMarkdown { max-width: 46em; line-height: 1.5; }
.jp-Notebook { max-width: 72em; margin: 0 auto; }
nav.book { font-family: sans-serif; padding: .6em 1em; display: flex; gap: 2em; }
</style>"""

for k, (name, title, nb) in enumerate(pages):
    # The page's title is its chapter's heading (nbconvert would otherwise call every page "Notebook").
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = re.sub(r'<script src="">\s*</script>', "", body)  # the disabled require.js and MathJax
    body = body.replace("</head>", STYLE + "\n</head>", 1)
    prev_link = f'<a href="{pages[k - 1][0]}">← {html.escape(pages[k - 1][1])}</a>' if k > 0 else ""
    next_link = f'<a href="{pages[k + 1][0]}">{html.escape(pages[k + 1][1])} →</a>' if k + 1 < len(pages) else ""
    links = f'<a href="index.html">Contents</a>{prev_link}{next_link}'
    top = f'<nav class="book" style="border-bottom: 1px solid #ccc">{links}</nav>'
    bottom = f'<nav class="book" style="border-top: 1px solid #ccc; margin-top: 2em">{links}</nav>'
    body = body.replace("<body", f'<body data-pictures="{pictures(nb)}"', 1)
    body = re.sub(r"(<body[^>]*>)", lambda m: m.group(1) + top, body, count=1)
    body = body.replace("</body>", bottom + "\n</body>", 1)
    with open(os.path.join(book, name), "w") as f:
        f.write(body)

items = "\n".join(f'<li><a href="{name}">{html.escape(title)}</a></li>' for name, title, _ in pages)
index = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>Transformer anatomy, in Rust</title>
<style>body {{ font-family: sans-serif; max-width: 46em; margin: 2em auto; line-height: 1.5; }}</style></head>
<body data-pictures="0">
<h1>Transformer anatomy, in Rust</h1>
<p>Chapter 3 of <i>Natural Language Processing with Transformers</i>, rebuilt step by step on LibTorch,
plus the training and decoding of the original encoder-decoder. Each page is a notebook of this project
as <code>make test</code> executed it: every output and picture on it was computed, none was typed in.
No network is needed to read it.</p>
<ol>
{items}
</ol>
</body></html>
"""
with open(os.path.join(book, "index.html"), "w") as f:
    f.write(index)
print(f"[book] wrote {len(pages)} pages and index.html to {book}")
