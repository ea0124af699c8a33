import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
from cmpdef import cmp, CCS

# ------------------------------------------------------------------ brif
out = ['test run', '',
       ';; brif on a value of every width: taken when any bit of the value is set',
       ';; (including only the high word of an i64), on narrow values computed by',
       ';; overflowing arithmetic (only the low bits count), and on fused icmp', ';; conditions.', '']
BV = {8: [0, 1, -1, -128, 0x10], 16: [0, 1, -1, -0x8000, 0x100], 32: [0, 1, -1, -0x80000000, 0x10000],
      64: [0, 1, -1, 0x1_00000000, 0x80000000_00000000, 0xffffffff, 0x80000000, 0xffffffff_00000000]}
for b in WIDTHS:
    t = TY[b]
    name = 'brif_' + t
    out += ['function %%%s(%s) -> i32 {' % (name, t), 'block0(v0: %s):' % t,
            '    brif v0, block1, block2', '', 'block1:', '    v1 = iconst.i32 1', '    return v1', '',
            'block2:', '    v2 = iconst.i32 0', '    return v2', '}']
    for x in BV[b]:
        out.append(run(name, [(x, b)], [(1 if u(x, b) else 0, 32)]))
    out.append('')
for b in [8, 16]:
    t = TY[b]
    name = 'brif_iadd_' + t
    out += ['function %%%s(%s, %s) -> i32 {' % (name, t, t), 'block0(v0: %s, v1: %s):' % (t, t),
            '    v2 = iadd v0, v1', '    brif v2, block1, block2', '', 'block1:', '    v3 = iconst.i32 1', '    return v3', '',
            'block2:', '    v4 = iconst.i32 0', '    return v4', '}']
    for x, y in [(mask(b), 1), (1, mask(b)), (smax(b), 1), (smin(b), smin(b)), (0, 0), (mask(b), 2)]:
        out.append(run(name, [(x, b), (y, b)], [(1 if u(x + y, b) else 0, 32)]))
    out.append('')
for fb, tb in [(32, 8), (32, 16), (64, 8), (64, 16), (64, 32)]:
    ft, tt = TY[fb], TY[tb]
    name = 'brif_ireduce_%s_%s' % (ft, tt)
    out += ['function %%%s(%s) -> i32 {' % (name, ft), 'block0(v0: %s):' % ft,
            '    v1 = ireduce.%s v0' % tt, '    brif v1, block1, block2', '', 'block1:', '    v3 = iconst.i32 1', '    return v3', '',
            'block2:', '    v4 = iconst.i32 0', '    return v4', '}']
    for x in [0x100, 0x10000, 0x1_00000000, 0x1, 0x80, 0x8000, 0x8000_0000, 0xffff_ff00, 0xffff_ffff_0000_0000]:
        if u(x, fb) != x: continue
        out.append(run(name, [(x, fb)], [(1 if u(x, tb) else 0, 32)]))
    out.append('')
# fused icmp
PAIRS = {8: [(-1, 1), (1, -1), (3, 3), (0x80, 0x7f)], 16: [(-1, 1), (1, -1), (3, 3), (0x8000, 0x7fff)],
         32: [(-1, 1), (1, -1), (3, 3), (0x80000000, 0x7fffffff)],
         64: [(-1, 1), (1, -1), (3, 3), (0x1_00000000, 0xffffffff), (0x1_00000001, 0x2_00000000), (0x5_00000000, 0x5_00000000)]}
for b in WIDTHS:
    t = TY[b]
    for cc in CCS:
        name = 'brif_icmp_%s_%s' % (cc, t)
        out += ['function %%%s(%s, %s) -> i32 {' % (name, t, t), 'block0(v0: %s, v1: %s):' % (t, t),
                '    v2 = icmp %s v0, v1' % cc, '    brif v2, block1, block2', '', 'block1:', '    v3 = iconst.i32 10', '    return v3', '',
                'block2:', '    v4 = iconst.i32 20', '    return v4', '}']
        for x, y in PAIRS[b]:
            out.append(run(name, [(x, b), (y, b)], [(10 if cmp(cc, x, y, b) else 20, 32)]))
        out.append('')
