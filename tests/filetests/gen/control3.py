import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

out = ['test run', '',
       ';; br_table: in-range indices, the default for out-of-range ones (including',
       ';; indices with the top bit set), duplicate targets, block arguments, an',
       ';; empty table, and indices computed from i64 and i8 values. (The index of',
       ';; br_table is i32 in this CLIF version; a 64-bit index reaches it through', ';; ireduce, i.e. modulo 2^32.)', '']
out += ['''function %br_table4(i32) -> i32 {
block0(v0: i32):
    br_table v0, block9, [block1, block2, block3, block4]

block1:
    v1 = iconst.i32 10
    return v1

block2:
    v2 = iconst.i32 20
    return v2

block3:
    v3 = iconst.i32 30
    return v3

block4:
    v4 = iconst.i32 40
    return v4

block9:
    v9 = iconst.i32 -1
    return v9
}''']
def t4(i):
    i = u(i, 32)
    return [10, 20, 30, 40][i] if i < 4 else -1
for i in [0, 1, 2, 3, 4, 5, 100, -1, 0x80000000, 0x7fffffff, 0x10000]:
    out.append(run('br_table4', [(i, 32)], [(t4(i), 32)]))
out.append('')
out += ['''function %br_table_dup_targets(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 1
    v2 = iconst.i32 2
    br_table v0, block1, [block2, block1, block2, block2]

block1:
    return v1

block2:
    return v2
}''']
for i in [0, 1, 2, 3, 4, -1]:
    r = [2, 1, 2, 2][u(i, 32)] if u(i, 32) < 4 else 1
    out.append(run('br_table_dup_targets', [(i, 32)], [(r, 32)]))
out.append('')
out += ['''function %br_table_empty(i32) -> i32 {
block0(v0: i32):
    br_table v0, block1, []

block1:
    v1 = iconst.i32 77
    return v1
}''']
for i in [0, 1, -1]:
    out.append(run('br_table_empty', [(i, 32)], [(77, 32)]))
out.append('')
out += ['''function %br_table_args(i32, i64) -> i64 {
block0(v0: i32, v1: i64):
    v2 = iconst.i64 0x1_0000_0000
    v3 = iconst.i64 7
    br_table v0, block1(v1), [block2(v1, v2), block2(v2, v3), block1(v3)]

block1(v4: i64):
    return v4

block2(v5: i64, v6: i64):
    v7 = isub v5, v6
    return v7
}''']
def ta(i, x):
    i = u(i, 32)
    if i == 0: return x - 0x1_0000_0000
    if i == 1: return 0x1_0000_0000 - 7
    if i == 2: return 7
    return x
for i, x in [(0, 5), (1, 5), (2, 5), (3, 5), (-1, 5), (0, 0x1_0000_0000)]:
    out.append(run('br_table_args', [(i, 32), (x, 64)], [(ta(i, x), 64)]))
out.append('')
out += ['''function %br_table_index_ireduce_i64(i64) -> i32 {
block0(v0: i64):
    v1 = ireduce.i32 v0
    br_table v1, block3, [block1, block2]

block1:
    v2 = iconst.i32 100
    return v2

block2:
    v3 = iconst.i32 200
    return v3

block3:
    v4 = iconst.i32 300
    return v4
}''']
for x in [0, 1, 2, 0x1_0000_0000, 0x1_0000_0001, 0x5_0000_0002, 0xffff_ffff, -1]:
    i = u(x, 32)
    out.append(run('br_table_index_ireduce_i64', [(x, 64)], [([100, 200][i] if i < 2 else 300, 32)]))
out.append('')
out += ['''function %br_table_index_uextend_i8(i8) -> i32 {
block0(v0: i8):
    v1 = uextend.i32 v0
    br_table v1, block3, [block1, block2]

block1:
    v2 = iconst.i32 100
    return v2

block2:
    v3 = iconst.i32 200
    return v3

block3:
    v4 = iconst.i32 300
    return v4
}''']
for x in [0, 1, 2, -1, -128]:
    i = u(x, 8)
    out.append(run('br_table_index_uextend_i8', [(x, 8)], [([100, 200][i] if i < 2 else 300, 32)]))
