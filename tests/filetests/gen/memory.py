import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

def le_bytes(x, n): return [(x >> (8 * i)) & 0xff for i in range(n)]
def from_le(bs): return sum(b << (8 * i) for i, b in enumerate(bs))

# ------------------------------------------------------------------ store/load of every width
out = ['test run', '',
       ';; Stack slots through stack_addr: store and load of every width at several',
       ';; offsets (folded into [R1 + offset]), with i64 (generic) and i32 (local)',
       ';; addresses, the little-endian byte layout seen through narrower loads, and', ';; several slots that must not overlap.', '']
for b in WIDTHS:
    t = TY[b]
    for at in ['i64', 'i32']:
        name = 'store_load_%s_addr_%s' % (t, at)
        nb = b // 8
        offs = [0, nb, 2 * nb, 24]
        lines = ['function %%%s(%s, %s) -> %s, %s, %s {' % (name, t, t, t, t, t),
                 '    ss0 = explicit_slot 32', '',
                 'block0(v0: %s, v1: %s):' % (t, t),
                 '    v2 = stack_addr.%s ss0' % at,
                 '    store v0, v2',
                 '    store v1, v2+%d' % offs[1],
                 '    v3 = iadd v0, v1',
                 '    store v3, v2+%d' % offs[3],
                 '    v4 = load.%s v2' % t,
                 '    v5 = load.%s v2+%d' % (t, offs[1]),
                 '    v6 = load.%s v2+%d' % (t, offs[3]),
                 '    return v4, v5, v6', '}']
        out.append('\n'.join(lines))
        for x, y in [(1, 2), (-1, smin(b)), (smax(b), 0x5a5a5a5a5a5a5a5a & mask(b)), (0, -1)]:
            out.append(run(name, [(x, b), (y, b)], [(x, b), (y, b), (x + y, b)]))
        out.append('')
# byte layout: store an i64, read each piece
out += ['''function %le_layout_i8(i64, i32) -> i8 {
    ss0 = explicit_slot 8

block0(v0: i64, v1: i32):
    v2 = stack_addr.i64 ss0
    store v0, v2
    v3 = stack_addr.i32 ss0
    v4 = iadd v3, v1
    v5 = load.i8 v4
    return v5
}''']
X = 0x8877665544332211
for k in range(8):
    out.append(run('le_layout_i8', [(X, 64), (k, 32)], [(le_bytes(X, 8)[k], 8)]))
out.append('')
out += ['''function %le_layout_i16_i32(i64) -> i16, i16, i16, i16, i32, i32 {
    ss0 = explicit_slot 8

block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store v0, v1
    v2 = load.i16 v1
    v3 = load.i16 v1+2
    v4 = load.i16 v1+4
    v5 = load.i16 v1+6
    v6 = load.i32 v1
    v7 = load.i32 v1+4
    return v2, v3, v4, v5, v6, v7
}''']
for x in [X, 0xfedcba98_76543210, 1]:
    out.append(run('le_layout_i16_i32', [(x, 64)], [((x >> 0) & 0xffff, 16), ((x >> 16) & 0xffff, 16), ((x >> 32) & 0xffff, 16),
                                                    ((x >> 48) & 0xffff, 16), (x & 0xffffffff, 32), (x >> 32, 32)]))
out.append('')
# assemble an i64 from narrow stores
out += ['''function %assemble_i64_from_narrow_stores(i8, i16, i32, i8) -> i64 {
    ss0 = explicit_slot 8

block0(v0: i8, v1: i16, v2: i32, v3: i8):
    v4 = stack_addr.i64 ss0
    store v0, v4
    store v3, v4+1
    store v1, v4+2
    store v2, v4+4
    v5 = load.i64 v4
    return v5
}''']
for a, b_, c, d in [(0x11, 0x4433, 0x88776655, 0x22), (-1, -1, -1, -1), (0x80, 0x8000, 0x80000000, 0x7f), (0, 0, 0, 0)]:
    r = u(a, 8) | u(d, 8) << 8 | u(b_, 16) << 16 | u(c, 32) << 32
    out.append(run('assemble_i64_from_narrow_stores', [(a, 8), (b_, 16), (c, 32), (d, 8)], [(r, 64)]))
