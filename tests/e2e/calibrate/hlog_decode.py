#!/usr/bin/env python3
"""hlog_decode -- an independent reader of HdrHistogram interval logs (stdlib only).

Written from HdrHistogram's published format, not from runner/load/hlog.c: base64, a compression
header (cookie 0x1c849314, length), zlib, an encoding header (cookie 0x1c849313, payload
length, normalizing offset, significant figures, lowest, highest, conversion ratio), then
zigzag LEB128 counts where a negative number n stands for -n zero counts.

The unit of a log's values is read from its header: kneebench writes
"#[Value unit: nanoseconds; Interval_Max in milliseconds]" (HdrHistogram's convention, which
HistogramLogProcessor prints as milliseconds); a kneebench log without that line was written
before it and holds microseconds, its max column too. A log from another writer without the
line is taken as HdrHistogram's nanoseconds with the max column in milliseconds, as Java's
HistogramLogWriter writes it.

  hlog_decode.py FILE                  print the unit and each interval's count, p50, p99, max
  hlog_decode.py --expect JSON FILE [--csv CSV]
      JSON: {"intervals": [{"values": [...], "errors": n}, ...]} -- the raw values recorded,
      in the log's unit. Checks every decoded count against the values bucketed here, the
      percentiles against the exact sorted values (to HdrHistogram's equivalence range), the
      max column, and the CSV rows (microseconds: the log's figures in whole us). Exit 0 when
      everything agrees, 1 with the first disagreement otherwise.
"""
import base64
import json
import math
import struct
import sys
import zlib

COMPRESSION_COOKIE_BASE = 0x1c849304
ENCODING_COOKIE_BASE = 0x1c849303


class Layout:
    """HdrHistogram's bucket layout for (lowest, highest, significant figures)."""

    def __init__(self, lowest, highest, sig):
        largest_single = 2 * 10 ** sig
        sub_bucket_count_magnitude = math.ceil(math.log2(largest_single))
        self.half_mag = max(sub_bucket_count_magnitude, 1) - 1
        self.unit_mag = int(math.floor(math.log2(lowest)))
        self.sub_count = 1 << (self.half_mag + 1)
        self.half_count = self.sub_count // 2
        self.mask = (self.sub_count - 1) << self.unit_mag
        smallest_untrackable = self.sub_count << self.unit_mag
        buckets = 1
        while smallest_untrackable <= highest:
            smallest_untrackable <<= 1
            buckets += 1
        self.counts_len = (buckets + 1) * self.half_count

    def bucket_of(self, v):
        return (v | self.mask).bit_length() - self.unit_mag - (self.half_mag + 1)

    def index_of(self, v):
        b = self.bucket_of(v)
        sub = v >> (b + self.unit_mag)
        return ((b + 1) << self.half_mag) + sub - self.half_count

    def value_at(self, index):
        b = (index >> self.half_mag) - 1
        sub = (index & (self.half_count - 1)) + self.half_count
        if b < 0:
            sub -= self.half_count
            b = 0
        return sub << (b + self.unit_mag)

    def range_of(self, v):
        b = self.bucket_of(v)
        sub = v >> (b + self.unit_mag)
        return 1 << (self.unit_mag + b + (1 if sub >= self.sub_count else 0))

    def lowest_equiv(self, v):
        b = self.bucket_of(v)
        return (v >> (b + self.unit_mag)) << (b + self.unit_mag)

    def highest_equiv(self, v):
        return self.lowest_equiv(v) + self.range_of(v) - 1


def zigzag_leb128(data, pos):
    value, shift = 0, 0
    for i in range(9):
        b = data[pos]
        pos += 1
        if i == 8:
            value |= b << 56
            break
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    return (value >> 1) ^ -(value & 1), pos


def decode_payload(text):
    raw = base64.b64decode(text, validate=True)
    cookie, length = struct.unpack(">Ii", raw[:8])
    if cookie & ~0xF0 != COMPRESSION_COOKIE_BASE:
        raise ValueError(f"compression cookie {cookie:#x}")
    if length != len(raw) - 8:
        raise ValueError(f"compressed length {length} but {len(raw) - 8} bytes follow")
    enc = zlib.decompress(raw[8:8 + length])
    (cookie, payload_len, offset, sig, lowest, highest,
     ratio) = struct.unpack(">IiiiqqQ", enc[:40])
    if cookie & ~0xF0 != ENCODING_COOKIE_BASE or (cookie & 0xF0) >> 4 != 1:
        raise ValueError(f"encoding cookie {cookie:#x}")
    if payload_len != len(enc) - 40:
        raise ValueError(f"payload length {payload_len} but {len(enc) - 40} bytes follow")
    if offset != 0 or struct.unpack(">d", struct.pack(">Q", ratio))[0] != 1.0:
        raise ValueError("unexpected normalizing offset or conversion ratio")
    layout = Layout(lowest, highest, sig)
    counts = {}
    pos, index, body = 0, 0, enc[40:]
    while pos < len(body):
        v, pos = zigzag_leb128(body, pos)
        if v < 0:
            index += -v
        else:
            if v:
                counts[index] = v
            index += 1
    if index > layout.counts_len:
        raise ValueError(f"{index} counts decoded, layout holds {layout.counts_len}")
    return layout, counts


