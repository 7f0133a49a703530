#!/usr/bin/env python3
"""A reader of cyclescope databases written from docs/schema.md alone, not
from the store's code: where the document and the code part, a file stops
decoding to its source here.

usage: docreader.py DB [--run N] [--csv OUT] [--compare SRC.csv] [--prefix-check]

Decodes every value chunk (formats 1 to 8) and every timeline (formats 1
to 5) of the run (the first, or N) and writes its samples as CSV (t0, t1,
one column per metric in id order, absent values empty), or compares them
with the CSV it was imported from; --prefix-check decodes each coded
block's first samples alone and compares them with the whole block's.
Exits 1 on a mismatch. What it met goes to stderr ("stats:").
Checksums: XXH3-64 through ctypes from the system's libxxhash; without
it they are not verified (said on stderr).
"""
import sys, os, sqlite3, struct, math, ctypes, ctypes.util, collections, argparse

M64 = (1 << 64) - 1
L23 = 1 << 23

# ---------------------------------------------------------------- helpers
class Corrupt(Exception):
    pass

STATS = collections.Counter()
NOTES = collections.Counter()

_xxh = None
for name in ('xxhash', ):
    p = ctypes.util.find_library(name)
    for cand in ([p] if p else []) + ['libxxhash.so.0', 'libxxhash.so']:
        try:
            _xxh = ctypes.CDLL(cand)
            _xxh.XXH3_64bits.restype = ctypes.c_uint64
            _xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
            break
        except OSError:
            _xxh = None
if _xxh is None:
    print('warning: no XXH3 available, checksums NOT verified', file=sys.stderr)

_zstd = None
try:
    _zstd = ctypes.CDLL(ctypes.util.find_library('zstd') or 'libzstd.so.1')
    _zstd.ZSTD_decompress.restype = ctypes.c_size_t
    _zstd.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    _zstd.ZSTD_isError.restype = ctypes.c_uint
    _zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
except OSError:
    _zstd = None


def checksum(b):
    return _xxh.XXH3_64bits(bytes(b), len(b)) & 0xffffffff


def verify(b, stored, what):
    if _xxh is None:
        STATS['checksums skipped'] += 1
        return
    c = checksum(b)
    if c != stored:
        raise Corrupt('checksum mismatch: %s (stored %08x, computed %08x)' % (what, stored, c))
    STATS['checksums ok'] += 1


def unzstd(b, raw_len):
    if _zstd is None:
        raise Corrupt('zstd payload but no libzstd')
    out = ctypes.create_string_buffer(raw_len)
    r = _zstd.ZSTD_decompress(out, raw_len, bytes(b), len(b))
    if _zstd.ZSTD_isError(r) or r != raw_len:
        raise Corrupt('zstd decompression failed')
    return out.raw


def varint(b, p, end=None):
    if end is None:
        end = len(b)
    v = 0
    sh = 0
    for i in range(10):
        if p >= end:
            raise Corrupt('varint past end')
        c = b[p]
        p += 1
        v |= (c & 0x7f) << sh
        if not c & 0x80:
            if v > M64:
                raise Corrupt('varint above 2^64')
            return v, p
        sh += 7
    raise Corrupt('varint longer than 10 bytes')


def unzz(u):
    return (u >> 1) ^ -(u & 1)


def s64(v):
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def u32(b, p):
    return struct.unpack_from('<I', b, p)[0]

# ---------------------------------------------------------------- tables
BASE = [1024, 1069, 1117, 1166, 1218, 1272, 1328, 1387, 1448, 1512, 1579,
        1649, 1722, 1798, 1878, 1961]
# sanity: round(1024 * 2^(j/16))
assert BASE == [round(1024 * 2 ** (j / 16)) for j in range(16)]


