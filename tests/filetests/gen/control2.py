import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

# ------------------------------------------------------------------ jumps with block arguments
out = ['test run', '',
       ';; jump / brif with block arguments: values of every width carried across',
       ';; blocks, permutations of the arguments (parallel moves with cycles), both',
       ';; brif targets taking arguments, and both brif edges going to the same', ';; block with different arguments.', '']
out += ['''function %jump_args_all_widths(i8, i16, i32, i64) -> i8, i16, i32, i64 {
block0(v0: i8, v1: i16, v2: i32, v3: i64):
    jump block1(v3, v2, v1, v0)

block1(v4: i64, v5: i32, v6: i16, v7: i8):
    v8 = iconst.i8 1
    v9 = iadd v7, v8
    v10 = iconst.i16 1
    v11 = iadd v6, v10
    v12 = iconst.i32 1
    v13 = iadd v5, v12
    v14 = iconst.i64 1
    v15 = iadd v4, v14
    jump block2(v9, v11, v13, v15)

block2(v16: i8, v17: i16, v18: i32, v19: i64):
    return v16, v17, v18, v19
}''']
for a, b_, c, d in [(1, 2, 3, 4), (127, 0x7fff, 0x7fffffff, 0x7fffffff_ffffffff), (-1, -1, -1, 0xffffffff), (0, 0, 0, -1)]:
    out.append(run('jump_args_all_widths', [(a, 8), (b_, 16), (c, 32), (d, 64)], [(a + 1, 8), (b_ + 1, 16), (c + 1, 32), (d + 1, 64)]))
out.append('')
# swap in a loop: after n iterations (a, b) is swapped n times
out += ['''function %swap_loop_i32(i32, i32, i32) -> i32, i32 {
block0(v0: i32, v1: i32, v2: i32):
    jump block1(v0, v1, v2)

block1(v3: i32, v4: i32, v5: i32):
    brif v5, block2, block3

block2:
    v6 = iconst.i32 -1
    v7 = iadd v5, v6
    jump block1(v4, v3, v7)

block3:
    return v3, v4
}''']
for a, b_, n in [(1, 2, 0), (1, 2, 1), (1, 2, 2), (1, 2, 7), (-5, 9, 10)]:
    r = (a, b_) if n % 2 == 0 else (b_, a)
    out.append(run('swap_loop_i32', [(a, 32), (b_, 32), (n, 32)], [(r[0], 32), (r[1], 32)]))
out.append('')
out += ['''function %rotate3_loop_i64(i64, i64, i64, i32) -> i64, i64, i64 {
block0(v0: i64, v1: i64, v2: i64, v3: i32):
    jump block1(v0, v1, v2, v3)

block1(v4: i64, v5: i64, v6: i64, v7: i32):
    brif v7, block2, block3

block2:
    v8 = iconst.i32 1
    v9 = isub v7, v8
    jump block1(v5, v6, v4, v9)

block3:
    return v4, v5, v6
}''']
A, B, C = 0x1_0000_0001, 0x2_0000_0002, 0xffffffff_00000003
for n in [0, 1, 2, 3, 4, 8]:
    vals = [A, B, C]
    for _ in range(n):
        vals = [vals[1], vals[2], vals[0]]
    out.append(run('rotate3_loop_i64', [(A, 64), (B, 64), (C, 64), (n, 32)], [(vals[0], 64), (vals[1], 64), (vals[2], 64)]))
out.append('')
# fib iteratively with block params (i64)
out += ['''function %fib_iter_i64(i32) -> i64 {
block0(v0: i32):
    v1 = iconst.i64 0
    v2 = iconst.i64 1
    jump block1(v1, v2, v0)

block1(v3: i64, v4: i64, v5: i32):
    brif v5, block2, block3

block2:
    v6 = iadd v3, v4
    v7 = iconst.i32 1
    v8 = isub v5, v7
    jump block1(v4, v6, v8)

block3:
    return v3
}''']
def fib(n):
    a, b_ = 0, 1
    for _ in range(n): a, b_ = b_, a + b_
    return a
for n in [0, 1, 2, 10, 47, 48, 60, 90, 93]:
    out.append(run('fib_iter_i64', [(n, 32)], [(fib(n), 64)]))
out.append('')
# brif with arguments on both edges
out += ['''function %brif_args_both_edges(i32, i64, i64) -> i64 {
block0(v0: i32, v1: i64, v2: i64):
    brif v0, block1(v1, v2), block2(v2, v1)

block1(v3: i64, v4: i64):
    v5 = isub v3, v4
    return v5

block2(v6: i64, v7: i64):
    v8 = iadd v6, v7
    v9 = iadd v8, v7
    return v9
}''']
for c, x, y in [(1, 10, 3), (0, 10, 3), (-1, 0x1_0000_0000, 1), (0, 0x1_0000_0000, 0xffffffff)]:
    r = x - y if c else y + x + x
    out.append(run('brif_args_both_edges', [(c, 32), (x, 64), (y, 64)], [(r, 64)]))
