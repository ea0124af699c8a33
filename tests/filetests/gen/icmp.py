import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

CCS = ['eq', 'ne', 'slt', 'sle', 'sgt', 'sge', 'ult', 'ule', 'ugt', 'uge']

def cmp(cc, x, y, b):
    sx, sy, ux, uy = s(x, b), s(y, b), u(x, b), u(y, b)
    return int({'eq': ux == uy, 'ne': ux != uy, 'slt': sx < sy, 'sle': sx <= sy, 'sgt': sx > sy,
                'sge': sx >= sy, 'ult': ux < uy, 'ule': ux <= uy, 'ugt': ux > uy, 'uge': ux >= uy}[cc])

def pairs(b):
    M, m = smax(b), smin(b)
    p = [(0, 0), (1, 1), (-1, -1), (-1, 1), (1, -1), (m, M), (M, m), (m, 0), (0, m), (M, M - 1),
         (m, m + 1), (2, 1), (0, -1), (M, -1)]
    if b == 32:
        p += [(0x80000000, 0x7fffffff), (0xffffffff, 0xfffffffe)]
    if b == 64:
        p += [(0x1_00000000, 0xffffffff), (0xffffffff, 0x1_00000000),
              (0x1_00000005, 0x2_00000005), (0x2_00000005, 0x1_00000005),
              (0x1_00000005, 0x1_00000006), (0x1_00000006, 0x1_00000005),
              (0x80000000, 0x7fffffff), (0x7fffffff, 0x80000000),
              (0x1_80000000, 0x1_7fffffff), (0xffffffff_00000000, 0), (0, 0xffffffff_00000000),
              (0xffffffff_80000000, 0xffffffff_7fffffff), (0x80000000_00000000, 0x7fffffff_ffffffff),
              (0x12345678_00000000, 0x12345678_00000000), (0x00000001_ffffffff, 0x00000002_00000000)]
    return p

for b in WIDTHS:
    t = TY[b]
    out = ['test run', '',
           ';; icmp on %s, every condition code, as a value (1 or 0).' % t]
    if b < 32:
        out += [';; Narrow operands are extended before the 32-bit compare: sign-extended',
                ';; for the signed conditions, zero-extended otherwise (-1 vs 1 differ).']
    if b == 64:
        out += [';; The 64-bit compare is an unsigned compare of the low words chained into',
                ';; a compare of the high words: cases where the words disagree matter.']
    out.append('')
    for cc in CCS:
        name = 'icmp_%s_%s' % (cc, t)
        out += ['function %%%s(%s, %s) -> i8 {' % (name, t, t),
                'block0(v0: %s, v1: %s):' % (t, t),
                '    v2 = icmp %s v0, v1' % cc, '    return v2', '}']
        for x, y in pairs(b):
            out.append(run(name, [(x, b), (y, b)], [(cmp(cc, x, y, b), 8)]))
        out.append('')
    write('icmp/icmp_%s.clif' % t, '\n'.join(out))

# ---------------------------------------------------------------- immediates
out = ['test run', '',
       ';; icmp against a constant right-hand side (the ISETP immediate form for i32',
       ';; and i64, where the 64-bit constant is split into two 32-bit immediates).', '']
kvals = {8: [(-1, [0, 1, -1, -2, 127, -128]), (100, [99, 100, 101, -100, -1])],
         16: [(-1, [0, 1, -1, -2, 0x7fff, -0x8000]), (-0x8000, [0, -0x8000, 0x7fff, -1])],
         32: [(-1, [0, 1, -1, -2, 0x7fffffff, -0x80000000]), (0x7fffffff, [0, 0x7fffffff, -0x80000000, -1]),
              (5, [4, 5, 6, -5, 0x80000005])],
         64: [(0x1_00000000, [0xffffffff, 0x1_00000000, 0x1_00000001, -1, 0, 0x2_00000000, 0xffffffff_00000000]),
              (-3, [-4, -3, -2, 0, 0xfffffffd, 0x7fffffff_ffffffff]),
              (0xffffffff, [0xffffffff, 0x1_ffffffff, 0xfffffffe, 0, -1, 0xffffffff_ffffffff])]}
