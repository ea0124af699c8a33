import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

out = ['test run', '',
       ';; Addresses as values: stack_addr.i64 (generic address in the local window)',
       ';; and stack_addr.i32 (local address) used with computed offsets, negative',
       ';; offsets, through block parameters and select, passed to callees that load',
       ';; and store through them, and a slot that keeps its contents across a call.', '']
# indexed access: element k of an 8-element i64 array, address computed with adds
for at in ['i64', 'i32']:
    name = 'array_index_addr_%s' % at
    ext = '    v4 = uextend.i64 v1' if at == 'i64' else '    v4 = iadd v1, v99'
    out += ['''function %%%s(i64, i32) -> i64 {
    ss0 = explicit_slot 64

block0(v0: i64, v1: i32):
    v2 = stack_addr.%s ss0
    v99 = iconst.i32 0
%s
    v5 = iadd v4, v4
    v6 = iadd v5, v5
    v7 = iadd v6, v6
    v8 = iadd v2, v7
    jump block1(v0, v2)

block1(v10: i64, v11: %s):
    v12 = iconst.i64 0x100
    v13 = iadd v10, v12
    store v10, v11
    v14 = iconst.%s 8
    v15 = iadd v11, v14
    v16 = iconst.%s 64
    v17 = iadd v2, v16
    v18 = icmp ult v15, v17
    brif v18, block1(v13, v15), block2

block2:
    v19 = load.i64 v8
    return v19
}''' % (name, at, ext, at, at, at)]
    for x, k in [(0, 0), (0, 3), (0, 7), (0x1_0000_0000, 5), (-1, 1), (0xffff_ff00, 2)]:
        out.append(run(name, [(x, 64), (k, 32)], [(x + 0x100 * k, 64)]))
    out.append('')
# an address below its base, computed by adding a negative constant (negative
# immediate offsets in load/store are in lowering.clif: cranelift-interpreter
# 0.135 traps on them, so they cannot be run here)
out += ['''function %negative_address_arith(i32, i32) -> i32, i32 {
    ss0 = explicit_slot 16

block0(v0: i32, v1: i32):
    v2 = stack_addr.i64 ss0+8
    v3 = iconst.i64 -8
    v4 = iadd v2, v3
    store v0, v4
    store v1, v4+4
    v5 = stack_addr.i32 ss0+12
    v6 = iconst.i32 -12
    v7 = iadd v5, v6
    v8 = load.i32 v7
    v9 = load.i32 v7+4
    return v9, v8
}''']
for x, y in [(1, 2), (-1, 0x7fffffff), (0, -0x80000000)]:
    out.append(run('negative_address_arith', [(x, 32), (y, 32)], [(y, 32), (x, 32)]))
out.append('')
# offsets too large for the 24-bit offset field of LD/ST (the address is
# adjusted first)
out += ['''function %large_offsets_generic(i32) -> i32, i32 {
    ss0 = explicit_slot 8

block0(v0: i32):
    v1 = stack_addr.i64 ss0
    v2 = iconst.i64 -0x100_0000
    v3 = iadd v1, v2
    store v0, v3+0x100_0000
    v4 = iconst.i32 1
    v5 = iadd v0, v4
    store v5, v3+0x100_0004
    v6 = load.i32 v1
    v7 = load.i32 v3+0x100_0004
    return v6, v7
}''']
for x in [5, -1, 0x7fffffff]:
    out.append(run('large_offsets_generic', [(x, 32)], [(x, 32), (x + 1, 32)]))
out.append('')
# address chosen by select
out += ['''function %address_by_select(i8, i64, i64) -> i64, i64 {
    ss0 = explicit_slot 8
    ss1 = explicit_slot 8

block0(v0: i8, v1: i64, v2: i64):
    v3 = stack_addr.i64 ss0
    v4 = stack_addr.i64 ss1
    v5 = iconst.i64 0
    store v5, v3
    store v5, v4
    v6 = select v0, v3, v4
    store v1, v6
    v7 = select v0, v4, v3
    store v2, v7
    v8 = load.i64 v3
    v9 = load.i64 v4
    return v8, v9
}''']
for c, x, y in [(1, 10, 20), (0, 10, 20), (-128, 0x1_0000_0000, -1), (0, 0x1_0000_0000, -1)]:
    out.append(run('address_by_select', [(c, 8), (x, 64), (y, 64)], [(x if c else y, 64), (y if c else x, 64)]))