out.append('')
# slots do not overlap; each keeps its own value
out += ['''function %several_slots(i64, i32, i8, i16) -> i64, i32, i8, i16 {
    ss0 = explicit_slot 1
    ss1 = explicit_slot 8
    ss2 = explicit_slot 2
    ss3 = explicit_slot 4
    ss4 = explicit_slot 16, align = 16

block0(v0: i64, v1: i32, v2: i8, v3: i16):
    v4 = stack_addr.i64 ss0
    v5 = stack_addr.i64 ss1
    v6 = stack_addr.i64 ss2
    v7 = stack_addr.i64 ss3
    v8 = stack_addr.i64 ss4
    store v2, v4
    store v0, v5
    store v3, v6
    store v1, v7
    v9 = iconst.i64 -1
    store v9, v8
    store v9, v8+8
    v10 = load.i64 v5
    v11 = load.i32 v7
    v12 = load.i8 v4
    v13 = load.i16 v6
    return v10, v11, v12, v13
}''']
for a, b_, c, d in [(0x1122334455667788, 0x12345678, 0x5a, 0x1234), (0, 0, 0, 0), (-1, -1, -1, -1)]:
    out.append(run('several_slots', [(a, 64), (b_, 32), (c, 8), (d, 16)], [(a, 64), (b_, 32), (c, 8), (d, 16)]))
out.append('')
# a narrow value whose register holds bits above its width: a narrow store writes only its bytes
out += ['''function %narrow_store_of_wrapped_value(i8, i8, i16, i16) -> i64 {
    ss0 = explicit_slot 8

block0(v0: i8, v1: i8, v2: i16, v3: i16):
    v4 = stack_addr.i64 ss0
    v5 = iconst.i64 0
    store v5, v4
    v6 = iadd v0, v1
    store v6, v4+1
    v7 = iadd v2, v3
    store v7, v4+4
    v8 = load.i64 v4
    return v8
}''']
for a, b_, c, d in [(-1, 1, -1, 1), (-1, 2, -1, 2), (0x80, 0x80, 0x8000, 0x8000), (100, 100, 30000, 30000)]:
    r = u(a + b_, 8) << 8 | u(c + d, 16) << 32
    out.append(run('narrow_store_of_wrapped_value', [(a, 8), (b_, 8), (c, 16), (d, 16)], [(r, 64)]))
out.append('')
write('memory/stack_load_store.clif', '\n'.join(out))

# ------------------------------------------------------------------ narrow loads/stores
out = ['test run', '',
       ';; uload8/sload8/uload16/sload16/uload32/sload32 into i32 and i64 (zero or',
       ';; sign extension from the loaded width), istore8/16/32 from i32 and i64',
       ';; (only the low bytes are written; neighbouring bytes keep their value).', '']
for op, nb, signed in [('uload8', 1, False), ('sload8', 1, True), ('uload16', 2, False), ('sload16', 2, True),
                       ('uload32', 4, False), ('sload32', 4, True)]:
    for rt in ([32, 64] if nb < 4 else [64]):
        # (cranelift-interpreter 0.135 cannot run uload32/sload32 through an i32
        # address: it panics or gives an i32 result, so those use i64 addresses only)
        for at in (['i64', 'i32'] if nb < 4 else ['i64']):
            name = '%s_%s_addr_%s' % (op, TY[rt], at)
            out += ['''function %%%s(i64) -> %s, %s {
    ss0 = explicit_slot 16

block0(v0: i64):
    v1 = stack_addr.%s ss0
    store v0, v1
    store v0, v1+8
    v2 = %s.%s v1+%d
    v3 = %s.%s v1+%d
    return v2, v3
}''' % (name, TY[rt], TY[rt], at, op, TY[rt], 0, op, TY[rt], 8 - nb)]
            for x in [0x8877665544332211, 0x7f6f5f4f3f2f1f0f, 0xff00ff00ff00ff00, 0x00ff00ff00ff00ff, -1, 0x80000000_80008080]:
                bs = le_bytes(u(x, 64), 8)
                def val(off):
                    v = from_le(bs[off:off + nb])
                    return s(v, 8 * nb) if signed else v
                # second load at offset 8 - nb in the second copy (offset 8): bytes [8-nb .. 8) of the pattern
                out.append(run(name, [(x, 64)], [(val(0), rt), (val(8 - nb), rt)]))
            out.append('')
