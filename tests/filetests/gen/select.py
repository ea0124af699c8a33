import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cmpdef import cmp, CCS

AV = {8: (0x5a, -0x80), 16: (0x1234, -0x7ff0), 32: (0x12345678, -0x6543210f), 64: (0x1_0000_0002, 0xffffffff_00000003)}
CONDS = {8: [0, 1, -1, -128, 2], 16: [0, 1, -1, -0x8000, 0x100], 32: [0, 1, -1, -0x80000000, 0x10000],
         64: [0, 1, -1, 0x1_00000000, 0x80000000_00000000, 0xffffffff, 0x80000000]}

out = ['test run', '',
       ';; select on every value width with a condition of every width: the second',
       ';; operand where the condition is nonzero (in any bit of its width, including',
       ';; only the high word of an i64), the third where it is zero.', '']
for vb in WIDTHS:
    for cb in WIDTHS:
        vt, ct = TY[vb], TY[cb]
        name = 'select_%s_cond_%s' % (vt, ct)
        out += ['function %%%s(%s, %s, %s) -> %s {' % (name, ct, vt, vt, vt),
                'block0(v0: %s, v1: %s, v2: %s):' % (ct, vt, vt),
                '    v3 = select v0, v1, v2', '    return v3', '}']
        a, b = AV[vb]
        for c in CONDS[cb]:
            out.append(run(name, [(c, cb), (a, vb), (b, vb)], [(a if u(c, cb) else b, vb)]))
        out.append('')
write('select/select.clif', '\n'.join(out))

out = ['test run', '',
       ';; select_spectre_guard: the same selection as select, on every width.', '']
for vb in WIDTHS:
    for cb in [8, 32, 64]:
        vt, ct = TY[vb], TY[cb]
        name = 'spectre_guard_%s_cond_%s' % (vt, ct)
        out += ['function %%%s(%s, %s, %s) -> %s {' % (name, ct, vt, vt, vt),
                'block0(v0: %s, v1: %s, v2: %s):' % (ct, vt, vt),
                '    v3 = select_spectre_guard v0, v1, v2', '    return v3', '}']
        a, b = AV[vb]
        for c in CONDS[cb]:
            out.append(run(name, [(c, cb), (a, vb), (b, vb)], [(a if u(c, cb) else b, vb)]))
        out.append('')
# the usual bounds-check pattern: index < bound ? index : 0
for b in [32, 64]:
    t = TY[b]
    name = 'spectre_guard_bounds_%s' % t
    out += ['function %%%s(%s, %s) -> %s {' % (name, t, t, t),
            'block0(v0: %s, v1: %s):' % (t, t),
            '    v2 = icmp uge v0, v1',
            '    v3 = iconst.%s 0' % t,
            '    v4 = select_spectre_guard v2, v3, v0', '    return v4', '}']
    for x, bound in [(0, 10), (9, 10), (10, 10), (11, 10), (-1, 10), (5, 0)] + ([(0x1_00000000, 10), (3, 0x1_00000000)] if b == 64 else []):
        out.append(run(name, [(x, b), (bound, b)], [(0 if u(x, b) >= u(bound, b) else x, b)]))
    out.append('')
write('select/select_spectre_guard.clif', '\n'.join(out))

out = ['test run', '',
       ';; select with a constant operand (the SEL immediate form for the third', ';; operand) on every width.', '']
KS = {8: -3, 16: 0x7abc, 32: 0x7fffffff, 64: 0x1_2345_6789}
for vb in WIDTHS:
    vt = TY[vb]
    k = KS[vb]
    a, _ = AV[vb]
    for pos in ['else', 'then']:
        name = 'select_const_%s_%s' % (pos, vt)
        ops = 'v0, v1, v2' if pos == 'else' else 'v0, v2, v1'
        out += ['function %%%s(i32, %s) -> %s {' % (name, vt, vt),
                'block0(v0: i32, v1: %s):' % vt,
                '    v2 = iconst.%s %s' % (vt, fmt(k, vb)),
                '    v3 = select %s' % ops, '    return v3', '}']
        for c in [0, 1, -1]:
            if pos == 'else':
                r = a if c else k
            else:
                r = k if c else a
            out.append(run(name, [(c, 32), (a, vb)], [(r, vb)]))
        out.append('')
# both constant
for vb in WIDTHS:
    vt = TY[vb]
    name = 'select_both_const_%s' % vt
    out += ['function %%%s(i8) -> %s {' % (name, vt), 'block0(v0: i8):',
            '    v1 = iconst.%s 11' % vt, '    v2 = iconst.%s -22' % vt,
            '    v3 = select v0, v1, v2', '    return v3', '}']
    for c in [0, 1, -1, 0x80]:
        out.append(run(name, [(c, 8)], [(11 if u(c, 8) else -22, vb)]))
    out.append('')
write('select/select_const.clif', '\n'.join(out))

out = ['test run', '',
       ';; select on an icmp condition: the comparison stays in its predicate. Every',
       ';; compare width with every value width, and every condition code on i32 and i64.', '']
CPAIRS = {8: [(-1, 1), (1, -1), (5, 5), (0x80, 0x7f)], 16: [(-1, 1), (1, -1), (5, 5), (0x8000, 0x7fff)],
          32: [(-1, 1), (1, -1), (5, 5), (0x80000000, 0x7fffffff)],
          64: [(-1, 1), (1, -1), (5, 5), (0x1_00000000, 0xffffffff), (0x1_00000001, 0x2_00000000), (0x80000000_00000000, 0)]}