out.append('')
# callee stores through a generic pointer into the caller's frame
out += ['''function %store_through_i64_ptr(i64, i64, i16) {
block0(v0: i64, v1: i64, v2: i16):
    store v1, v0
    istore16 v1, v0+8
    store v2, v0+10
    return
}

function %load_through_i64_ptr(i64) -> i64 {
block0(v0: i64):
    v1 = load.i64 v0
    return v1
}

function %callee_writes_caller_slot(i64, i16) -> i64, i64 {
    ss0 = explicit_slot 16
    fn0 = %store_through_i64_ptr(i64, i64, i16)
    fn1 = %load_through_i64_ptr(i64) -> i64

block0(v0: i64, v1: i16):
    v2 = stack_addr.i64 ss0
    v3 = iconst.i64 0
    store v3, v2+8
    call fn0(v2, v0, v1)
    v4 = load.i64 v2
    v5 = stack_addr.i64 ss0+8
    v6 = call fn1(v5)
    return v4, v6
}''']
for x, y in [(0x1122_3344_5566_7788, 0x0102), (-1, -1), (0, 0x7fff)]:
    out.append(run('callee_writes_caller_slot', [(x, 64), (y, 16)], [(x, 64), (u(x, 16) | u(y, 16) << 16, 64)]))
out.append('')
# the same with 32-bit local pointers
out += ['''function %store_through_i32_ptr(i32, i32, i8) {
block0(v0: i32, v1: i32, v2: i8):
    store v1, v0
    store v2, v0+5
    return
}

function %load_through_i32_ptr(i32) -> i32 {
block0(v0: i32):
    v1 = load.i32 v0
    return v1
}

function %callee_writes_caller_slot_i32_ptr(i32, i8) -> i32, i32 {
    ss0 = explicit_slot 8
    fn0 = %store_through_i32_ptr(i32, i32, i8)
    fn1 = %load_through_i32_ptr(i32) -> i32

block0(v0: i32, v1: i8):
    v2 = stack_addr.i32 ss0
    v3 = iconst.i32 0
    store v3, v2+4
    call fn0(v2, v0, v1)
    v4 = load.i32 v2
    v5 = stack_addr.i32 ss0+4
    v6 = call fn1(v5)
    return v4, v6
}''']
for x, y in [(0x11223344, 0x55), (-1, -1), (0, 0x7f)]:
    out.append(run('callee_writes_caller_slot_i32_ptr', [(x, 32), (y, 8)], [(x, 32), (u(y, 8) << 8, 32)]))
out.append('')
# slot contents survive a call whose callee uses its own slots at the same offsets
out += ['''function %callee_with_slots(i64) -> i64 {
    ss0 = explicit_slot 32

block0(v0: i64):
    v1 = stack_addr.i64 ss0
    v2 = iconst.i64 -1
    store v2, v1
    store v2, v1+8
    store v0, v1+16
    store v0, v1+24
    v3 = load.i64 v1+16
    return v3
}

function %slot_survives_call(i64, i64) -> i64, i64, i64 {
    ss0 = explicit_slot 16
    fn0 = %callee_with_slots(i64) -> i64

block0(v0: i64, v1: i64):
    v2 = stack_addr.i64 ss0
    store v0, v2
    store v1, v2+8
    v3 = call fn0(v1)
    v4 = load.i64 v2
    v5 = load.i64 v2+8
    return v4, v5, v3
}''']
for x, y in [(1, 2), (0x1234_5678_9abc_def0, -2), (0, 0)]:
    out.append(run('slot_survives_call', [(x, 64), (y, 64)], [(x, 64), (y, 64), (y, 64)]))
out.append('')
# recursion where each frame keeps data in its own slot
out += ['''function %rec_slots(i32, i64) -> i64 {
    ss0 = explicit_slot 8
    fn0 = %rec_slots(i32, i64) -> i64

block0(v0: i32, v1: i64):
    v2 = stack_addr.i64 ss0
    store v1, v2
    brif v0, block1, block2

block1:
    v3 = iconst.i32 -1
    v4 = iadd v0, v3
    v5 = iconst.i64 0x1_0000_0001
    v6 = iadd v1, v5
    v7 = call fn0(v4, v6)
    v8 = load.i64 v2
    v9 = iadd v7, v8
    return v9

block2:
    v10 = load.i64 v2
    return v10
}''']
for n, x in [(0, 5), (1, 5), (10, 0), (50, -1)]:
    tot = sum(x + k * 0x1_0000_0001 for k in range(n + 1))
    out.append(run('rec_slots', [(n, 32), (x, 64)], [(tot, 64)]))