class Table:
    def __init__(self, top, used, q):
        self.top = top
        self.used = used
        self.freq = [0] * top
        self.start = [0] * top
        self.lookup = None
        if top == 0:
            return
        w = {s: BASE[qq & 15] << (qq >> 4) for s, qq in zip(used, q)}
        W = sum(w.values())
        f = {s: max(1, w[s] * 4096 // W) for s in used}
        guard = 0
        while sum(f.values()) != 4096:
            guard += 1
            if guard > 10000:
                raise Corrupt('table does not normalise')
            d = 4096 - sum(f.values())
            big = max(used, key=lambda s: (f[s], -s))  # largest, lowest symbol among equals
            STATS['table adjust ' + ('up' if d > 0 else 'down')] += 1
            if sum(1 for t in used if f[t] == f[big]) > 1: STATS['table adjust tie'] += 1
            if d > 0:
                f[big] += d
            else:
                give = min(-d, f[big] - 1)
                if give == 0:
                    raise Corrupt('table cannot be normalised')
                f[big] -= give
        st = 0
        lk = bytearray() if top <= 256 else []
        lk = [0] * 4096
        for s in used:
            self.freq[s] = f[s]
            self.start[s] = st
            for j in range(st, st + f[s]):
                lk[j] = s
            st += f[s]
        self.lookup = lk


def parse_table(b, p, end, maxtop, allow_empty):
    top, p = varint(b, p, end)
    if top == 0:
        if not allow_empty:
            raise Corrupt('empty table not allowed in this format')
        return Table(0, [], []), p
    if top > maxtop:
        raise Corrupt('table top %d > %d' % (top, maxtop))
    nb = (top + 7) // 8
    if p + nb > end:
        raise Corrupt('table bitmap past end')
    bm = b[p:p + nb]
    p += nb
    used = [s for s in range(nb * 8) if bm[s >> 3] >> (s & 7) & 1]
    if any(s >= top for s in used):
        raise Corrupt('table bits at/above top set')
    if not used or used[-1] != top - 1:
        raise Corrupt('table: symbol top-1 not used')
    if p + len(used) > end:
        raise Corrupt('table weights past end')
    q = list(b[p:p + len(used)])
    p += len(used)
    return Table(top, used, q), p

# ---------------------------------------------------------------- rANS
class Rans:
    """k states sharing one forward byte run [p, end)."""

    def __init__(self, b, p, end, nstates):
        if p + 4 * nstates > end:
            raise Corrupt('rANS states past end')
        self.x = [u32(b, p + 4 * i) for i in range(nstates)]
        for x in self.x:
            if not (L23 <= x < (1 << 31)):
                raise Corrupt('rANS state out of [2^23, 2^31)')
        self.b = b
        self.p = p + 4 * nstates
        self.end = end

    def _renorm(self, st, x):
        b = self.b
        while x < L23 and self.p < self.end:
            x = (x << 8) | b[self.p]
            self.p += 1
        self.x[st] = x

    def sym(self, st, tab):
        x = self.x[st]
        slot = x & 4095
        s = tab.lookup[slot]
        x = tab.freq[s] * (x >> 12) + slot - tab.start[s]
        self._renorm(st, x)
        return s

    def uniform(self, st, c):  # format 4 raw chunk of c bits
        x = self.x[st]
        sh = 12 - c
        v = (x & 4095) >> sh
        x = (1 << sh) * (x >> 12) + (x & 4095) - (v << sh)
        self._renorm(st, x)
        return v


class RawBack:
    """Raw bits stored last to first from `end`: stream bit p is bit p%8 of byte end-1-p//8."""

    def __init__(self, b, lo, end):
        self.lo = lo
        self.end = end
        self.big = int.from_bytes(bytes(b[lo:end])[::-1], 'little')
        self.p = 0

    def get(self, n):
        if n == 0:
            return 0
        if self.p + n > 8 * (self.end - self.lo):
            raise Corrupt('raw bits past block start')
        v = (self.big >> self.p) & ((1 << n) - 1)
        self.p += n
        return v


def sym_info(s, fmt_runs, maxk):
    """-> (kind, base, nraw): kind 'v' value, 'r' run."""
    if s < 16:
        return 'v', s, 0
    if fmt_runs and 432 <= s < 440:
        k = s - 430
        return 'r', 1 << (k - 1), k - 1
    k = (s - 16) // 8 + 5
    if k > maxk:
        raise Corrupt('symbol %d beyond bit length %d' % (s, maxk))
    return 'v', (8 | (s - 16) % 8) << (k - 4), k - 4


def decode_tokens_split(b, p, end, tables, ntok, runs_ok, bitsback, maxk, limit=None,
                        run_total=None):
    """Format 5/6/7 value stream, or format 5 timeline stream.

    tables[j % 2] is the table of token j.  Returns list of tokens as
    ('v', z) or ('r', r).  ntok: number of tokens (when runs are possible, the
    number of differences; runs count their length).  limit: stop after this
    many tokens/differences (prefix decoding: only allowed, without bits back,
    up to ntok-32).  Also returns a dict with end-of-stream facts.
    """
    r = Rans(b, p, end, 2)
    raw = RawBack(b, r.p, end)
    out = []
    covered = 0
    j = 0
    nfront = max(0, ntok - 32) if bitsback else ntok
    if limit is not None and bitsback and limit > nfront:
        limit = None  # needs the whole block
    stop = ntok if limit is None else min(limit, ntok)
    if bitsback:
        front = min(nfront, stop) if limit is not None else nfront
    else:
        front = stop
    while covered < front:
        s = r.sym(j & 1, tables[j & 1])
        kind, base, nraw = sym_info(s, runs_ok, maxk)
        v = base | raw.get(nraw)
        if kind == 'r':
            if v < 2 or v > 511:
                raise Corrupt('run length %d' % v)
            if covered + v > ntok:
                NOTES['run truncated at end of block'] += 1
                v = ntok - covered
            out.append(('r', v))
            covered += v
        else:
            out.append(('v', v))
            covered += 1
        j += 1
    info = {}
    if limit is not None:
        return out, info
    if bitsback:
        syms = []
        for jj in range(nfront, ntok):
            s = r.sym(jj & 1, tables[jj & 1])
            kind, base, nraw = sym_info(s, False, maxk)
            syms.append((base, nraw))
        R = sum(n for _, n in syms)
        m = min(46, R)
        STATS['bitsback R<23' if R < 23 else 'bitsback 23<=R<46' if R < 46 else 'bitsback R>=46'] += 1
        if ntok < 32: STATS['bitsback ntok<32'] += 1
        m0 = min(23, m)
        m1 = m - m0
        x0, x1 = r.x
        b0 = x0 - L23
        b1 = x1 - L23
        if not (0 <= b0 < (1 << m0)) or not (0 <= b1 < (1 << m1)):
            raise Corrupt('bits-back: final states %x %x do not hold %d+%d bits' % (x0, x1, m0, m1))
        stored = raw.get(R - m)
        allbits = stored | ((b0 | (b1 << m0)) << (R - m))
        for base, nraw in syms:
            out.append(('v', base | (allbits & ((1 << nraw) - 1))))
            allbits >>= nraw
        covered = ntok
    else:
        if r.x != [L23, L23]:
            raise Corrupt('final states %r != 2^23' % (r.x,))
    # stream ends: symbol bytes then ceil(rawbits/8) bytes exactly fill the block
    rawbytes = (raw.p + 7) // 8
    info['sym_end'] = r.p
    info['raw_bits'] = raw.p
    if r.p + rawbytes != end:
        NOTES['stream bytes + raw bytes != block length'] += 1
        raise Corrupt('symbol bytes (%d) + raw bytes (%d) != stream length (%d)'
                      % (r.p - p, rawbytes, end - p))
    if raw.p % 8:
        pad = raw.big >> raw.p
        pad &= (1 << (8 - raw.p % 8)) - 1
        if pad:
            raise Corrupt('raw padding not zero')
    return out, info


def decode_tokens_f4(b, p, end, tables, nval, maxk, nstates=1):
    """Format 4: states 2^23-start, raw chunks (<= 12 bits, lowest first) through the state."""
    r = Rans(b, p, end, nstates)
    out = []
    for i in range(nval):
        st = i % nstates
        s = r.sym(st, tables[st])
        kind, base, nraw = sym_info(s, False, maxk)
        v = 0
        sh = 0
        while sh < nraw:
            c = min(12, nraw - sh)
            v |= r.uniform(st, c) << sh
            sh += c
        out.append(base | v)
    if any(x != L23 for x in r.x):
        raise Corrupt('format 4 final states not 2^23')
    if r.p != end:
        raise Corrupt('format 4 stream not consumed exactly')
    return out

# ---------------------------------------------------------------- value chunks
class Block:
    pass


def parse_entries(d, p, end, fmt, B, n, bs, table):
    blocks = []
    prev_min = 0
    prev_sum = 0
    for bi in range(B):
        blk = Block()
        blk.idx = bi
        blk.blen = min(n, bi * bs + bs) - bi * bs
        if p >= end:
            raise Corrupt('directory too short')
        kind = d[p]
        p += 1
        blk.kind = kind
        t = kind & 3
        blk.type = t
        allp = bool(kind & 4)
        blk.bitsback = bool(kind & 8)
        blk.line = bool(kind & 16)
        blk.dec = 0
        if kind & 0xc0:
            raise Corrupt('kind bits 6-7 set')
        if kind & 32 and (fmt != 8 or t not in (1, 3)):
            raise Corrupt('bit 5 outside format 8 type 1 or 3')
        if blk.bitsback and (fmt not in (6, 7, 8) or t != 3):
            raise Corrupt('bit 3 outside format 6/7/8 type 3')
        if blk.line and (fmt not in (7, 8) or t != 3 or not blk.bitsback):
            raise Corrupt('bit 4 outside format 7/8 type 3 with bit 3')
        if t == 0:
            if kind != 0:
                raise Corrupt('all-absent block with other kind bits')
            blk.count = 0
            blocks.append(blk)
            continue
        if allp:
            blk.count = blk.blen
        else:
            blk.count, p = varint(d, p, end)
            if not (1 <= blk.count <= blk.blen - 1):
                raise Corrupt('count %d outside 1..blen-1' % blk.count)
        if kind & 32:
            if p >= end:
                raise Corrupt('decimal exponent past end')
            blk.dec = d[p]
            p += 1
            if not 1 <= blk.dec <= 22:
                raise Corrupt('decimal exponent %d outside 1..22' % blk.dec)
            STATS['decimal blocks type%d' % t] += 1
        if t in (1, 3):
            dmin, p = varint(d, p, end)
            rng, p = varint(d, p, end)
            dsum, p = varint(d, p, end)
            blk.min = prev_min + unzz(dmin)
            blk.range = rng
            blk.max = blk.min + rng
            blk.sum = prev_sum + unzz(dsum)
            prev_min, prev_sum = blk.min, blk.sum
            blk.bw = rng.bit_length()
            if abs(blk.min) > 2 ** 53 or abs(blk.max) > 2 ** 53 or abs(blk.sum) > 2 ** (62 if bs == 512 else 61):
                raise Corrupt('integer block bounds')
            if t == 3:
                if fmt < 4:
                    raise Corrupt('type 3 in format 3')
                if table.top == 0:
                    raise Corrupt('type 3 with empty table')
                if blk.count < 2:
                    raise Corrupt('type 3 with < 2 values')
                blk.len, p = varint(d, p, end)
        elif t == 2:
            if p + 24 > end:
                raise Corrupt('type 2 entry past end')
            blk.min, blk.max, blk.sum = struct.unpack_from('<3d', d, p)
            p += 24
        bmp = (blk.blen + 7) // 8 if blk.count < blk.blen else 0
        if t == 1:
            blk.len = bmp + (blk.count * blk.bw + 7) // 8
        elif t == 2:
            blk.len = bmp + 8 * blk.count
        if fmt >= 5 and t == 1 and allp and blk.range == 0:
            blk.check = None
        else:
            if p + 4 > end:
                raise Corrupt('check past end')
            blk.check = u32(d, p)
            p += 4
        blocks.append(blk)
    if p != end:
        raise Corrupt('directory has %d bytes left over' % (end - p))
    return blocks


def block_values(fmt, blk, pl, off, table, limit=None):
    """-> list of (place j in block, value) of present samples (first `limit` present values)."""
    end = off + blk.len
    if end > len(pl):
        raise Corrupt('block payload past payload end')
    if limit is None and blk.check is not None:
        verify(pl[off:end], blk.check, 'block %d payload' % blk.idx)
    p = off
    if blk.count < blk.blen:
        nb = (blk.blen + 7) // 8
        bm = pl[p:p + nb]
        p += nb
        places = [j for j in range(blk.blen) if bm[j >> 3] >> (j & 7) & 1]
        if len(places) != blk.count:
            raise Corrupt('bitmap has %d bits, count %d' % (len(places), blk.count))
        if any(bm[j >> 3] >> (j & 7) & 1 for j in range(blk.blen, nb * 8)):
            raise Corrupt('bitmap bits past blen')
    else:
        places = list(range(blk.blen))
    cnt = blk.count
    want = cnt if limit is None else min(limit, cnt)
    if blk.type == 2:
        raw = pl[p:p + 8 * cnt]
        vals = []
        for i in range(want):
            vals.append(struct.unpack('<d', bytes(raw[k * cnt + i] for k in range(8)))[0])
        STATS['blocks type2'] += 1
    elif blk.type == 1:
        bw = blk.bw
        big = int.from_bytes(bytes(pl[p:end]), 'little')
        mask = (1 << bw) - 1
        vals = [blk.min + ((big >> (i * bw)) & mask) for i in range(want)]
        if bw * cnt % 8 and limit is None and big >> (bw * cnt):
            raise Corrupt('packed padding not zero')
        STATS['blocks type1' + (' range0-nocheck' if blk.check is None else '')] += 1
    else:  # type 3
        maxk = 56
        if blk.line:
            lv, p = varint(pl, p, end)
            sl, p = varint(pl, p, end)
            L = s64(blk.min + unzz(lv))
            s = s64(unzz(sl))
            ntok = cnt
            lim = None if limit is None else want
            STATS['line slope ' + ('<0' if s < 0 else '0' if s == 0 else '>0')] += 1
            if cnt < blk.blen: STATS['line with bitmap'] += 1
            if blk.blen < 512: STATS['line short block'] += 1
        else:
            if cnt < blk.blen: STATS['type3 diff with bitmap'] += 1
            first, p = varint(pl, p, end)
            ntok = cnt - 1
            lim = None if limit is None else max(0, want - 1)
        if fmt == 4:
            zs = decode_tokens_f4(pl, p, end, [table], ntok, maxk)
            toks = [('v', z) for z in zs]
        else:
            toks, info = decode_tokens_split(pl, p, end, [table, table], ntok,
                                             runs_ok=(fmt >= 6 and not blk.bitsback),
                                             bitsback=blk.bitsback, maxk=maxk, limit=lim)
        if any(k == 'r' for k, _ in toks):
            STATS['blocks type3 with runs'] += 1
        if blk.line:
            h = blk.blen // 2
            vals = []
            for k, (kind, z) in enumerate(toks[:want]):
                jj = places[k]
                pj = s64(L + (s64(s * (jj - h)) >> 8))
                vals.append(s64(pj + unzz(z)))
            STATS['blocks type3 line'] += 1
        else:
            v = blk.min + first
            vals = [v]
            for kind, z in toks:
                if len(vals) >= want:
                    break
                if kind == 'r':
                    vals.extend([v] * min(z, want - len(vals)))
                else:
                    v = s64(v + unzz(z))
                    vals.append(v)
            vals = vals[:want]
            STATS['blocks type3 diff' + (' bitsback' if blk.bitsback else '')] += 1
    if limit is None:
        if len(vals) != cnt:
            raise Corrupt('decoded %d values, count %d' % (len(vals), cnt))
        if blk.type in (1, 3):
            if min(vals) != blk.min or max(vals) != blk.max or sum(vals) != blk.sum:
                raise Corrupt('block %d aggregates: dir min/max/sum %d/%d/%d, decoded %d/%d/%d'
                              % (blk.idx, blk.min, blk.max, blk.sum, min(vals), max(vals), sum(vals)))
        else:
            pass  # doubles: compare aggregates loosely below
    if blk.type in (1, 3):
        # a decimal block's integers over 10^e, divided as IEEE doubles
        # (10^e is exact for e <= 22)
        vals = [float(x) / float(10 ** blk.dec) if blk.dec else float(x) for x in vals]
    return list(zip(places[:want], vals))


def decode_chunk(blob, want_blocks=False):
    """-> (n, list of values or None per sample, blocks, payload, table, fmt)."""
    b = blob
    if len(b) < 16:
        raise Corrupt('short blob')
    fmt = b[0]
    flags = b[1]
    if flags & ~1:
        raise Corrupt('flags other bits set')
    n = u32(b, 4)
    raw_len = u32(b, 8)
    stored_len = u32(b, 12)
    if not (1 <= n <= 65536):
        raise Corrupt('n out of range')
    STATS['value chunks fmt%d' % fmt] += 1
    if fmt in (1, 2):
        bs = 128
        B = (n + bs - 1) // bs
        es = 28 if fmt == 1 else 32
        dend = 16 + es * B
        if fmt == 2:
            verify(b[0:dend], u32(b, dend), 'header+directory')
            poff = dend + 4
        else:
            poff = dend
        blocks = []
        for bi in range(B):
            e = 16 + es * bi
            blk = Block()
            blk.idx = bi
            blk.blen = min(n, bi * bs + bs) - bi * bs
            blk.type = b[e]
            blk.bw = b[e + 1]
            blk.count = struct.unpack_from('<H', b, e + 2)[0]
            blk.min, blk.max, blk.sum = struct.unpack_from('<3d', b, e + 4)
            blk.check = u32(b, e + 28) if fmt == 2 else None
            blk.line = blk.bitsback = False
            blk.dec = 0
            bmp = (blk.blen + 7) // 8 if 0 < blk.count < blk.blen else 0
            if blk.type == 0:
                blk.len = 0
            elif blk.type == 1:
                blk.len = bmp + (blk.count * blk.bw + 7) // 8
                blk.min = int(blk.min); blk.max = int(blk.max); blk.sum = int(blk.sum)
            elif blk.type == 2:
                blk.len = bmp + 8 * blk.count
            else:
                raise Corrupt('format 1/2 type %d' % blk.type)
            blocks.append(blk)
        table = None
    else:
        if fmt not in (3, 4, 5, 6, 7, 8):
            raise Corrupt('unknown format %d' % fmt)
        D = struct.unpack_from('<H', b, 2)[0]
        if D < 1:
            raise Corrupt('D = 0')
        verify(b[0:16 + D], u32(b, 16 + D), 'header+directory')
        bs = 256 if fmt <= 4 else 512
        B = (n + bs - 1) // bs
        p = 16
        end = 16 + D
        table = None
        if fmt >= 4:
            table, p = parse_table(b, p, end, 432 if fmt <= 5 else 440, allow_empty=fmt >= 5)
        blocks = parse_entries(b, p, end, fmt, B, n, bs, table)
        poff = 20 + D
    pl = b[poff:poff + stored_len]
    if len(pl) != stored_len or poff + stored_len != len(b):
        raise Corrupt('stored_len %d does not match blob (%d after header)' % (stored_len, len(b) - poff))
    if flags & 1:
        pl = unzstd(pl, raw_len)
        STATS['zstd payloads'] += 1
    if len(pl) != raw_len:
        raise Corrupt('raw_len mismatch')
    pl = memoryview(bytes(pl)).tobytes()
    vals = [None] * n
    off = 0
    offs = []
    for blk in blocks:
        offs.append(off)
        if blk.type == 0:
            continue
        for jj, v in block_values(fmt, blk, pl, off, table):
            vals[blk.idx * bs + jj] = v
        off += blk.len
    if off != raw_len:
        raise Corrupt('blocks cover %d of %d payload bytes' % (off, raw_len))
    return n, vals, blocks, pl, table, fmt, offs, bs

# ---------------------------------------------------------------- timelines
def decode_timeline(blob):
    b = blob
    fmt = b[0]
    flags = b[1]
    n = u32(b, 4)
    raw_len = u32(b, 8)
    stored_len = u32(b, 12)
    STATS['timelines fmt%d' % fmt] += 1
    if fmt >= 3 and struct.unpack_from('<H', b, 2)[0] != 0:
        raise Corrupt('timeline bytes 2-3 not 0')
    if fmt >= 2:
        if 16 + stored_len + 4 != len(b):
            raise Corrupt('timeline length mismatch')
        verify(b[0:16 + stored_len], u32(b, 16 + stored_len), 'timeline')
    pl = b[16:16 + stored_len]
    if flags & 1:
        pl = unzstd(pl, raw_len)
    pl = bytes(pl)
    if len(pl) != raw_len:
        raise Corrupt('timeline raw_len mismatch')
    t0 = []
    t1 = []
    if fmt in (1, 2):
        p = 0
        delta = 0
        d = 0
        for i in range(n):
            u, p = varint(pl, p)
            if i == 0:
                t = u
            else:
                delta += unzz(u)
                t = t0[-1] + delta
            u, p = varint(pl, p)
            d += unzz(u)
            t0.append(t)
            t1.append(t + d)
        return t0, t1
    B = (n + 127) // 128
    p = 0
    if fmt in (4, 5):
        mode = pl[0]
        if mode & 0xfc:
            raise Corrupt('mode bits 2-7')
        p = 1
        ref_step, p = varint(pl, p)
        ref_dur, p = varint(pl, p)
        if ref_step >> 63 or ref_dur >> 63:
            raise Corrupt('ref above 2^63')
        tS, p = parse_table(pl, p, len(pl), 496, allow_empty=True)
        tD, p = parse_table(pl, p, len(pl), 496, allow_empty=True)
    lst = []
    prev_first = None
    prev_last = None
    for bi in range(B):
        blen = min(n, bi * 128 + 128) - bi * 128
        f, p = varint(pl, p)
        sp, p = varint(pl, p)
        ln, p = varint(pl, p)
        if fmt == 5:
            if bi == 0:
                first = f
            else:
                first = s64(prev_last + unzz(f) + ref_step)
            span = s64(unzz(sp) + (blen - 1) * ref_step)
        else:
            first = f if bi == 0 else prev_first + f
            span = sp
        prev_first = first
        prev_last = first + span
        lst.append((blen, first, span, ln))
    for bi, (blen, first, span, ln) in enumerate(lst):
        end = p + ln
        if end > len(pl):
            raise Corrupt('timeline block past payload')
        bt0 = [first]
        bt1 = []
        if fmt == 3:
            q = p
            delta = 0
            d = 0
            for j in range(blen):
                if j >= 1:
                    u, q = varint(pl, q, end)
                    delta += unzz(u)
                    bt0.append(bt0[-1] + delta)
                u, q = varint(pl, q, end)
                d += unzz(u)
                bt1.append(bt0[j] + d)
            if q != end:
                raise Corrupt('format 3 timeline block not consumed')
        else:
            nv = 2 * blen - 1
            if fmt == 4:
                zs = decode_tokens_f4(pl, p, end, [tD, tS], nv, 64, nstates=2)
            else:
                toks, _ = decode_tokens_split(pl, p, end, [tD, tS], nv, runs_ok=False,
                                              bitsback=True, maxk=64)
                zs = [z for _, z in toks]
            prev_step = ref_step
            prev_dur = ref_dur
            for i, z in enumerate(zs):
                if i % 2 == 0:  # duration of sample i//2
                    pred = ref_dur if mode & 2 else prev_dur
                    dur = s64(pred + unzz(z))
                    if dur < 0:
                        raise Corrupt('negative duration')
                    prev_dur = dur
                    tt = bt0[i // 2] + dur
                    if tt >> 63:
                        raise Corrupt('time >= 2^63')
                    bt1.append(tt)
                else:
                    pred = ref_step if mode & 1 else prev_step
                    step = s64(pred + unzz(z))
                    if step < 0:
                        raise Corrupt('negative step')
                    prev_step = step
                    bt0.append(bt0[-1] + step)
        if bt0[-1] != first + span:
            raise Corrupt('timeline block %d: last t0 %d != first+span %d' % (bi, bt0[-1], first + span))
        t0 += bt0
        t1 += bt1
        p = end
    if p != len(pl):
        raise Corrupt('timeline payload has %d bytes left' % (len(pl) - p))
    return t0, t1

# ---------------------------------------------------------------- driver
def fmtval(v):
    if v is None:
        return ''
    if isinstance(v, float) and math.isfinite(v) and v == int(v) and abs(v) < 2 ** 63:
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    return repr(v)


def read_run(db, run):
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    metrics = con.execute('select id, name from metrics where run=? order by id', (run,)).fetchall()
    mid = {m: i for i, (m, _) in enumerate(metrics)}
    samples = {}  # device -> (t0 list, t1 list, seq0 base)
    for dev, seq0, n, t0f, t0l, t1l, data in con.execute(
            'select device, seq0, n, t0_first, t0_last, t1_last, data from timelines where run=? order by device, seq0', (run,)):
        try:
            t0, t1 = decode_timeline(data)
        except Corrupt as e:
            raise Corrupt('timeline run %d device %d seq0 %d: %s' % (run, dev, seq0, e))
        if len(t0) != n or t0[0] != t0f or t0[-1] != t0l or t1[-1] != t1l:
            raise Corrupt('timeline row columns disagree with blob (seq0 %d)' % seq0)
        d = samples.setdefault(dev, {})
        for i in range(n):
            d[seq0 + i] = [t0[i], t1[i]] + [None] * len(metrics)
    for cid, dev, metric, seq0, n, t0f, t0l, cnt, vmin, vmax, vsum, data in con.execute(
            'select id, device, metric, seq0, n, t0_first, t0_last, count, vmin, vmax, vsum, data from chunks where run=?', (run,)):
        try:
            nn, vals, blocks, *_ = decode_chunk(data)
        except Corrupt as e:
            raise Corrupt('chunk run %d metric %d device %d seq0 %d: %s' % (run, metric, dev, seq0, e))
        if nn != n:
            raise Corrupt('chunk n column != blob n')
        pres = [v for v in vals if v is not None]
        if len(pres) != cnt:
            raise Corrupt('chunk count column %d, decoded %d' % (cnt, len(pres)))
        if pres and (min(pres) != vmin or max(pres) != vmax or abs(sum(pres) - vsum) > 1e-9 * max(1, abs(vsum))):
            raise Corrupt('chunk aggregate columns disagree (metric %d seq0 %d)' % (metric, seq0))
        d = samples[dev]
        if d[seq0][0] != t0f or d[seq0 + n - 1][0] != t0l:
            raise Corrupt('chunk t0_first/t0_last disagree with timeline')
        col = 2 + mid[metric]
        for i, v in enumerate(vals):
            d[seq0 + i][col] = v
    return [name for _, name in metrics], samples


def compare(rows, names, src):
    import csv
    with open(src) as f:
        rd = csv.reader(f)
        hdr = next(rd)
        srows = list(rd)
    if hdr != ['t0', 't1'] + names:
        print('  header differs: %r vs %r' % (hdr[:5], (['t0', 't1'] + names)[:5]))
        return False
    if len(srows) != len(rows):
        print('  row count: source %d, decoded %d' % (len(srows), len(rows)))
        return False
    bad = 0
    absent = 0
    for i, (sr, r) in enumerate(zip(srows, rows)):
        for c, (sv, v) in enumerate(zip(sr, r)):
            if sv.strip() == '':
                absent += 1
                ok = v is None
            else:
                ok = v is not None and float(sv) == float(v)
            if not ok:
                bad += 1
                if bad <= 10:
                    print('  mismatch row %d col %s: source %r decoded %r' % (i, hdr[c], sv, v))
    print('  compared %d rows x %d columns: %d mismatches (%d absent in source)'
          % (len(rows), len(hdr), bad, absent))
    return bad == 0


def prefix_check(db, run, ns=(1, 2, 3, 7, 50, 100, 200, 300, 400, 479, 480, 481, 500, 511, 512)):
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    tested = 0
    bad = 0
    nobb = 0
    for metric, seq0, data in con.execute('select metric, seq0, data from chunks where run=?', (run,)):
        n, vals, blocks, pl, table, fmt, offs, bs = decode_chunk(data)
        for blk, off in zip(blocks, offs):
            if blk.type != 3:
                continue
            full = block_values(fmt, blk, pl, off, table)
            for k in ns:
                if k > blk.count:
                    continue
                ntok = blk.count if blk.line else blk.count - 1
                ntk = k if blk.line else k - 1
                if blk.bitsback and ntk <= ntok - 32:
                    nobb += 1
                got = block_values(fmt, blk, pl, off, table, limit=k)
                got = [(j, float(v)) for j, v in got]
                tested += 1
                if got != full[:k]:
                    bad += 1
                    if bad <= 5:
                        print('  prefix mismatch metric %d seq0 %d block %d n=%d' % (metric, seq0, blk.idx, k))
    print('  prefix decodes: %d tested (%d of them without the stolen bits), %d mismatches'
          % (tested, nobb, bad))
    return bad == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('db')
    ap.add_argument('--run', type=int)
    ap.add_argument('--csv')
    ap.add_argument('--compare')
    ap.add_argument('--prefix-check', action='store_true')
    a = ap.parse_args()
    con = sqlite3.connect('file:%s?mode=ro' % a.db, uri=True)
    run = a.run or con.execute('select min(id) from runs').fetchone()[0]
    names, samples = read_run(a.db, run)
    rows = []
    for dev in sorted(samples):
        d = samples[dev]
        if sorted(d) != list(range(len(d))):
            raise Corrupt('seq not contiguous')
        rows += [d[s] for s in range(len(d))]
    out = open(a.csv, 'w') if a.csv else (None if a.compare or a.prefix_check else sys.stdout)
    if out:
        out.write(','.join(['t0', 't1'] + names) + '\n')
        for r in rows:
            out.write(','.join(fmtval(v) for v in r) + '\n')
        if out is not sys.stdout:
            out.close()
    ok = True
    if a.compare:
        print('%s vs %s:' % (a.db, a.compare))
        ok = compare(rows, names, a.compare) and ok
    if a.prefix_check:
        ok = prefix_check(a.db, run) and ok
    print('  stats:', dict(STATS), dict(NOTES), file=sys.stderr)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
