import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

out = ['test run', '',
       ';; Direct calls between functions of this file: arguments and results of',
       ';; every width (up to the 8 register slots), the same value passed twice,',
       ';; call chains, calls inside branches and loops, narrow values crossing the',
       ';; call boundary with unspecified upper bits.', '']
out += ['''function %add3_i32(i32, i32, i32) -> i32 {
block0(v0: i32, v1: i32, v2: i32):
    v3 = iadd v0, v1
    v4 = iadd v3, v2
    return v4
}

function %call_add3(i32, i32) -> i32 {
    fn0 = %add3_i32(i32, i32, i32) -> i32

block0(v0: i32, v1: i32):
    v2 = iconst.i32 100
    v3 = call fn0(v1, v2, v0)
    v4 = isub v3, v0
    return v4
}''']
for x, y in [(1, 2), (-1, -1), (0x7fffffff, 1), (0, 0)]:
    out.append(run('call_add3', [(x, 32), (y, 32)], [(y + 100, 32)]))
out.append('')
# mixed widths in and out
MIXED_CALLEE = '''function %mixed_callee(i8, i16, i32, i64) -> i64, i32, i16, i8 {
block0(v0: i8, v1: i16, v2: i32, v3: i64):
    v4 = sextend.i64 v0
    v5 = iadd v3, v4
    v6 = uextend.i32 v1
    v7 = iadd v2, v6
    v8 = sextend.i16 v0
    v9 = isub v1, v8
    v10 = ireduce.i8 v3
    return v5, v7, v9, v10
}'''
MIXED_CALLER = '''function %mixed_caller(i8, i16, i32, i64) -> i64, i32, i16, i8 {
    fn0 = %mixed_callee(i8, i16, i32, i64) -> i64, i32, i16, i8

block0(v0: i8, v1: i16, v2: i32, v3: i64):
    v4, v5, v6, v7 = call fn0(v0, v1, v2, v3)
    return v4, v5, v6, v7
}'''
MIXED_ARGS = [(1, 2, 3, 4), (-1, -1, -1, -1), (-128, 0x7fff, 0x7fffffff, 0xffffffff), (127, -0x8000, -0x80000000, 0x1_0000_0080),
              (0x55, 0x1234, 0x12345678, 0x12345678_9abcdef0)]
for fn, text in [('mixed_callee', MIXED_CALLEE), ('mixed_caller', MIXED_CALLER)]:
    out.append(text)
    for a, b_, c, d in MIXED_ARGS:
        r = [(d + s(a, 8), 64), (c + u(b_, 16), 32), (b_ - s(a, 8), 16), (d, 8)]
        out.append(run(fn, [(a, 8), (b_, 16), (c, 32), (d, 64)], r))
    out.append('')
# 8 arguments, 8 results (the register maximum), mixed widths: rotate and add the index
tys = [8, 64, 16, 32, 64, 8, 32, 64]
sig = ', '.join(TY[b] for b in tys)
params = ', '.join('v%d: %s' % (i, TY[b]) for i, b in enumerate(tys))
body = []
for i, b in enumerate(tys):
    # result i: argument (i+1)%8 if same type, else argument i + (i+1)
    body.append('    v%d = iconst.%s %d' % (20 + i, TY[b], i + 1))
    body.append('    v%d = iadd v%d, v%d' % (30 + i, i, 20 + i))
rets = ', '.join('v%d' % (30 + i) for i in range(8))
out += ['function %%eight_callee(%s) -> %s {' % (sig, sig), 'block0(%s):' % params] + body + ['    return %s' % rets, '}']
EIGHT_ARGS = [(1, 2, 3, 4, 5, 6, 7, 8), (0xffffffff, -1, -1, -1, 0x1_ffffffff, 127, 0x7fffffff, -1),
              (0x12345678_9abcdef0, 0x1_0000_0000, 0x7fff, -0x80000000, -5, -128, -8, 0x7f)]
for v in EIGHT_ARGS:
    ca = [(v[7], 8), (v[1], 64), (v[2], 16), (v[3], 32), (v[4], 64), (v[5], 8), (v[6], 32), (v[0], 64)]
    out.append(run('eight_callee', ca, [(x + i + 1, b) for i, (x, b) in enumerate(ca)]))
out.append('')
caller_tys = [64, 64, 16, 32, 64, 8, 32, 8]
csig = ', '.join(TY[b] for b in caller_tys)
cret = ', '.join(TY[b] for b in reversed(tys))
out += ['function %%eight_caller(%s) -> %s {' % (csig, cret),
        '    fn0 = %%eight_callee(%s) -> %s' % (sig, sig), '',
        'block0(%s):' % ', '.join('v%d: %s' % (i, TY[b]) for i, b in enumerate(caller_tys)),
        '    v10, v11, v12, v13, v14, v15, v16, v17 = call fn0(v7, v1, v2, v3, v4, v5, v6, v0)',
        '    return v17, v16, v15, v14, v13, v12, v11, v10', '}']