for cb in WIDTHS:
    for vb in WIDTHS:
        ct, vt = TY[cb], TY[vb]
        ccs = CCS if cb in (32, 64) and vb == cb else ['slt', 'ult']
        for cc in ccs:
            name = 'select_icmp_%s_%s_%s' % (cc, ct, vt)
            out += ['function %%%s(%s, %s, %s, %s) -> %s {' % (name, ct, ct, vt, vt, vt),
                    'block0(v0: %s, v1: %s, v2: %s, v3: %s):' % (ct, ct, vt, vt),
                    '    v4 = icmp %s v0, v1' % cc, '    v5 = select v4, v2, v3', '    return v5', '}']
            a, b = AV[vb]
            for x, y in CPAIRS[cb]:
                out.append(run(name, [(x, cb), (y, cb), (a, vb), (b, vb)], [(a if cmp(cc, x, y, cb) else b, vb)]))
            out.append('')
# icmp against a constant fused into select
for cb in [32, 64]:
    ct = TY[cb]
    name = 'select_icmp_imm_sgt_%s' % ct
    out += ['function %%%s(%s, i32, i32) -> i32 {' % (name, ct), 'block0(v0: %s, v1: i32, v2: i32):' % ct,
            '    v3 = iconst.%s -5' % ct, '    v4 = icmp sgt v0, v3', '    v5 = select v4, v1, v2', '    return v5', '}']
    for x in [-6, -5, -4, 0, smin(cb), smax(cb)] + ([0xfffffffb, 0xffffffff_00000000] if cb == 64 else []):
        out.append(run(name, [(x, cb), (100, 32), (200, 32)], [(100 if s(x, cb) > -5 else 200, 32)]))
    out.append('')
# one icmp used by two selects and as a value
out += ['function %select_icmp_shared(i64, i64, i32, i32) -> i32, i64, i8 {',
        'block0(v0: i64, v1: i64, v2: i32, v3: i32):',
        '    v4 = icmp ult v0, v1', '    v5 = select v4, v2, v3', '    v6 = select v4, v1, v0', '    return v5, v6, v4', '}']
for x, y in [(1, 2), (2, 1), (0x1_00000000, 0xffffffff), (0xffffffff, 0x1_00000000), (7, 7)]:
    c = u(x, 64) < u(y, 64)
    out.append(run('select_icmp_shared', [(x, 64), (y, 64), (10, 32), (20, 32)], [(10 if c else 20, 32), (y if c else x, 64), (int(c), 8)]))
out.append('')
# min/max via select
for cb in WIDTHS:
    ct = TY[cb]
    name = 'smax_%s' % ct
    out += ['function %%%s(%s, %s) -> %s {' % (name, ct, ct, ct), 'block0(v0: %s, v1: %s):' % (ct, ct),
            '    v2 = icmp sgt v0, v1', '    v3 = select v2, v0, v1', '    return v3', '}']
    for x, y in [(-1, 1), (1, -1), (smin(cb), smax(cb)), (smax(cb), smin(cb)), (0, 0)]:
        out.append(run(name, [(x, cb), (y, cb)], [(max(s(x, cb), s(y, cb)), cb)]))
    out.append('')
    name = 'umin_%s' % ct
    out += ['function %%%s(%s, %s) -> %s {' % (name, ct, ct, ct), 'block0(v0: %s, v1: %s):' % (ct, ct),
            '    v2 = icmp ult v0, v1', '    v3 = select v2, v0, v1', '    return v3', '}']
    for x, y in [(-1, 1), (1, -1), (smin(cb), smax(cb)), (smax(cb), smin(cb)), (0, 0)]:
        out.append(run(name, [(x, cb), (y, cb)], [(min(u(x, cb), u(y, cb)), cb)]))
    out.append('')
write('select/select_icmp.clif', '\n'.join(out))

out = ['test run', '',
       ';; Narrow conditions whose registers hold bits above the type width (results',
       ';; of overflowing iadd/isub, ireduce of a wider value): only the low bits of',
       ';; the condition decide, so e.g. an i8 condition computed as 255 + 1 is false.', '']
for cb in [8, 16]:
    ct = TY[cb]
    for vb in [32, 64]:
        vt = TY[vb]
        name = 'select_%s_cond_iadd_%s' % (vt, ct)
        out += ['function %%%s(%s, %s, %s, %s) -> %s {' % (name, ct, ct, vt, vt, vt),
                'block0(v0: %s, v1: %s, v2: %s, v3: %s):' % (ct, ct, vt, vt),
                '    v4 = iadd v0, v1', '    v5 = select v4, v2, v3', '    return v5', '}']
        a, b = AV[vb]
        for x, y in [(mask(cb), 1), (1, mask(cb)), (smax(cb), 1), (smin(cb), smin(cb)), (0, 0), (mask(cb), 2), (3, 4)]:
            out.append(run(name, [(x, cb), (y, cb), (a, vb), (b, vb)], [(a if u(x + y, cb) else b, vb)]))
        out.append('')
for (fb, tb) in [(32, 8), (32, 16), (64, 8), (64, 32)]:
    ft, tt = TY[fb], TY[tb]
    name = 'select_cond_ireduce_%s_%s' % (ft, tt)
    out += ['function %%%s(%s, i32, i32) -> i32 {' % (name, ft), 'block0(v0: %s, v1: i32, v2: i32):' % ft,
            '    v3 = ireduce.%s v0' % tt, '    v4 = select_spectre_guard v3, v1, v2', '    return v4', '}']
    for x in [0x100, 0x10000, 0x1_00000000, 0x101, 0xff00, 0xabcd_0000_0000_0000 & mask(fb), 1, 0]:
        out.append(run(name, [(x, fb), (1, 32), (2, 32)], [(1 if u(x, tb) else 2, 32)]))
    out.append('')
write('select/select_narrow_cond.clif', '\n'.join(out))