for b in WIDTHS:
    t = TY[b]
    for ki, (k, xs) in enumerate(kvals[b]):
        for cc in CCS:
            name = 'icmp_%s_imm%d_%s' % (cc, ki, t)
            out += ['function %%%s(%s) -> i8 {' % (name, t),
                    'block0(v0: %s):' % t,
                    '    v1 = iconst.%s %s' % (t, fmt(k, b)),
                    '    v2 = icmp %s v0, v1' % cc, '    return v2', '}']
            for x in xs:
                out.append(run(name, [(x, b)], [(cmp(cc, x, k, b), 8)]))
            out.append('')
write('icmp/icmp_imm.clif', '\n'.join(out))

# ---------------------------------------------------------------- narrow operands computed by arithmetic
out = ['test run', '',
       ';; Narrow operands whose registers hold bits above the type width: results',
       ';; of iadd/isub/ineg that overflow i8/i16, and ireduce of wider values. Only',
       ';; the low 8/16 bits are the value, so the compare must extend them first.', '']
for b in [8, 16]:
    t = TY[b]
    for cc in CCS:
        # (x + y) cc z
        name = 'icmp_%s_after_iadd_%s' % (cc, t)
        out += ['function %%%s(%s, %s, %s) -> i8 {' % (name, t, t, t),
                'block0(v0: %s, v1: %s, v2: %s):' % (t, t, t),
                '    v3 = iadd v0, v1', '    v4 = icmp %s v3, v2' % cc, '    return v4', '}']
        M = mask(b)
        cases = [(M, 1, 0), (M, 1, 1), (smax(b), 1, 0), (smax(b), 1, smin(b)), (M, M, M - 1), (M, M, 1),
                 (smin(b), smin(b), 0), (M, 2, 1), (5, 6, 11)]
        for x, y, z in cases:
            out.append(run(name, [(x, b), (y, b), (z, b)], [(cmp(cc, x + y, z, b), 8)]))
        out.append('')
        # z cc (0 - x): the subtrahend side computed
        name = 'icmp_%s_rhs_isub_%s' % (cc, t)
        out += ['function %%%s(%s, %s) -> i8 {' % (name, t, t),
                'block0(v0: %s, v1: %s):' % (t, t),
                '    v2 = iconst.%s 0' % t, '    v3 = isub v2, v1',
                '    v4 = icmp %s v0, v3' % cc, '    return v4', '}']
        for x, y in [(M, 1), (1, M), (smax(b), 1), (0, smin(b)), (smin(b), smin(b)), (1, 1), (0, 0), (M - 1, 2)]:
            out.append(run(name, [(x, b), (y, b)], [(cmp(cc, x, -y, b), 8)]))
        out.append('')
    # ineg in both operands
    name = 'icmp_ult_ineg_both_%s' % t
    out += ['function %%%s(%s, %s) -> i8 {' % (name, t, t),
            'block0(v0: %s, v1: %s):' % (t, t),
            '    v2 = ineg v0', '    v3 = ineg v1', '    v4 = icmp ult v2, v3', '    return v4', '}']
    for x, y in [(1, 2), (2, 1), (0, 1), (1, 0), (smin(b), 1), (1, smin(b))]:
        out.append(run(name, [(x, b), (y, b)], [(cmp('ult', -x, -y, b), 8)]))
    out.append('')
# ireduce of a wider value: the register keeps the wide bits
for (fb, tb) in [(32, 8), (32, 16), (16, 8), (64, 8), (64, 16)]:
    ft, tt = TY[fb], TY[tb]
    for cc in ['eq', 'ne', 'slt', 'ult', 'sge', 'ugt']:
        name = 'icmp_%s_ireduce_%s_%s' % (cc, ft, tt)
        out += ['function %%%s(%s, %s) -> i8 {' % (name, ft, ft),
                'block0(v0: %s, v1: %s):' % (ft, ft),
                '    v2 = ireduce.%s v0' % tt, '    v3 = ireduce.%s v1' % tt,
                '    v4 = icmp %s v2, v3' % cc, '    return v4', '}']
        cases = [(0x100, 0), (0x1ff, 0xff), (0x17f, 0x80), (0xff80, 0x7f), (0x1234_5680, 0x1), (0x10000, 0xffff),
                 (0x2_0001, 1), (0xabcd_ffff, 0xffff_ffff)]
        for x, y in cases:
            out.append(run(name, [(x, fb), (y, fb)], [(cmp(cc, x, y, tb), 8)]))
        out.append('')
write('icmp/icmp_narrow_upper_bits.clif', '\n'.join(out))
