import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
out = ['test run', '',
       ';; Small stack slots declared without an explicit alignment, in an order that',
       ';; puts them at odd offsets if the frame layout packs them bytewise: each is',
       ';; accessed with a load/store of its own size, which must work (Cranelift lays',
       ';; every explicit slot out at least word-aligned; an unaligned local access',
       ';; faults on this target).', '']
out += ['''function %slot_i16_after_i8(i8, i16) -> i16, i8 {
    ss0 = explicit_slot 1
    ss1 = explicit_slot 2

block0(v0: i8, v1: i16):
    v2 = stack_addr.i64 ss0
    v3 = stack_addr.i64 ss1
    store v0, v2
    store v1, v3
    v4 = load.i16 v3
    v5 = load.i8 v2
    return v4, v5
}''']
for a, b_ in [(1, 2), (-1, -0x8000)]:
    out.append(run('slot_i16_after_i8', [(a, 8), (b_, 16)], [(b_, 16), (a, 8)]))
out.append('')
out += ['''function %slot_i32_after_i16(i16, i32) -> i32, i16 {
    ss0 = explicit_slot 2
    ss1 = explicit_slot 4

block0(v0: i16, v1: i32):
    v2 = stack_addr.i32 ss0
    v3 = stack_addr.i32 ss1
    store v0, v2
    store v1, v3
    v4 = load.i32 v3
    v5 = load.i16 v2
    return v4, v5
}''']
for a, b_ in [(1, 2), (-1, -0x8000_0000)]:
    out.append(run('slot_i32_after_i16', [(a, 16), (b_, 32)], [(b_, 32), (a, 16)]))
out.append('')
out += ['''function %slot_i32_after_i8(i8, i32) -> i32 {
    ss0 = explicit_slot 1
    ss1 = explicit_slot 4

block0(v0: i8, v1: i32):
    v2 = stack_addr.i64 ss0
    v3 = stack_addr.i64 ss1
    store v0, v2
    store v1, v3
    v4 = load.i32 v3
    return v4
}''']
for a, b_ in [(1, 2), (-1, 0x12345678)]:
    out.append(run('slot_i32_after_i8', [(a, 8), (b_, 32)], [(b_, 32)]))
out.append('')
out += ['''function %slot_i64_in_12_byte_slot_after_4(i32, i64) -> i64 {
    ss0 = explicit_slot 4
    ss1 = explicit_slot 12

block0(v0: i32, v1: i64):
    v2 = stack_addr.i64 ss0
    v3 = stack_addr.i64 ss1
    store v0, v2
    store v1, v3
    store v0, v3+8
    v4 = load.i64 v3
    return v4
}''']
for a, b_ in [(1, 2), (-1, 0x1234_5678_9abc_def0)]:
    out.append(run('slot_i64_in_12_byte_slot_after_4', [(a, 32), (b_, 64)], [(b_, 64)]))
out.append('')
write('memory/slot_alignment.clif', '\n'.join(out))