out.append('')
write('memory/pointers.clif', '\n'.join(out))

# ------------------------------------------------------------------ register pressure
out = ['test run', '',
       ';; Register pressure: more live values than registers (63 pairs, 63 32-bit',
       ';; registers are allocatable), so the allocator must spill and reload; a stack',
       ';; slot written before the pressure keeps its contents.', '']
N = 100
lines = ['function %sum_100_live_i64(i64, i64) -> i64 {', 'block0(v0: i64, v1: i64):']
for i in range(N):
    lines.append('    v%d = iconst.i64 %d' % (1000 + i, i * 0x1_0000_0001 + 1))
    lines.append('    v%d = iadd v0, v%d' % (2000 + i, 1000 + i))
    lines.append('    v%d = iadd v%d, v1' % (3000 + i, 2000 + i))
# now sum them in reverse order of definition, so all are live at once
acc = 'v3099'
k = 4000
for i in reversed(range(N - 1)):
    lines.append('    v%d = iadd %s, v%d' % (k, acc, 3000 + i)); acc = 'v%d' % k; k += 1
lines += ['    return %s' % acc, '}']
out.append('\n'.join(lines))
for x, y in [(0, 0), (1, 2), (-1, 0x1_0000_0000), (0x7fff_ffff_ffff_ffff, 0x8000_0000)]:
    tot = sum(x + i * 0x1_0000_0001 + 1 + y for i in range(N))
    out.append(run('sum_100_live_i64', [(x, 64), (y, 64)], [(tot, 64)]))
out.append('')
N = 90
lines = ['function %sum_90_live_i32_with_i8(i32, i8) -> i32 {', 'block0(v0: i32, v1: i8):']
for i in range(N):
    lines.append('    v%d = iconst.i32 %d' % (1000 + i, i * 0x01000193 + 7))
    lines.append('    v%d = iadd v0, v%d' % (2000 + i, 1000 + i))
lines.append('    v%d = iconst.i8 %d' % (1999, 1))
lines.append('    v%d = iadd v1, v1999' % 2999)
acc = 'v2089'
k = 4000
for i in reversed(range(N - 1)):
    lines.append('    v%d = isub %s, v%d' % (k, acc, 2000 + i)); acc = 'v%d' % k; k += 1
lines.append('    v5000 = uextend.i32 v2999')
lines.append('    v5001 = iadd %s, v5000' % acc)
lines += ['    return v5001', '}']
out.append('\n'.join(lines))
for x, y in [(0, 0), (5, -1), (-1, 127), (0x7fffffff, -128)]:
    vals = [x + i * 0x01000193 + 7 for i in range(N)]
    tot = vals[N - 1]
    for i in reversed(range(N - 1)):
        tot -= vals[i]
    tot += u(y + 1, 8)
    out.append(run('sum_90_live_i32_with_i8', [(x, 32), (y, 8)], [(tot, 32)]))
out.append('')
# pressure plus a stack slot and loop
N = 80
lines = ['function %pressure_with_slot_and_loop(i64, i32) -> i64 {', '    ss0 = explicit_slot 8', '',
         'block0(v0: i64, v1: i32):', '    v2 = stack_addr.i64 ss0', '    store v0, v2']
for i in range(N):
    lines.append('    v%d = iconst.i64 %d' % (1000 + i, (i + 1) << 20))
    lines.append('    v%d = iadd v0, v%d' % (2000 + i, 1000 + i))
lines += ['    v3 = iconst.i64 0', '    jump block1(v1, v3)', '', 'block1(v4: i32, v5: i64):',
          '    v6 = load.i64 v2', '    v7 = iadd v5, v6', '    v8 = iconst.i32 -1', '    v9 = iadd v4, v8',
          '    brif v4, block1(v9, v7), block2', '', 'block2:']
acc = 'v5'
k = 4000
for i in range(N):
    lines.append('    v%d = iadd %s, v%d' % (k, acc, 2000 + i)); acc = 'v%d' % k; k += 1
lines += ['    return %s' % acc, '}']
out.append('\n'.join(lines))
for x, n in [(0, 0), (1, 3), (0xffff_ffff, 10), (-1, 1)]:
    # block1 runs n+1 times (v4 = n .. 0); block2 reads v5, the sum before the
    # last iteration's add: n * x
    tot = n * x + sum(x + ((i + 1) << 20) for i in range(N))
    out.append(run('pressure_with_slot_and_loop', [(x, 64), (n, 32)], [(tot, 64)]))
out.append('')
write('memory/spills.clif', '\n'.join(out))