out.append('')
out += ['''function %br_table_index_from_wrapping_i8_add(i8, i8) -> i32 {
block0(v0: i8, v1: i8):
    v2 = iadd v0, v1
    v3 = uextend.i32 v2
    br_table v3, block3, [block1, block2]

block1:
    v4 = iconst.i32 100
    return v4

block2:
    v5 = iconst.i32 200
    return v5

block3:
    v6 = iconst.i32 300
    return v6
}''']
for x, y in [(-1, 1), (-1, 2), (-1, 3), (0, 0), (0x80, 0x80)]:
    i = u(x + y, 8)
    out.append(run('br_table_index_from_wrapping_i8_add', [(x, 8), (y, 8)], [([100, 200][i] if i < 2 else 300, 32)]))
out.append('')
# a state machine in a loop: state -> next state, counting steps until state 3
out += ['''function %br_table_state_machine(i32) -> i32 {
block0(v0: i32):
    v1 = iconst.i32 0
    jump block1(v0, v1)

block1(v2: i32, v3: i32):
    v4 = iconst.i32 1
    v5 = iadd v3, v4
    br_table v2, block9(v5), [block10(v5), block11(v5), block12(v5), block9(v5)]

block10(v6: i32):
    v7 = iconst.i32 2
    jump block1(v7, v6)

block11(v8: i32):
    v9 = iconst.i32 3
    jump block1(v9, v8)

block12(v10: i32):
    v11 = iconst.i32 1
    jump block1(v11, v10)

block9(v12: i32):
    return v12
}''']
def sm(st):
    steps = 0
    while True:
        steps += 1
        if st == 0: st = 2
        elif st == 1: st = 3
        elif st == 2: st = 1
        else: return steps
for st in [0, 1, 2, 3, 4, 99]:
    out.append(run('br_table_state_machine', [(st, 32)], [(sm(st), 32)]))
out.append('')
# an empty table whose default block has other predecessors too (a join, a loop header)
out += ['''function %br_table_empty_to_join(i32) -> i32 {
block0(v0: i32):
    brif v0, block1, block2

block1:
    br_table v0, block3, []

block2:
    jump block3

block3:
    v1 = iconst.i32 7
    return v1
}''']
for i in [0, 1, -1]:
    out.append(run('br_table_empty_to_join', [(i, 32)], [(7, 32)]))
out.append('')
out += ['''function %br_table_empty_loop(i32, i64) -> i64 {
block0(v0: i32, v1: i64):
    jump block1(v0, v1)

block1(v2: i32, v3: i64):
    v4 = iconst.i64 3
    v5 = iadd v3, v4
    v6 = iconst.i32 -1
    v7 = iadd v2, v6
    brif v2, block2, block3

block2:
    br_table v0, block1(v7, v5), []

block3:
    return v3
}''']
for n, x in [(0, 5), (2, 5), (10, 0xffff_fffe)]:
    out.append(run('br_table_empty_loop', [(n, 32), (x, 64)], [(x + 3 * n, 64)]))
out.append('')
# a larger table
N = 20
lines = ['function %br_table20(i32) -> i32 {', 'block0(v0: i32):',
         '    br_table v0, block100, [%s]' % ', '.join('block%d' % (i + 1) for i in range(N)), '']
for i in range(N):
    lines += ['block%d:' % (i + 1), '    v%d = iconst.i32 %d' % (i + 1, (i + 1) * 3), '    return v%d' % (i + 1), '']
lines += ['block100:', '    v100 = iconst.i32 -7', '    return v100', '}']
out += ['\n'.join(lines)]
for i in [0, 1, 7, 18, 19, 20, 21, -1, 0x8000_0013]:
    r = (u(i, 32) + 1) * 3 if u(i, 32) < N else -7
    out.append(run('br_table20', [(i, 32)], [(r, 32)]))
out.append('')
write('control/br_table.clif', '\n'.join(out))