out.append('')
# both edges to the same block, different arguments
for b in [8, 32, 64]:
    t = TY[b]
    name = 'brif_same_block_%s' % t
    out += ['''function %%%s(%s, %s, %s) -> %s {
block0(v0: %s, v1: %s, v2: %s):
    brif v0, block1(v1, v2), block1(v2, v1)

block1(v3: %s, v4: %s):
    v5 = isub v3, v4
    return v5
}''' % (name, t, t, t, t, t, t, t, t, t)]
    for c, x, y in [(1, 10, 3), (0, 10, 3), (-1, 5, 7), (0, 5, 7)] + ([(0x1_0000_0000, 1, 0)] if b == 64 else [(mask(b), 1, 0)]):
        r = x - y if u(c, b) else y - x
        out.append(run(name, [(c, b), (x, b), (y, b)], [(r, b)]))
    out.append('')
# a diamond whose join takes an argument from each side; a value defined before the branch is used after it
out += ['''function %diamond_join(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 1000
    v3 = icmp slt v0, v1
    brif v3, block1, block2

block1:
    v4 = isub v1, v0
    jump block3(v4)

block2:
    v5 = isub v0, v1
    jump block3(v5)

block3(v6: i32):
    v7 = iadd v6, v2
    return v7
}''']
for x, y in [(1, 5), (5, 1), (-3, 3), (3, -3), (0, 0), (-0x80000000, 0x7fffffff)]:
    out.append(run('diamond_join', [(x, 32), (y, 32)], [(abs(s(x, 32) - s(y, 32)) + 1000, 32)]))
out.append('')
# same value passed twice as block arguments
out += ['''function %same_value_twice(i64) -> i64 {
block0(v0: i64):
    jump block1(v0, v0)

block1(v1: i64, v2: i64):
    v3 = iadd v1, v2
    return v3
}''']
for x in [1, 0x80000000, 0x7fffffff_ffffffff, -1]:
    out.append(run('same_value_twice', [(x, 64)], [(2 * x, 64)]))
out.append('')
# an unreachable block that jumps into a reachable one with arguments
out += ['''function %unreachable_block_with_args(i64) -> i64 {
block0(v0: i64):
    jump block1(v0)

block1(v1: i64):
    return v1

block2:
    v2 = iconst.i64 3
    jump block1(v2)
}''']
for x in [5, 0x1_0000_0000]:
    out.append(run('unreachable_block_with_args', [(x, 64)], [(x, 64)]))
out.append('')
write('control/jump_args.clif', '\n'.join(out))

# ------------------------------------------------------------------ loops
out = ['test run', '', ';; Loops: counted sums, nested loops, loops on narrow counters that wrap,',
       ';; 64-bit counters crossing 2^32, a loop with a constant trip count, and a', ';; loop with two exits.', '']
out += ['''function %sum_1_to_n_i32(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 0
    v2 = iconst.i32 1
    jump block1(v2, v1)

block1(v3: i32, v4: i32):
    v5 = icmp sgt v3, v0
    brif v5, block3, block2

block2:
    v6 = iadd v4, v3
    v7 = iadd_imm.i32 v3, 1
    jump block1(v7, v6)

block3:
    return v4
}''']
for n in [0, 1, 2, 10, 100, 1000, -5]:
    out.append(run('sum_1_to_n_i32', [(n, 32)], [(sum(range(1, n + 1)), 32)]))