# icmp as a value then brif on the value (the i8 0/1)
out += ['function %brif_on_icmp_value_passed_through_block(i64, i64) -> i32 {',
        'block0(v0: i64, v1: i64):', '    v2 = icmp ugt v0, v1', '    jump block1(v2)', '',
        'block1(v3: i8):', '    brif v3, block2, block3', '',
        'block2:', '    v4 = iconst.i32 1', '    return v4', '', 'block3:', '    v5 = iconst.i32 0', '    return v5', '}']
for x, y in [(1, 0), (0, 1), (0x1_00000000, 0xffffffff), (0xffffffff, 0x1_00000000), (-1, 0)]:
    out.append(run('brif_on_icmp_value_passed_through_block', [(x, 64), (y, 64)], [(int(u(x, 64) > u(y, 64)), 32)]))
out.append('')
write('control/brif.clif', '\n'.join(out))

# ------------------------------------------------------------------ traps
out = ['test run', '',
       ';; trapz / trapnz whose trap is not taken (a taken trap cannot be a run', ';; test): the function goes on and returns its value.', '']
for b in WIDTHS:
    t = TY[b]
    name = 'trapz_not_taken_' + t
    out += ['function %%%s(%s) -> %s {' % (name, t, t), 'block0(v0: %s):' % t,
            '    trapz v0, user1', '    v1 = iconst.%s 1' % t, '    v2 = iadd v0, v1', '    return v2', '}']
    for x in BV[b]:
        if u(x, b) == 0: continue
        out.append(run(name, [(x, b)], [(x + 1, b)]))
    out.append('')
    name = 'trapnz_not_taken_' + t
    out += ['function %%%s(%s, %s) -> %s {' % (name, t, t, t), 'block0(v0: %s, v1: %s):' % (t, t),
            '    trapnz v0, user1', '    v2 = iadd v0, v1', '    return v2', '}']
    for y in [0, 5, -1]:
        out.append(run(name, [(0, b), (y, b)], [(y, b)]))
    out.append('')
for b in [8, 16]:
    t = TY[b]
    name = 'trapnz_iadd_wraps_to_zero_' + t
    out += ['function %%%s(%s, %s) -> i32 {' % (name, t, t), 'block0(v0: %s, v1: %s):' % (t, t),
            '    v2 = iadd v0, v1', '    trapnz v2, user1', '    v3 = iconst.i32 42', '    return v3', '}']
    for x, y in [(mask(b), 1), (1, mask(b)), (smin(b), smin(b)), (0, 0)]:
        out.append(run(name, [(x, b), (y, b)], [(42, 32)]))
    out.append('')
out += ['function %trapnz_ireduce_i64_i8(i64) -> i32 {', 'block0(v0: i64):', '    v1 = ireduce.i8 v0',
        '    trapnz v1, user1', '    v2 = iconst.i32 7', '    return v2', '}']
for x in [0x100, 0x1_0000_0000, 0xffff_ff00, 0]:
    out.append(run('trapnz_ireduce_i64_i8', [(x, 64)], [(7, 32)]))
out.append('')
for b in [8, 64]:
    t = TY[b]
    name = 'trap_bounds_check_' + t
    out += ['function %%%s(%s, %s) -> %s {' % (name, t, t, t), 'block0(v0: %s, v1: %s):' % (t, t),
            '    v2 = icmp uge v0, v1', '    trapnz v2, user1',
            '    v3 = icmp ult v0, v1', '    trapz v3, user2', '    return v0', '}']
    for x, y in [(0, 1), (5, 10), (-2, -1)] + ([(0xffffffff, 0x1_00000000), (0x1_00000000, 0x1_00000001)] if b == 64 else [(0x7f, 0x80)]):
        out.append(run(name, [(x, b), (y, b)], [(x, b)]))
    out.append('')
# `trap` as the terminator of a block that is not reached
out += ['''function %trap_block_not_reached(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2

block1:
    return v0

block2:
    trap user1
}''']
for x in [1, -1, 0x100]:
    out.append(run('trap_block_not_reached', [(x, 32)], [(x, 32)]))
out.append('')
write('control/traps.clif', '\n'.join(out))
