import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

out = ['test run', '',
       ';; call_indirect through addresses from func_addr: a fixed callee, a callee',
       ';; chosen by select, a function pointer passed as an argument (and called by',
       ';; the receiving function), mixed-width signatures.', '']
out += ['''function %ind_add(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iadd v0, v1
    return v2
}
; run: %ind_add(1, 2) == 3

function %ind_sub(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = isub v0, v1
    return v2
}
; run: %ind_sub(1, 2) == -1

function %call_indirect_fixed(i64, i64) -> i64 {
    sig0 = (i64, i64) -> i64
    fn0 = %ind_add(i64, i64) -> i64

block0(v0: i64, v1: i64):
    v2 = func_addr.i64 fn0
    v3 = call_indirect sig0, v2(v0, v1)
    return v3
}''']
for x, y in [(1, 2), (0xffffffff, 1), (-1, -1)]:
    out.append(run('call_indirect_fixed', [(x, 64), (y, 64)], [(x + y, 64)]))
out.append('')
out += ['''function %call_indirect_selected(i32, i64, i64) -> i64 {
    sig0 = (i64, i64) -> i64
    fn0 = %ind_add(i64, i64) -> i64
    fn1 = %ind_sub(i64, i64) -> i64

block0(v0: i32, v1: i64, v2: i64):
    v3 = func_addr.i64 fn0
    v4 = func_addr.i64 fn1
    v5 = select v0, v3, v4
    v6 = call_indirect sig0, v5(v1, v2)
    return v6
}''']
for c, x, y in [(1, 10, 3), (0, 10, 3), (-1, 0x1_0000_0000, 1), (0, 0x1_0000_0000, 1)]:
    out.append(run('call_indirect_selected', [(c, 32), (x, 64), (y, 64)], [(x + y if c else x - y, 64)]))
out.append('')
out += ['''function %apply_twice(i64, i64, i64) -> i64 {
    sig0 = (i64, i64) -> i64

block0(v0: i64, v1: i64, v2: i64):
    v3 = call_indirect sig0, v0(v1, v2)
    v4 = call_indirect sig0, v0(v3, v2)
    return v4
}

function %pass_function_pointer(i32, i64, i64) -> i64 {
    fn0 = %ind_add(i64, i64) -> i64
    fn1 = %ind_sub(i64, i64) -> i64
    fn2 = %apply_twice(i64, i64, i64) -> i64

block0(v0: i32, v1: i64, v2: i64):
    brif v0, block1, block2

block1:
    v3 = func_addr.i64 fn0
    jump block3(v3)

block2:
    v4 = func_addr.i64 fn1
    jump block3(v4)

block3(v5: i64):
    v6 = call fn2(v5, v1, v2)
    return v6
}''']
for c, x, y in [(1, 10, 3), (0, 10, 3), (1, 0xffff_ffff, 0x8000_0000), (0, 0, 1)]:
    out.append(run('pass_function_pointer', [(c, 32), (x, 64), (y, 64)], [(x + 2 * y if c else x - 2 * y, 64)]))
out.append('')
out += ['''function %ind_mixed(i8, i64, i16) -> i32, i8, i64 {
block0(v0: i8, v1: i64, v2: i16):
    v3 = sextend.i32 v0
    v4 = uextend.i32 v2
    v5 = iadd v3, v4
    v6 = ireduce.i8 v1
    v7 = iadd v6, v0
    v8 = sextend.i64 v2
    v9 = iadd v1, v8
    return v5, v7, v9
}

function %call_indirect_mixed(i8, i64, i16) -> i32, i8, i64 {
    sig0 = (i8, i64, i16) -> i32, i8, i64
    fn0 = %ind_mixed(i8, i64, i16) -> i32, i8, i64

block0(v0: i8, v1: i64, v2: i16):
    v3 = func_addr.i64 fn0
    v4, v5, v6 = call_indirect sig0, v3(v0, v1, v2)
    return v4, v5, v6
}''']
for a, b_, c in [(1, 2, 3), (-1, 0x1_0000_00ff, -1), (-128, 0xffff_ffff, 0x7fff), (127, -1, -0x8000)]:
    out.append(run('call_indirect_mixed', [(a, 8), (b_, 64), (c, 16)],
                   [(s(a, 8) + u(c, 16), 32), (b_ + a, 8), (b_ + s(c, 16), 64)]))