for op, nb in [('istore8', 1), ('istore16', 2), ('istore32', 4)]:
    for vt in ([32, 64] if nb < 4 else [64]):
        for at in ['i64', 'i32']:
            name = '%s_from_%s_addr_%s' % (op, TY[vt], at)
            out += ['''function %%%s(%s) -> i64, i64 {
    ss0 = explicit_slot 16

block0(v0: %s):
    v1 = stack_addr.%s ss0
    v2 = iconst.i64 0x1122_3344_5566_7788
    store v2, v1
    store v2, v1+8
    %s v0, v1
    %s v0, v1+%d
    v3 = load.i64 v1
    v4 = load.i64 v1+8
    return v3, v4
}''' % (name, TY[vt], TY[vt], at, op, op, 16 - nb)]
            P = 0x1122_3344_5566_7788
            for x in [0, -1, 0x1234_5678_9abc_def0 & mask(vt), 0x80, 0x8000_0001]:
                m = mask(8 * nb)
                r0 = (P & ~m) | (u(x, vt) & m)
                sh = 8 * (8 - nb)
                r1 = (P & ~(m << sh)) | ((u(x, vt) & m) << sh)
                out.append(run(name, [(x, vt)], [(r0, 64), (r1, 64)]))
            out.append('')
write('memory/narrow_load_store.clif', '\n'.join(out))

# ------------------------------------------------------------------ big endian
out = ['test run', '',
       ';; big-endian loads and stores: a big store read back little-endian gives the',
       ';; byte-reversed value, big/big round trips give the value back, and narrow',
       ';; big loads extend from the right (most significant) byte.', '']
def bswap(x, n):
    return from_le(list(reversed(le_bytes(u(x, 8 * n), n))))
for b in WIDTHS:
    t = TY[b]; n = b // 8
    name = 'store_big_load_little_' + t
    out += ['''function %%%s(%s) -> %s, %s {
    ss0 = explicit_slot 8

block0(v0: %s):
    v1 = stack_addr.i64 ss0
    store big v0, v1
    v2 = load.%s v1
    v3 = load.%s big v1
    return v2, v3
}''' % (name, t, t, t, t, t, t)]
    for x in [0x8877665544332211 & mask(b), 0x0102030405060708 & mask(b), -1, 0x80 , 1 << (b - 1)]:
        out.append(run(name, [(x, b)], [(bswap(x, n), b), (x, b)]))
    out.append('')
    name = 'store_little_load_big_' + t
    out += ['''function %%%s(%s) -> %s {
    ss0 = explicit_slot 8

block0(v0: %s):
    v1 = stack_addr.i32 ss0
    store v0, v1
    v2 = load.%s big v1
    return v2
}''' % (name, t, t, t, t)]
    for x in [0x8877665544332211 & mask(b), 0x80 , 1 << (b - 1), 0x7f]:
        out.append(run(name, [(x, b)], [(bswap(x, n), b)]))
    out.append('')
# narrow big loads
for op, nb, signed in [('uload8', 1, False), ('sload8', 1, True), ('uload16', 2, False), ('sload16', 2, True),
                       ('uload32', 4, False), ('sload32', 4, True)]:
    for rt in ([32, 64] if nb < 4 else [64]):
        name = '%s_big_%s' % (op, TY[rt])
        out += ['''function %%%s(i64) -> %s {
    ss0 = explicit_slot 8

block0(v0: i64):
    v1 = stack_addr.i64 ss0
    store big v0, v1
    v2 = %s.%s big v1
    return v2
}''' % (name, TY[rt], op, TY[rt])]
        for x in [0x8877665544332211, 0x0102030405060708, 0x7fff7fff7fff7fff, 0x80ff80ff80ff80ff]:
            # bytes in memory: big-endian of x: byte0 = top byte
            top = (u(x, 64) >> (64 - 8 * nb)) & mask(8 * nb)
            v = s(top, 8 * nb) if signed else top
            out.append(run(name, [(x, 64)], [(v, rt)]))
        out.append('')
# narrow big stores
for op, nb in [('istore8', 1), ('istore16', 2), ('istore32', 4)]:
    for vt in ([32, 64] if nb < 4 else [64]):
        name = '%s_big_from_%s' % (op, TY[vt])
        out += ['''function %%%s(%s) -> i64 {
    ss0 = explicit_slot 8

block0(v0: %s):
    v1 = stack_addr.i64 ss0
    v2 = iconst.i64 0
    store v2, v1
    %s big v0, v1
    v3 = load.i64 big v1
    return v3
}''' % (name, TY[vt], TY[vt], op)]
        for x in [0x11223344_55667788 & mask(vt), -1, 0x80, 0x1234]:
            low = u(x, vt) & mask(8 * nb)
            # memory bytes 0..nb-1 = big-endian of low; load.i64 big reads bytes 0..7 big-endian
            r = low << (64 - 8 * nb)
            out.append(run(name, [(x, vt)], [(r, 64)]))
        out.append('')
write('memory/big_endian.clif', '\n'.join(out))
