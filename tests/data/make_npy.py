#!/usr/bin/env python3
"""Writes the .npy fixtures of the tests (standard library only; the files are committed)."""
import os
import struct

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "npy")


def header(descr, fortran, shape, version):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, "True" if fortran else "False", dims)
    prefix = 10 if version == 1 else 12
    pad = (64 - (prefix + len(d) + 1) % 64) % 64
    d = d + " " * pad + "\n"
    magic = b"\x93NUMPY" + bytes([version, 0])
    size = struct.pack("<H", len(d)) if version == 1 else struct.pack("<I", len(d))
    return magic + size + d.encode("latin1")


def write(name, descr, shape, values, fortran=False, version=1):
    """values: in the order they are stored in the file."""
    fmt = {"f2": "e", "f4": "f", "f8": "d"}[descr[1:]]
    order = "<" if descr[0] == "<" else ">"
    data = b"".join(struct.pack(order + fmt, v) for v in values)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(header(descr, fortran, shape, version) + data)


def mat(r, c):
    return r * 10 + c + 0.5  # exact in float16


def main():
    os.makedirs(HERE, exist_ok=True)
    c_order = [mat(r, c) for r in range(2) for c in range(3)]
    f_order = [mat(r, c) for c in range(3) for r in range(2)]
    write("vec3_f32.npy", "<f4", (3,), [1.0, 2.0, 3.0])
    write("mat2x3_f16.npy", "<f2", (2, 3), c_order)
    write("mat2x3_f32.npy", "<f4", (2, 3), c_order)
    write("mat2x3_f32_fortran.npy", "<f4", (2, 3), f_order, fortran=True)
    write("mat2x3_f64_v2.npy", "<f8", (2, 3), c_order, version=2)
    write("mat2x3_f32_be.npy", ">f4", (2, 3), c_order)
    with open(os.path.join(HERE, "not_npy.npy"), "wb") as f:
        f.write(b"this is not a NumPy file\n")
    with open(os.path.join(HERE, "truncated.npy"), "wb") as f:
        f.write(header("<f4", False, (2, 3), 1) + struct.pack("<3f", 0.5, 1.5, 2.5))
    with open(os.path.join(HERE, "int32.npy"), "wb") as f:
        f.write(header("<i4", False, (2,), 1) + struct.pack("<2i", 1, 2))
    # A header with terminal escapes, a newline, Latin-1 bytes and 2 KB of text, and no shape:
    # messages must quote it short, printable, on one line.
    with open(os.path.join(HERE, "bad_header.npy"), "wb") as f:
        h = b"{'descr': '\x1b[31m<f4\n\xe9" + b"z" * 2000 + b"', }\n"
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h)


if __name__ == "__main__":
    main()