out.append('')
write('control/call_indirect.clif', '\n'.join(out))

# ------------------------------------------------------------------ recursion
out = ['test run', '',
       ';; Recursive calls: fibonacci (i32 and i64 with carries across 2^32), a deep',
       ';; linear recursion, factorial through a repeated-addition multiply, mutual',
       ';; recursion, Ackermann, and one factorial that needs imul (marked).', '']
out += ['''function %fib_rec_i32(i32) -> i32 {
    fn0 = %fib_rec_i32(i32) -> i32

block0(v0: i32):
    v1 = iconst.i32 2
    v2 = icmp slt v0, v1
    brif v2, block2, block1

block1:
    v3 = iconst.i32 -1
    v4 = iadd v0, v3
    v5 = call fn0(v4)
    v6 = iconst.i32 -2
    v7 = iadd v0, v6
    v8 = call fn0(v7)
    v9 = iadd v5, v8
    return v9

block2:
    return v0
}''']
def fib(n):
    a, b_ = 0, 1
    for _ in range(n): a, b_ = b_, a + b_
    return a
for n in [0, 1, 2, 3, 10, 15, 20]:
    out.append(run('fib_rec_i32', [(n, 32)], [(fib(n), 32)]))
out.append('')
out += ['''function %fib_scaled_i64(i32, i64) -> i64 {
    fn0 = %fib_scaled_i64(i32, i64) -> i64

block0(v0: i32, v1: i64):
    brif v0, block1, block3

block1:
    v2 = iconst.i32 1
    v3 = icmp eq v0, v2
    brif v3, block4, block2

block2:
    v4 = iconst.i32 -1
    v5 = iadd v0, v4
    v6 = call fn0(v5, v1)
    v7 = iconst.i32 -2
    v8 = iadd v0, v7
    v9 = call fn0(v8, v1)
    v10 = iadd v6, v9
    return v10

block3:
    v11 = iconst.i64 0
    return v11

block4:
    return v1
}''']
for n, k in [(0, 5), (1, 5), (10, 0x1_0000_0001), (16, 0x8000_0001), (18, -1)]:
    out.append(run('fib_scaled_i64', [(n, 32), (k, 64)], [(fib(n) * k, 64)]))