# caller args: v0:i64, v1:i64, v2:i16, v3:i32, v4:i64, v5:i8, v6:i32, v7:i8
# call fn0(v7:i8, v1:i64, v2:i16, v3:i32, v4:i64, v5:i8, v6:i32, v0:i64) matches callee sig
# callee returns arg_i + (i+1): r0 = v7+1 (i8), r1 = v1+2 (i64), r2 = v2+3 (i16), r3 = v3+4 (i32), r4 = v4+5 (i64), r5 = v5+6 (i8), r6 = v6+7 (i32), r7 = v0+8 (i64)
# caller returns reversed: r7(i64), r6(i32), r5(i8), r4(i64), r3(i32), r2(i16), r1(i64), r0(i8)
for args in [(1, 2, 3, 4, 5, 6, 7, 8), (0xffffffff, -1, -1, -1, 0x1_ffffffff, 127, 0x7fffffff, -1),
             (0x12345678_9abcdef0, 0x1_0000_0000, 0x7fff, -0x80000000, -5, -128, -8, 0x7f)]:
    v = args
    caller_tys = [64, 64, 16, 32, 64, 8, 32, 8]
    r = [(v[0] + 8, 64), (v[6] + 7, 32), (v[5] + 6, 8), (v[4] + 5, 64), (v[3] + 4, 32), (v[2] + 3, 16), (v[1] + 2, 64), (v[7] + 1, 8)]
    out.append(run('eight_caller', list(zip(v, caller_tys)), r))
out.append('')
# same value passed twice and in different slots
out += ['''function %sub_i64(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = isub v0, v1
    return v2
}

function %call_same_value_twice(i64, i64) -> i64 {
    fn0 = %sub_i64(i64, i64) -> i64

block0(v0: i64, v1: i64):
    v2 = call fn0(v0, v0)
    v3 = call fn0(v1, v0)
    v4 = call fn0(v3, v2)
    return v4
}''']
for x, y in [(1, 2), (0x1_0000_0000, 1), (-1, 0x7fffffff_ffffffff)]:
    out.append(run('call_same_value_twice', [(x, 64), (y, 64)], [(y - x, 64)]))
out.append('')
# chain of three
out += ['''function %chain_c(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0x1_0000_0001
    v2 = iadd v0, v1
    return v2
}

function %chain_b(i64, i32) -> i64 {
    fn0 = %chain_c(i64) -> i64

block0(v0: i64, v1: i32):
    v2 = call fn0(v0)
    v3 = sextend.i64 v1
    v4 = iadd v2, v3
    v5 = call fn0(v4)
    return v5
}

function %chain_a(i32) -> i64 {
    fn0 = %chain_b(i64, i32) -> i64

block0(v0: i32):
    v1 = uextend.i64 v0
    v2 = call fn0(v1, v0)
    return v2
}''']
for x in [0, 1, -1, 0x7fffffff, -0x80000000]:
    out.append(run('chain_a', [(x, 32)], [(u(x, 32) + 2 * 0x1_0000_0001 + s(x, 32), 64)]))
out.append('')
# narrow result with unspecified upper bits from the callee, compared by the caller
out += ['''function %add_i8(i8, i8) -> i8 {
block0(v0: i8, v1: i8):
    v2 = iadd v0, v1
    return v2
}

function %caller_compares_narrow_result(i8, i8) -> i32 {
    fn0 = %add_i8(i8, i8) -> i8

block0(v0: i8, v1: i8):
    v2 = call fn0(v0, v1)
    v3 = iconst.i8 0
    v4 = icmp eq v2, v3
    v5 = uextend.i32 v2
    v6 = uextend.i32 v4
    v7 = iconst.i32 1000
    v8 = iadd v5, v7
    v9 = select v4, v7, v8
    return v9
}''']
for x, y in [(-1, 1), (1, 2), (-128, -128), (127, 1), (0, 0)]:
    z = u(x + y, 8)
    out.append(run('caller_compares_narrow_result', [(x, 8), (y, 8)], [(1000 if z == 0 else z + 1000, 32)]))
