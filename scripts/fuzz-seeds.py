#!/usr/bin/env python3
"""Writes the fuzzing harness's seed corpus into fuzz/corpus/TARGET/, one file per input named by its
SHA-1 (as libFuzzer names what it keeps): every hostile, wrong and reference file the project keeps, and
made-up nestings — past the bounds and within them — of each shape a recursive parser descends."""
import hashlib
import json
import pathlib
import struct

root = pathlib.Path(__file__).resolve().parent.parent
corpus = root / "fuzz" / "corpus"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def rust_files():
    for folder in ["tests/hostile-class", "tests/exercise-mistakes", "tests/similarity-class", "solutions",
                   "crates/course/src/stubs"]:
        yield from sorted((root / folder).rglob("*.rs"))


# Shapes of nesting: (name, opening, innermost, closing), repeated n times.
SHAPES = [
    ("parens", "fn f() -> f64 {{ {o}1.0{c} }}", "(", ")"),
    ("brackets", "fn f() {{ let x = {o}1{c}; }}", "[", "]"),
    ("blocks", "fn f() {o}{c}", "{", "}"),
    ("calls", "fn f() {{ g{o}{c}; }}", "(", ")"),
    ("unary", "fn f() -> f64 {{ {o}1.0 }}", "- ", ""),
    ("not", "fn f() -> bool {{ {o}true }}", "!", ""),
    ("refs", "fn f(x: {o}f64) {{}}", "&", ""),
    ("returns", "fn f() {{ {o}(); }}", "return ", ""),
    ("closures", "fn f() {{ let g = {o}1; }}", "|| ", ""),
    ("generics", "fn f(x: {o}f64{c}) {{}}", "Vec<", ">"),
    ("fields", "fn f() {{ let y = x{o}; }}", ".a", ""),
    ("casts", "fn f() {{ let y = 1.0{o}; }}", " as f64", ""),
    ("else_if", "fn f(a: bool) {{ if a {{}} {o} }}", "else if a {} ", ""),
    ("fn_pointers", "type T = {o}u8;", "fn() -> ", ""),
    ("use_groups", "use {o}a{c};", "a::{", "}"),
    ("use_paths", "use {o}a;", "a::", ""),
    ("mixed", "fn f() {o}{c}", "{ ([", "]) }"),
    ("macro_body", "macro_rules! m {{ () => {o}{c} }}", "{", "}"),
]


def nested(template, opening, closing, n):
    return template.format(o=opening * n, c=closing * n)


def main():
    for path in rust_files():
        put("rules", path.read_bytes())
        put("similarity", path.read_bytes() + b"\0" + path.read_bytes())
    for _, template, opening, closing in SHAPES:
        for n in [10, 63, 64, 65, 300, 1000, 5000]:
            put("rules", nested(template, opening, closing, n))
    # The issue's own: a warm-up schedule whose one expression is about a thousand levels deep, 10 KB.
    put("rules", "pub fn warmup_schedule(step: i64, d: i64, w: i64) -> f64 {\n    "
        + "(" * 1000 + "1.0" + ")" * 1000 + "\n}\n")
    homework = (root / "notebooks" / "homework-cross-attention.ipynb").read_bytes()
    put("notebook", homework)
    cells = json.loads(homework)
    for n in [10, 127, 128, 129, 1000]:
        put("notebook", '{"cells": ' + "[" * n + "]" * n + "}")
    deep_cell = dict(cells)
    deep_cell["cells"] = [{"cell_type": "code", "metadata": {"nbgrader": {"solution": True, "grade_id": "x"}},
                           "source": ["fn f() -> f64 { " + "(" * 1000 + "1.0" + ")" * 1000 + " }"]}]
    put("notebook", json.dumps(deep_cell))
    for _, template, opening, closing in SHAPES[:4]:
        put("similarity", nested(template, opening, closing, 1000) + "\0" + nested(template, opening, closing, 30))
    for t in ["2026-12-01 23:59:00.250000 UTC", "2026-12-01 23:59:00 UTC", "2026-12-01T23:59:00Z",
              "2026-12-01T23:59:00+01:00", "9999-12-31T23:59:60Z", "0000-01-01T00:00:00-23:59", "tomorrow", ""]:
        put("time", t)
    names = [b"caf\xe9", b"caf\xe8", "café".encode(), b"caf\\xE9", "ana\u200b".encode(), b"ana", b" ana ",
             b"=SUM(A1:A9)", b"\t=1", "\u202egpj.exe".encode(), b"\xff\xfe", b"\\", b"Ana", b"ANA",
             "Jos\u00e9".encode(), "Jose\u0301".encode(), "\u212bngstr\u00f6m".encode(), "\u00c5ngstr\u00f6m".encode()]
    put("names", b"/".join(names))
    for name in names:
        put("names", name)
    for channel in tape_channels():
        put("tape", channel)
    for roster in rosters():
        put("roster", roster)
    # What a check prints: a shape, colours and cursor moves, bytes that are not UTF-8, a progress line,
    # long lines, many lines, and output cut after the first bytes (the first byte: KiB more printed).
    for more, text in [(0, b"[2, 5, 64]\n"), (0, b"\x1b[2J\x1b[31mred\x1b[0m\r\x07\n"), (0, b"\xff\xfe\xe2\x80\x8b\n"),
                       (0, b"50%\r100%\n"), (0, b"x" * 5000), (0, b"line\n" * 500), (200, b"first\n"), (1, b"")]:
        put("printed", bytes([more]) + text)