out.append('')
out += ['''function %sum_rec_i64(i64) -> i64 {
    fn0 = %sum_rec_i64(i64) -> i64

block0(v0: i64):
    brif v0, block1, block2

block1:
    v1 = iconst.i64 -1
    v2 = iadd v0, v1
    v3 = call fn0(v2)
    v4 = iadd v3, v0
    return v4

block2:
    return v0
}''']
for n in [0, 1, 10, 300]:
    out.append(run('sum_rec_i64', [(n, 64)], [(n * (n + 1) // 2, 64)]))
out.append('')
out += ['''function %mul_by_adds(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = iconst.i64 0
    jump block1(v1, v2)

block1(v3: i64, v4: i64):
    brif v3, block2, block3

block2:
    v5 = iadd v4, v0
    v6 = iconst.i64 -1
    v7 = iadd v3, v6
    jump block1(v7, v5)

block3:
    return v4
}
; run: %mul_by_adds(7, 6) == 42
; run: %mul_by_adds(0x1_0000_0001, 3) == 0x3_0000_0003

function %fact_rec_i64(i64) -> i64 {
    fn0 = %fact_rec_i64(i64) -> i64
    fn1 = %mul_by_adds(i64, i64) -> i64

block0(v0: i64):
    v1 = iconst.i64 1
    v2 = icmp ule v0, v1
    brif v2, block2, block1

block1:
    v3 = iconst.i64 -1
    v4 = iadd v0, v3
    v5 = call fn0(v4)
    v6 = call fn1(v5, v0)
    return v6

block2:
    return v1
}''']
import math
for n in [0, 1, 2, 5, 12, 13, 20]:
    out.append(run('fact_rec_i64', [(n, 64)], [(math.factorial(n), 64)]))
out.append('')
out += ['''function %is_even(i32) -> i8 {
    fn0 = %is_odd(i32) -> i8

block0(v0: i32):
    brif v0, block1, block2

block1:
    v1 = iconst.i32 -1
    v2 = iadd v0, v1
    v3 = call fn0(v2)
    return v3

block2:
    v4 = iconst.i8 1
    return v4
}

function %is_odd(i32) -> i8 {
    fn0 = %is_even(i32) -> i8

block0(v0: i32):
    brif v0, block1, block2

block1:
    v1 = iconst.i32 -1
    v2 = iadd v0, v1
    v3 = call fn0(v2)
    return v3

block2:
    v4 = iconst.i8 0
    return v4
}''']
for n in [0, 1, 2, 7, 100, 255]:
    out.append(run('is_odd', [(n, 32)], [(n % 2, 8)]))
out.append('')
out += ['''function %ackermann(i32, i32) -> i32 {
    fn0 = %ackermann(i32, i32) -> i32

block0(v0: i32, v1: i32):
    brif v0, block1, block4

block1:
    brif v1, block3, block2

block2:
    v2 = iconst.i32 -1
    v3 = iadd v0, v2
    v4 = iconst.i32 1
    v5 = call fn0(v3, v4)
    return v5

block3:
    v6 = iconst.i32 -1
    v7 = iadd v1, v6
    v8 = call fn0(v0, v7)
    v9 = iadd v0, v6
    v10 = call fn0(v9, v8)
    return v10

block4:
    v11 = iconst.i32 1
    v12 = iadd v1, v11
    return v12
}''']
def ack(m, n):
    import sys
    sys.setrecursionlimit(100000)
    if m == 0: return n + 1
    if n == 0: return ack(m - 1, 1)
    return ack(m - 1, ack(m, n - 1))
for m, n in [(0, 0), (1, 2), (2, 3), (3, 3)]:
    out.append(run('ackermann', [(m, 32), (n, 32)], [(ack(m, n), 32)]))
out.append('')
out += [';; DEPENDS ON imul (multiplication is not lowered yet; skipped until it is).',
        '''function %fact_rec_imul_i32(i32) -> i32 {
    fn0 = %fact_rec_imul_i32(i32) -> i32

block0(v0: i32):
    v1 = iconst.i32 1
    v2 = icmp sle v0, v1
    brif v2, block2, block1

block1:
    v3 = iconst.i32 -1
    v4 = iadd v0, v3
    v5 = call fn0(v4)
    v6 = imul v5, v0
    return v6

block2:
    return v1
}''']
for n in [0, 1, 5, 12, 13]:
    out.append(run('fact_rec_imul_i32', [(n, 32)], [(math.factorial(n), 32)]))
out.append('')
write('control/recursion.clif', '\n'.join(out))

# ------------------------------------------------------------------ values live across calls
out = ['test run', '',
       ';; Many values live across calls (every register is caller-saved, so all of',
       ';; them are spilled around each call), of every width, including narrow values',
       ';; whose registers hold bits above their width.', '']
N = 40
lines = ['function %callee_clobber(i64) -> i64 {', 'block0(v0: i64):',
         '    v1 = iconst.i64 0x0101_0101_0101_0101', '    v2 = iadd v0, v1', '    return v2', '}', '',
         'function %many_live_across_call(i64, i32) -> i64 {', '    fn0 = %callee_clobber(i64) -> i64', '',
         'block0(v0: i64, v1: i32):']
# N i64 values and N i32 values derived from the arguments
for i in range(N):
    lines.append('    v%d = iconst.i64 %d' % (100 + i, (i + 1) * 0x1_0000_0003))
    lines.append('    v%d = iadd v0, v%d' % (200 + i, 100 + i))
    lines.append('    v%d = iconst.i32 %d' % (300 + i, i * 7 + 1))
    lines.append('    v%d = iadd v1, v%d' % (400 + i, 300 + i))
lines.append('    v500 = call fn0(v0)')
lines.append('    v501 = call fn0(v500)')
acc = 'v501'
k = 600
for i in reversed(range(N)):
    lines.append('    v%d = iadd %s, v%d' % (k, acc, 200 + i)); acc = 'v%d' % k; k += 1
    lines.append('    v%d = sextend.i64 v%d' % (k, 400 + i)); ext = 'v%d' % k; k += 1
    lines.append('    v%d = iadd %s, %s' % (k, acc, ext)); acc = 'v%d' % k; k += 1
lines += ['    return %s' % acc, '}']
out.append('\n'.join(lines))
for x, y in [(0, 0), (1, 2), (-1, -1), (0xffff_ffff, 0x7fff_ffff), (0x1234_5678_9abc_def0, -0x8000_0000)]:
    tot = x + 2 * 0x0101_0101_0101_0101
    for i in range(N):
        tot += x + (i + 1) * 0x1_0000_0003
        tot += s(y + i * 7 + 1, 32)
    out.append(run('many_live_across_call', [(x, 64), (y, 32)], [(tot, 64)]))
out.append('')
# narrow values with garbage upper bits live across a call, then compared and extended
out += ['''function %narrow_live_across_call(i8, i8, i16, i16) -> i32 {
    fn0 = %callee_clobber(i64) -> i64

block0(v0: i8, v1: i8, v2: i16, v3: i16):
    v4 = iadd v0, v1
    v5 = iadd v2, v3
    v6 = iconst.i64 0
    v7 = call fn0(v6)
    v8 = iconst.i8 0
    v9 = icmp eq v4, v8
    v10 = uextend.i32 v5
    v11 = iconst.i32 0x10000
    v12 = iadd v10, v11
    v13 = select v9, v12, v10
    return v13
}''']
for a, b_, c, d in [(-1, 1, -1, 2), (1, 1, -1, 2), (-128, -128, 0x7fff, 0x7fff), (0, 0, 0, 0)]:
    z = u(a + b_, 8); w = u(c + d, 16)
    out.append(run('narrow_live_across_call', [(a, 8), (b_, 8), (c, 16), (d, 16)], [(w + 0x10000 if z == 0 else w, 32)]))
out.append('')
# values live across calls in a loop
out += ['''function %live_across_calls_in_loop(i32, i64, i64, i64) -> i64 {
    fn0 = %callee_clobber(i64) -> i64

block0(v0: i32, v1: i64, v2: i64, v3: i64):
    jump block1(v0, v1, v2, v3)

block1(v4: i32, v5: i64, v6: i64, v7: i64):
    brif v4, block2, block3

block2:
    v8 = call fn0(v5)
    v9 = iadd v6, v7
    v10 = iconst.i32 -1
    v11 = iadd v4, v10
    jump block1(v11, v8, v9, v7)

block3:
    v12 = iadd v5, v6
    return v12
}''']
for n, a, b_, c in [(0, 1, 2, 3), (1, 1, 2, 3), (10, 0, 0, 0x1_0000_0000), (50, -1, 5, 0xffff_ffff)]:
    out.append(run('live_across_calls_in_loop', [(n, 32), (a, 64), (b_, 64), (c, 64)], [(a + n * 0x0101_0101_0101_0101 + b_ + n * c, 64)]))
out.append('')
write('control/call_spills.clif', '\n'.join(out))