out.append('')
out += ['''function %sum_1_to_n_i64(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i64 0
    jump block1(v0, v1)

block1(v2: i64, v3: i64):
    brif v2, block2, block3

block2:
    v4 = iadd v3, v2
    v5 = iconst.i64 -1
    v6 = iadd v2, v5
    jump block1(v6, v4)

block3:
    return v3
}''']
for n in [0, 1, 100, 65536, 92682, 100000]:
    out.append(run('sum_1_to_n_i64', [(n, 64)], [(n * (n + 1) // 2, 64)]))
out.append('')
out += ['''function %nested_sum(i32, i32) -> i64 {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 0
    v3 = iconst.i64 0
    jump block1(v2, v3)

block1(v4: i32, v5: i64):
    v6 = icmp ult v4, v0
    brif v6, block2, block5(v5)

block2:
    jump block3(v2, v5)

block3(v7: i32, v8: i64):
    v9 = icmp ult v7, v1
    brif v9, block4, block6

block4:
    v10 = iadd v4, v7
    v11 = uextend.i64 v10
    v12 = iadd v8, v11
    v13 = iadd_imm.i32 v7, 1
    jump block3(v13, v12)

block6:
    v14 = iadd_imm.i32 v4, 1
    jump block1(v14, v8)

block5(v15: i64):
    return v15
}''']
for n, m in [(0, 5), (5, 0), (1, 1), (3, 4), (10, 10), (30, 70)]:
    out.append(run('nested_sum', [(n, 32), (m, 32)], [(sum(i + j for i in range(n) for j in range(m)), 64)]))
out.append('')
# i8 counter that counts up until it wraps to zero
for b in [8, 16]:
    t = TY[b]
    name = 'count_until_wrap_%s' % t
    out += ['''function %%%s(%s) -> i32 {
block0(v0: %s):
    v1 = iconst.i32 0
    jump block1(v0, v1)

block1(v2: %s, v3: i32):
    v4 = iconst.%s 1
    v5 = iadd v2, v4
    v6 = iadd_imm.i32 v3, 1
    brif v5, block1(v5, v6), block2(v6)

block2(v7: i32):
    return v7
}''' % (name, t, t, t, t)]
    for x in [mask(b), mask(b) - 1, smax(b), 1, 0]:
        # number of increments until x + k == 0 mod 2^b, k >= 1
        k = (-x) % (1 << b)
        if k == 0: k = 1 << b
        out.append(run(name, [(x, b)], [(k, 32)]))
    out.append('')
# i8 countdown compared with ult against its start (wraps below zero)
out += ['''function %countdown_i8_ult(i8) -> i32 {
block0(v0: i8):
    v1 = iconst.i32 0
    jump block1(v0, v1)

block1(v2: i8, v3: i32):
    v4 = iconst.i8 1
    v5 = isub v2, v4
    v6 = iadd_imm.i32 v3, 1
    v7 = icmp ule v5, v0
    brif v7, block1(v5, v6), block2(v6)

block2(v8: i32):
    return v8
}''']
for x in [0, 1, 5, 127, -2]:
    # iterations until v2-1 (mod 256) > x unsigned: from x down to 0 then wraps to 255 > x
    cnt = 0; v = u(x, 8)
    while True:
        v = (v - 1) % 256; cnt += 1
        if not (v <= u(x, 8)): break
        if cnt > 1000: break
    out.append(run('countdown_i8_ult', [(x, 8)], [(cnt, 32)]))
out.append('')
# i64 counter crossing 2^32
out += ['''function %count_across_2pow32(i64, i64) -> i32 {
block0(v0: i64, v1: i64):
    v2 = iconst.i32 0
    jump block1(v0, v2)

block1(v3: i64, v4: i32):
    v5 = icmp uge v3, v1
    brif v5, block3(v4), block2

block2:
    v6 = iadd_imm.i64 v3, 1
    v7 = iadd_imm.i32 v4, 1
    jump block1(v6, v7)

block3(v8: i32):
    return v8
}''']
for lo, hi in [(0xffff_fff0, 0x1_0000_0010), (0x1_ffff_ffff, 0x2_0000_0000), (0x7fff_ffff_ffff_fffe, 0x8000_0000_0000_0003), (5, 5), (6, 5), (0, 300)]:
    out.append(run('count_across_2pow32', [(lo, 64), (hi, 64)], [(max(0, hi - lo), 32)]))
out.append('')
# constant trip count: the same for every lane
out += ['''function %const_trip_count(i64) -> i64 {
block0(v0: i64):
    v1 = iconst.i32 64
    jump block1(v1, v0)

block1(v2: i32, v3: i64):
    v4 = iconst.i64 0x0100_0000_0100_0001
    v5 = iadd v3, v4
    v6 = iadd_imm.i32 v2, -1
    brif v6, block1(v6, v5), block2(v5)

block2(v7: i64):
    return v7
}''']
for x in [0, 1, -1, 0xffffffff]:
    out.append(run('const_trip_count', [(x, 64)], [(x + 64 * 0x0100_0000_0100_0001, 64)]))
out.append('')
# loop with two exits: search first k in [0, n) with k + k == target, else -1
out += ['''function %loop_two_exits(i32, i32) -> i32 {
block0(v0: i32, v1: i32):
    v2 = iconst.i32 0
    jump block1(v2)

block1(v3: i32):
    v4 = icmp sge v3, v0
    brif v4, block4, block2

block2:
    v5 = iadd v3, v3
    v6 = icmp eq v5, v1
    brif v6, block3, block5

block5:
    v7 = iadd_imm.i32 v3, 1
    jump block1(v7)

block3:
    return v3

block4:
    v8 = iconst.i32 -1
    return v8
}''']
for n, tgt in [(10, 8), (10, 9), (10, 18), (10, 20), (0, 0), (1, 0), (100, 198)]:
    r = -1
    for k in range(n):
        if 2 * k == tgt:
            r = k; break
    out.append(run('loop_two_exits', [(n, 32), (tgt, 32)], [(r, 32)]))
out.append('')
write('control/loops.clif', '\n'.join(out))