def rosters():
    """Class lists as the platforms export them (the roster fixtures the tests import), made-up hostile
    ones, and Canvas download names, one per line."""
    for path in sorted((root / "tests" / "rosters").glob("*.csv")):
        yield path.read_bytes()
    yield "Student,ID,SIS User ID,SIS Login ID,Section,Attention (1234),Current Score\n" \
          "    Points Possible,,,,,15,\n\"Lovelace, Ada\",101,S1,ada,Mon,3,\n"
    yield "\ufeffname,id,login,section\n\"=cmd|' /C calc'!A0\",1,x,\n\"A\u202eB\",2,y,\n"
    yield "name,id\n" + "".join(f"s{i},{i % 7}\n" for i in range(20))
    yield "name,id\n\"unterminated,1\n"
    yield "name,id\n" + "x" * 300 + ",1\n"
    yield "\n".join(["lovelaceada_LATE_101_9001_layer_norm-1.rs", "evehacker_102_9002_lovelaceada_101_9001_x.rs",
                     "_1_2_x", "a_1_2_", "a" * 2000 + "_1_2_x.rs", "ada_99999999999999999999999_1_x.rs"])


def frame(tag, payload=b""):
    return tag + struct.pack("<I", len(payload)) + payload


def safetensors(tensors, header_extra=None):
    """A safetensors record: an 8-byte header length, the JSON header, then the tensors' bytes."""
    header, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if header_extra:
        header.update(header_extra)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def tape_channels():
    """Channels as a check's process writes them, honest and not: answers, a panic, the end; an answer
    whose bytes disagree with its shape, one with a gap in its numbering, an unknown element type, a
    header that claims 4 GiB, a channel cut inside a frame, and noise."""
    weights = safetensors({"0": ("F32", [2, 2], struct.pack("<4f", 0.25, 0.75, 0.5, 0.5))})
    pair = safetensors({"0": ("F32", [1], b"\0" * 4), "1": ("I64", [1, 1], b"\0" * 8)})
    honest = frame(b"O", weights) + frame(b"O", pair) + frame(b"D")
    yield honest
    yield frame(b"P", b"attempt to divide by zero") + frame(b"D")
    yield frame(b"R", b"returned a tensor of kind ComplexFloat") + frame(b"D")
    yield frame(b"X", struct.pack("<I", 41))
    yield frame(b"O", safetensors({"0": ("F32", [3, 3], b"\0" * 4)}))
    yield frame(b"O", safetensors({"1": ("F32", [1], b"\0" * 4)}))
    yield frame(b"O", safetensors({"0": ("C64", [1], b"\0" * 8)}))
    yield frame(b"O", safetensors({"0": ("F32", [2**40, 2**40], b"")}))
    yield frame(b"O", struct.pack("<Q", 2**62) + b"{}")
    yield b"O\xff\xff\xff\xff" + b"\0" * 16
    yield honest[: len(honest) // 2]
    yield bytes(range(256)) * 4


if __name__ == "__main__":
    main()