def value_at_percentile(layout, counts, pct):
    total = sum(counts.values())
    if total == 0:
        return 0
    want = max(1, int(pct / 100.0 * total + 0.5))
    run = 0
    for index in sorted(counts):
        run += counts[index]
        if run >= want:
            return layout.highest_equiv(layout.value_at(index))
    return 0


UNIT_LINE = "#[Value unit: "


def value_unit(path):
    """'ns' or 'us': what the log's histogram values are (the module's docstring says how)."""
    kneebench = False
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            if line.startswith(UNIT_LINE):
                unit = line[len(UNIT_LINE):].split(";")[0].split("]")[0].strip()
                if unit not in ("nanoseconds", "microseconds"):
                    raise ValueError(f"unknown value unit {unit!r}")
                return "ns" if unit == "nanoseconds" else "us"
            kneebench |= line.startswith("#[Logged with kneebench]")
    return "us" if kneebench else "ns"


def max_column(mx, unit):
    """The Interval_Max column in the log's value unit: ms in an ns log, as written in a us one."""
    return mx * 1e6 if unit == "ns" else mx


def read_log(path):
    """[(tag, start, length, max, layout, counts)] and the header's base time; max is the
    column as written (value_unit() says its unit)."""
    out, base = [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#[BaseTime: "):
                base = float(line.split()[1])
                continue
            if not line or line.startswith("#") or line.startswith('"'):
                continue
            tag = None
            if line.startswith("Tag="):
                tag, line = line[4:].split(",", 1)
            start, length, mx, payload = line.split(",")
            layout, counts = decode_payload(payload)
            out.append((tag, float(start), float(length), float(mx), layout, counts))
    return out, base


def check(expect_path, log_path, csv_path):
    with open(expect_path) as f:
        expect = json.load(f)["intervals"]
    got, base = read_log(log_path)
    unit = value_unit(log_path)
    to_us = (lambda v: v // 1000) if unit == "ns" else (lambda v: v)
    if base is None:
        return "no #[BaseTime: ...] header line"
    if len(got) != len(expect):
        return f"{len(got)} intervals decoded, {len(expect)} written"
    rows = []
    if csv_path:
        with open(csv_path) as f:
            header = f.readline().strip().split(",")
            rows = [dict(zip(header, line.strip().split(","))) for line in f if line.strip()]
        if len(rows) != len(expect):
            return f"CSV has {len(rows)} rows, {len(expect)} intervals written"
    for i, (e, g) in enumerate(zip(expect, got)):
        tag, start, length, mx, layout, counts = g
        values = sorted(e["values"])
        want = {}
        for v in values:
            want[layout.index_of(v)] = want.get(layout.index_of(v), 0) + 1
        if counts != want:
            diff = sorted(set(counts.items()) ^ set(want.items()))[:5]
            return f"interval {i}: counts differ (first differences {diff})"
        figures = {}
        for name, pct in (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p999", 99.9)):
            d = value_at_percentile(layout, counts, pct)
            rank = max(1, int(pct / 100.0 * len(values) + 0.5)) - 1 if values else None
            exact = layout.highest_equiv(values[rank]) if values else 0
            if d != exact:
                return f"interval {i}: {name} decoded {d}, exact sorted value gives {exact}"
            figures[name] = d
        exact_max = layout.highest_equiv(values[-1]) if values else 0
        # an ns log's max column is in ms with 3 decimals: exact to the microsecond
        if (unit == "ns" and f"{mx:.3f}" != f"{exact_max / 1e6:.3f}") or \
                (unit == "us" and int(mx) != exact_max):
            return f"interval {i}: max column {mx} ({unit} log), exact {exact_max} {unit}"
        if rows:
            r = rows[i]
            # an empty interval has no latency: its cells are blank, never 0
            lat = (("p50_us", to_us(figures["p50"])), ("p99_us", to_us(figures["p99"])),
                   ("max_us", to_us(exact_max)))
            if not values and any(r[col] != "" for col, _ in lat):
                return f"interval {i}: empty, yet CSV latency {[r[c] for c, _ in lat]}"
            for col, want_v in (("completed", len(values)), ("errors", e.get("errors", 0)),
                                *(lat if values else ())):
                if int(r[col]) != want_v:
                    return f"interval {i}: CSV {col} {r[col]}, expected {want_v}"
            if abs(float(r["start_s"]) - start) > 0.0015 or abs(float(r["length_s"]) - length) > 0.0015:
                return f"interval {i}: CSV times {r['start_s']},{r['length_s']} vs log {start},{length}"
    return None


def main(argv):
    if len(argv) >= 3 and argv[0] == "--expect":
        csv_path = argv[argv.index("--csv") + 1] if "--csv" in argv else None
        problem = check(argv[1], argv[2], csv_path)
        if problem:
            print(f"hlog_decode: {problem}", file=sys.stderr)
            return 1
        print("hlog_decode: every interval agrees")
        return 0
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    got, base = read_log(argv[0])
    unit = value_unit(argv[0])
    print(f"base {base} unit {unit}")
    for tag, start, length, mx, layout, counts in got:
        print(f"{tag or '-'} {start:.3f}+{length:.3f} n={sum(counts.values())} "
              f"p50={value_at_percentile(layout, counts, 50)} "
              f"p99={value_at_percentile(layout, counts, 99)} "
              f"max={max_column(mx, unit):.0f} ({unit})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
