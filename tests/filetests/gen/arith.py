import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

def dedupe(ps, b):
    seen, out = set(), []
    for x in ps:
        k = tuple(u(v, b) for v in x)
        if k not in seen:
            seen.add(k); out.append(x)
    return out

def add_pairs(b):
    M, m = smax(b), smin(b)
    p = [(0, 0), (1, 2), (M, 1), (m, -1), (-1, 1), (-1, -1), (M, M), (m, m), (M, m),
         (m, 1), (-2, 1), (0x5a5a5a5a5a5a5a5a & mask(b), 0x3c3c3c3c3c3c3c3c & mask(b))]
    if b == 8:
        p += [(127, 1), (0xff, 1), (200, 100)]
    if b == 16:
        p += [(0x7fff, 1), (0xffff, 1), (40000, 30000)]
    if b == 32:
        p += [(0xffffffff, 1), (0x80000000, 0x80000000), (3000000000, 2000000000)]
    if b == 64:
        p += [(0xffffffff, 1), (0x1_ffffffff, 1), (0xffffffff, 0xffffffff), (0x80000000, 0x80000000),
              (0x7fffffff_ffffffff, 1), (0xffffffff_00000000, 0x1_00000000), (0x1_00000000, 0xffffffff),
              (0x12345678_9abcdef0, 0x0fedcba9_87654321), (0xffffffff_ffffffff, 0x1_00000000)]
    return p

def sub_pairs(b):
    M, m = smax(b), smin(b)
    p = [(0, 0), (5, 3), (3, 5), (0, 1), (m, 1), (M, -1), (-1, -1), (m, m), (M, m), (m, M), (5, 0), (0, m)]
    if b == 8:
        p += [(0, 0xff), (0x80, 0x7f), (100, 200)]
    if b == 16:
        p += [(0, 0xffff), (0x8000, 0x7fff)]
    if b == 32:
        p += [(0, 0xffffffff), (0x80000000, 1), (1000000000, 3000000000)]
    if b == 64:
        p += [(0x1_00000000, 1), (0x1_00000000, 0), (0, 0x1_00000000), (0x1_00000000, 0x1_00000000),
              (0x5_00000000, 0x2_00000001), (0x2_00000001, 0x5_00000000), (0xffffffff, 0xffffffff),
              (0x12345678_9abcdef0, 0x0fedcba9_87654321), (0x1_00000005, 5)]
    return p

def neg_vals(b):
    M, m = smax(b), smin(b)
    v = [0, 1, -1, M, m, m + 1, 2, 0x5a5a5a5a5a5a5a5a & mask(b)]
    if b == 64:
        v += [0xffffffff, 0x1_00000000, 0x1_00000001, 0xffffffff_00000000, 0x80000000]
    return v

# ---------------------------------------------------------------- iadd
out = ['test run', '',
       ';; iadd on every width: register-register, immediate (constant folded) and',
       ';; constant-on-the-left forms. Narrow results wrap at their own width; 64-bit',
       ';; sums carry from the low word into the high word.', '']
for b in WIDTHS:
    t = TY[b]
    out += ['function %%iadd_%s(%s, %s) -> %s {' % (t, t, t, t),
            'block0(v0: %s, v1: %s):' % (t, t),
            '    v2 = iadd v0, v1', '    return v2', '}']
    for x, y in dedupe(add_pairs(b), b):
        out.append(run('iadd_' + t, [(x, b), (y, b)], [(x + y, b)]))
    out.append('')
# immediate forms
imms = {8: [1, 127, -1], 16: [1, -1, 0x7fff], 32: [1, -1, 0x7fffffff, -0x80000000, 0x12345678],
        64: [1, -1, 0xffffffff, 0x1_00000000, 0x1_00000001, 0x7fffffff_ffffffff, -0x80000000, 0x12345678_9abcdef0]}
vals = {8: [0, 1, 127, -128, -1, 0x55], 16: [0, 1, 0x7fff, -0x8000, -1],
        32: [0, 1, 0x7fffffff, -0x80000000, -1, 0xedcba988],
        64: [0, 1, -1, 0xffffffff, 0x1_00000000, 0x7fffffff_ffffffff, -0x80000000_00000000, 0xedcba987_65432110]}
for b in WIDTHS:
    t = TY[b]
    for i, k in enumerate(imms[b]):
        name = 'iadd_imm%d_%s' % (i, t)
        out += ['function %%%s(%s) -> %s {' % (name, t, t),
                'block0(v0: %s):' % t,
                '    v1 = iconst.%s %s' % (t, fmt(k, b)),
                '    v2 = iadd v0, v1', '    return v2', '}']
        for x in vals[b]:
            out.append(run(name, [(x, b)], [(x + k, b)]))
        out.append('')
    # constant on the left
    k = {8: -2, 16: 1000, 32: -1000, 64: 0xffffffff}[b]
    name = 'iadd_imm_lhs_' + t
    out += ['function %%%s(%s) -> %s {' % (name, t, t),
            'block0(v0: %s):' % t,
            '    v1 = iconst.%s %s' % (t, fmt(k, b)),
            '    v2 = iadd v1, v0', '    return v2', '}']
    for x in vals[b]:
        out.append(run(name, [(x, b)], [(x + k, b)]))
    out.append('')
write('arith/iadd.clif', '\n'.join(out))

# ---------------------------------------------------------------- isub
out = ['test run', '',
       ';; isub on every width: register-register and constant subtrahend (folded',
       ';; into an add of the negated immediate for 32 bits and narrower). 64-bit',
       ';; differences borrow from the high word.', '']