out.append('')
# narrow argument with unspecified upper bits passed to the callee, which compares/extends it
out += ['''function %narrow_arg_callee(i16, i8) -> i64 {
block0(v0: i16, v1: i8):
    v2 = iconst.i16 0
    v3 = icmp slt v0, v2
    v4 = uextend.i64 v1
    v5 = sextend.i64 v0
    v6 = iadd v4, v5
    v7 = iconst.i64 0x100_0000_0000
    v8 = iadd v6, v7
    v9 = select v3, v8, v6
    return v9
}

function %narrow_arg_caller(i16, i16, i8, i8) -> i64 {
    fn0 = %narrow_arg_callee(i16, i8) -> i64

block0(v0: i16, v1: i16, v2: i8, v3: i8):
    v4 = iadd v0, v1
    v5 = isub v2, v3
    v6 = call fn0(v4, v5)
    return v6
}''']
for a, b_, c, d in [(0x7fff, 1, 0, 1), (-1, 1, 5, 6), (0x8000, 0x8000, -128, 1), (100, 200, 10, 3)]:
    v4 = s(a + b_, 16); v5 = u(c - d, 8)
    r = v5 + v4 + (0x100_0000_0000 if v4 < 0 else 0)
    out.append(run('narrow_arg_caller', [(a, 16), (b_, 16), (c, 8), (d, 8)], [(r, 64)]))
out.append('')
# no arguments, no results
out += ['''function %nothing() {
block0:
    return
}

function %call_nothing(i64) -> i64 {
    fn0 = %nothing()

block0(v0: i64):
    call fn0()
    call fn0()
    return v0
}''']
for x in [0, -1, 0x1234_5678_9abc_def0]:
    out.append(run('call_nothing', [(x, 64)], [(x, 64)]))
out.append('')
# calls in both arms of a branch and inside a loop
out += ['''function %call_in_branches(i32, i64) -> i64 {
    fn0 = %chain_c(i64) -> i64
    fn1 = %sub_i64(i64, i64) -> i64

block0(v0: i32, v1: i64):
    brif v0, block1, block2

block1:
    v2 = call fn0(v1)
    jump block3(v2)

block2:
    v3 = iconst.i64 1
    v4 = call fn1(v1, v3)
    jump block3(v4)

block3(v5: i64):
    return v5
}''']
for c, x in [(1, 5), (0, 5), (1, 0xffffffff), (0, 0x1_0000_0000)]:
    out.append(run('call_in_branches', [(c, 32), (x, 64)], [(x + 0x1_0000_0001 if c else x - 1, 64)]))
out.append('')
out += ['''function %call_in_loop(i32, i64) -> i64 {
    fn0 = %chain_c(i64) -> i64

block0(v0: i32, v1: i64):
    jump block1(v0, v1)

block1(v2: i32, v3: i64):
    brif v2, block2, block3

block2:
    v4 = call fn0(v3)
    v5 = iconst.i32 -1
    v6 = iadd v2, v5
    jump block1(v6, v4)

block3:
    return v3
}''']
for n, x in [(0, 7), (1, 7), (10, 7), (100, -1)]:
    out.append(run('call_in_loop', [(n, 32), (x, 64)], [(x + n * 0x1_0000_0001, 64)]))
out.append('')
# identity callees: the callee's first instruction is its return
out += ['''function %id_i64(i64) -> i64 {
block0(v0: i64):
    return v0
}

function %call_id_keep_arg(i64) -> i64 {
    fn0 = %id_i64(i64) -> i64

block0(v0: i64):
    v1 = call fn0(v0)
    v2 = iadd v1, v0
    return v2
}''']
for x in [1, 0x8000_0000, -1]:
    out.append(run('call_id_keep_arg', [(x, 64)], [(2 * x, 64)]))
out.append('')
# the same value in several result slots; swapped arguments and results
out += ['''function %ret_same_twice(i64, i32) -> i64, i64, i32, i32 {
block0(v0: i64, v1: i32):
    return v0, v0, v1, v1
}''']
for x, y in [(0x1_0000_0002, 7), (-1, -1)]:
    out.append(run('ret_same_twice', [(x, 64), (y, 32)], [(x, 64), (x, 64), (y, 32), (y, 32)]))
out.append('')
out += ['''function %ret_swapped(i64, i64) -> i64, i64 {
block0(v0: i64, v1: i64):
    return v1, v0
}''']
out.append(run('ret_swapped', [(1, 64), (2, 64)], [(2, 64), (1, 64)]))
out.append('')
out += ['''function %call_swapped_twice(i64, i64, i64) -> i64, i64, i64 {
    fn0 = %ret_swapped(i64, i64) -> i64, i64

block0(v0: i64, v1: i64, v2: i64):
    v3, v4 = call fn0(v1, v0)
    v5, v6 = call fn0(v4, v2)
    return v5, v6, v3
}''']
# v3, v4 = (v0, v1); v5, v6 = (v2, v4) = (v2, v1)
for x, y, z in [(1, 2, 3), (0x1_0000_0000, -1, 0xffff_ffff)]:
    out.append(run('call_swapped_twice', [(x, 64), (y, 64), (z, 64)], [(z, 64), (y, 64), (x, 64)]))
out.append('')
write('control/calls.clif', '\n'.join(out))
