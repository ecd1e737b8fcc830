#!/usr/bin/env python3
"""Zip a native Go seed corpus (testdata/fuzz/FuzzX/*) as libFuzzer seeds.

Usage: fuzz-seed-corpus.py CORPUS_DIR OUT.zip

Each file in "go test fuzz v1" format holds one Go literal per fuzz argument.
Targets of mirrorpath take one []byte (or string); the value of such a file
is decoded (Go's quoted-string escapes) and stored raw in the zip, one entry
per file. Files with several arguments or other types are stored unchanged:
libFuzzer treats every seed as bytes to mutate, so they are still valid
starting points. Exits 0 with no zip when the directory holds no file.
"""
import os
import re
import sys
import zipfile

LITERAL = re.compile(r'^(?:\[\]byte|string)\((".*")\)$', re.S)
SIMPLE = {'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11, '\\': 92, "'": 39, '"': 34}


def unquote(q):
    """Decode a Go interpreted string literal (as strconv.Quote writes it) to bytes."""
    body, out, i = q[1:-1], bytearray(), 0
    while i < len(body):
        c = body[i]
        if c != '\\':
            out += c.encode('utf-8')
            i += 1
            continue
        e = body[i + 1]
        if e in SIMPLE:
            out.append(SIMPLE[e])
            i += 2
        elif e == 'x':
            out.append(int(body[i + 2:i + 4], 16))
            i += 4
        elif e in '01234567':
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        elif e in 'uU':
            n = 4 if e == 'u' else 8
            out += chr(int(body[i + 2:i + 2 + n], 16)).encode('utf-8')
            i += 2 + n
        else:
            raise ValueError('bad escape \\' + e)
    return bytes(out)


def seed(data):
    text = data.decode('utf-8', 'replace')
    lines = text.split('\n', 1)
    if lines[0].strip() != 'go test fuzz v1' or len(lines) < 2:
        return data
    values = [l for l in lines[1].split('\n') if l.strip()]
    if len(values) != 1:
        return data
    m = LITERAL.match(values[0].strip())
    if not m:
        return data
    try:
        return unquote(m.group(1))
    except (ValueError, IndexError):
        return data


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    names = sorted(n for n in os.listdir(src) if os.path.isfile(os.path.join(src, n))) if os.path.isdir(src) else []
    if not names:
        return
    with zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as z:
        for n in names:
            with open(os.path.join(src, n), 'rb') as f:
                z.writestr(n, seed(f.read()))
    print('%s: %d seeds' % (dst, len(names)))


if __name__ == '__main__':
    main()