for b in WIDTHS:
    t = TY[b]
    out += ['function %%isub_%s(%s, %s) -> %s {' % (t, t, t, t),
            'block0(v0: %s, v1: %s):' % (t, t),
            '    v2 = isub v0, v1', '    return v2', '}']
    for x, y in dedupe(sub_pairs(b), b):
        out.append(run('isub_' + t, [(x, b), (y, b)], [(x - y, b)]))
    out.append('')
simms = {8: [1, -128, 127], 16: [1, -0x8000], 32: [1, -1, -0x80000000, 0x7fffffff], 64: [1, -1, 0x1_00000000, 0xffffffff, -0x80000000_00000000]}
for b in WIDTHS:
    t = TY[b]
    for i, k in enumerate(simms[b]):
        name = 'isub_imm%d_%s' % (i, t)
        out += ['function %%%s(%s) -> %s {' % (name, t, t),
                'block0(v0: %s):' % t,
                '    v1 = iconst.%s %s' % (t, fmt(k, b)),
                '    v2 = isub v0, v1', '    return v2', '}']
        for x in vals[b]:
            out.append(run(name, [(x, b)], [(x - k, b)]))
        out.append('')
    # constant minus value
    k = {8: 0, 16: -1, 32: 0, 64: 0x1_00000000}[b]
    name = 'isub_from_imm_' + t
    out += ['function %%%s(%s) -> %s {' % (name, t, t),
            'block0(v0: %s):' % t,
            '    v1 = iconst.%s %s' % (t, fmt(k, b)),
            '    v2 = isub v1, v0', '    return v2', '}']
    for x in vals[b]:
        out.append(run(name, [(x, b)], [(k - x, b)]))
    out.append('')
write('arith/isub.clif', '\n'.join(out))

# ---------------------------------------------------------------- ineg
out = ['test run', '', ';; ineg on every width; -MIN == MIN.', '']
for b in WIDTHS:
    t = TY[b]
    out += ['function %%ineg_%s(%s) -> %s {' % (t, t, t),
            'block0(v0: %s):' % t,
            '    v1 = ineg v0', '    return v1', '}']
    for x in neg_vals(b):
        out.append(run('ineg_' + t, [(x, b)], [(-x, b)]))
    out.append('')
write('arith/ineg.clif', '\n'.join(out))

# ---------------------------------------------------------------- iconst
out = ['test run', '', ';; iconst of every width, returned directly.', '']
consts = {8: [0, 1, -1, 127, -128], 16: [0, -1, 0x7fff, -0x8000, 0x1234],
          32: [0, -1, 0x7fffffff, -0x80000000, 0x12345678],
          64: [0, -1, 0xffffffff, 0x1_00000000, 0x7fffffff_ffffffff, -0x80000000_00000000, 0x12345678_9abcdef0, 0xffffffff_00000000]}
for b in WIDTHS:
    t = TY[b]
    for i, k in enumerate(consts[b]):
        name = 'iconst%d_%s' % (i, t)
        out += ['function %%%s() -> %s {' % (name, t), 'block0:',
                '    v0 = iconst.%s %s' % (t, fmt(k, b)), '    return v0', '}',
                run(name, [], [(k, b)]), '']
write('arith/iconst.clif', '\n'.join(out))

# ---------------------------------------------------------------- chains
out = ['test run', '',
       ';; Chains of adds and subtracts whose intermediate narrow values overflow',
       ';; their width (the upper bits of the registers are then unspecified; only',
       ';; the low bits matter).', '']
for b in WIDTHS:
    t = TY[b]
    name = 'chain_' + t
    # ((a + b) - (c + d)) + (-a) + 7
    out += ['function %%%s(%s, %s, %s, %s) -> %s {' % (name, t, t, t, t, t),
            'block0(v0: %s, v1: %s, v2: %s, v3: %s):' % (t, t, t, t),
            '    v4 = iadd v0, v1', '    v5 = iadd v2, v3', '    v6 = isub v4, v5',
            '    v7 = ineg v0', '    v8 = iadd v6, v7',
            '    v9 = iconst.%s 7' % t, '    v10 = iadd v8, v9', '    return v10', '}']
    M, m = smax(b), smin(b)
    for a_, b_, c_, d_ in [(1, 2, 3, 4), (M, M, m, m), (-1, -1, -1, -1), (M, 1, 0, -1), (m, -1, M, 1),
                           (0x5a5a5a5a5a5a5a5a & mask(b), 0x7777777777777777 & mask(b), 0x1234567812345678 & mask(b), 0x3)]:
        out.append(run(name, [(a_, b), (b_, b), (c_, b), (d_, b)], [(a_ + b_ - (c_ + d_) - a_ + 7, b)]))
    out.append('')
# A 64-bit sum of many terms, carrying across 2^32 several times.
out += ['function %sum64_carries(i64) -> i64 {', 'block0(v0: i64):',
        '    v1 = iadd v0, v0', '    v2 = iadd v1, v1', '    v3 = iadd v2, v2', '    v4 = iadd v3, v0',
        '    v5 = isub v4, v1', '    return v5', '}']
for x in [0xffffffff, 0x80000000, 0x7fffffff_ffffffff, 0xdeadbeef_cafebabe, 1]:
    out.append(run('sum64_carries', [(x, 64)], [(8 * x + x - 2 * x, 64)]))
out.append('')
write('arith/chains.clif', '\n'.join(out))
