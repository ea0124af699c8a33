import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

def vals(b):
    v = [0, 1, -1, smax(b), smin(b), 0x5a5a5a5a5a5a5a5a & mask(b), 0xa5a5a5a5a5a5a5a5 & mask(b)]
    if b >= 16: v += [0x80 , 0xff, 0x7f]
    if b >= 32: v += [0x8000, 0xffff]
    if b == 64: v += [0xffffffff, 0x80000000]
    out = []
    for x in v:
        if u(x, b) not in [u(y, b) for y in out]:
            out.append(x)
    return out

ups = [(f, t) for f in WIDTHS for t in WIDTHS if f < t]
for op in ['uextend', 'sextend']:
    out = ['test run', '',
           ';; %s between every pair of widths. The result is returned and also' % op,
           ';; compared (unsigned) with the expected wide value, so bits above the narrow',
           ';; width of the result are checked even where the returned register is', ';; truncated by the caller.', '']
    for f, t in ups:
        ft, tt = TY[f], TY[t]
        name = '%s_%s_%s' % (op, ft, tt)
        out += ['function %%%s(%s) -> %s {' % (name, ft, tt), 'block0(v0: %s):' % ft,
                '    v1 = %s.%s v0' % (op, tt), '    return v1', '}']
        for x in vals(f):
            r = u(x, f) if op == 'uextend' else s(x, f)
            out.append(run(name, [(x, f)], [(r, t)]))
        out.append('')
        # extend then widen the result further with the other extension to i64 to expose the upper bits
        if t < 64:
            name = '%s_%s_%s_checked' % (op, ft, tt)
            out += ['function %%%s(%s) -> i64 {' % (name, ft), 'block0(v0: %s):' % ft,
                    '    v1 = %s.%s v0' % (op, tt), '    v2 = uextend.i64 v1', '    return v2', '}']
            for x in vals(f):
                r = u(x, f) if op == 'uextend' else s(x, f)
                out.append(run(name, [(x, f)], [(u(r, t), 64)]))
            out.append('')
    write('extend/%s.clif' % op, '\n'.join(out))

out = ['test run', '',
       ';; ireduce between every pair of widths, with values whose dropped bits are',
       ';; set. The narrow result is also extended back (uextend and sextend) so that',
       ';; the bits above the narrow width are checked.', '']
RV = {16: [0x1ff, 0x180, 0x17f, 0xff00, 0x8001, 0], 32: [0x1ff, 0x1_8000, 0xffff_ff80, 0x1234_5678, 0x8000_0000, 0x7fff_ffff, -1],
      64: [0x1ff, 0x1_0000_0000, 0x1_ffff_ffff, 0xffff_ffff_0000_0080, 0x1234_5678_9abc_def0, 0x8000_0000_0000_0000, 0x7fff_ffff_8000_7f80, -1]}
downs = [(f, t) for f in WIDTHS for t in WIDTHS if t < f]
for f, t in downs:
    ft, tt = TY[f], TY[t]
    name = 'ireduce_%s_%s' % (ft, tt)
    out += ['function %%%s(%s) -> %s {' % (name, ft, tt), 'block0(v0: %s):' % ft,
            '    v1 = ireduce.%s v0' % tt, '    return v1', '}']
    for x in RV[f]:
        out.append(run(name, [(x, f)], [(x, t)]))
    out.append('')
    for ext in ['uextend', 'sextend']:
        name = 'ireduce_%s_%s_%s_i64' % (ft, tt, ext)
        out += ['function %%%s(%s) -> i64 {' % (name, ft), 'block0(v0: %s):' % ft,
                '    v1 = ireduce.%s v0' % tt, '    v2 = %s.i64 v1' % ext, '    return v2', '}']
        for x in RV[f]:
            r = u(x, t) if ext == 'uextend' else s(x, t)
            out.append(run(name, [(x, f)], [(r, 64)]))
        out.append('')
write('extend/ireduce.clif', '\n'.join(out))

out = ['test run', '',
       ';; Extensions of narrow values computed by arithmetic that overflows the',
       ';; narrow width (their registers hold bits above it): the extension must use',
       ';; only the low bits.', '']
for b in [8, 16]:
    t = TY[b]
    for to in [32, 64]:
        tt = TY[to]
        for ext in ['uextend', 'sextend']:
            name = '%s_%s_of_iadd_%s' % (ext, tt, t)
            out += ['function %%%s(%s, %s) -> %s {' % (name, t, t, tt), 'block0(v0: %s, v1: %s):' % (t, t),
                    '    v2 = iadd v0, v1', '    v3 = %s.%s v2' % (ext, tt), '    return v3', '}']
            for x, y in [(mask(b), 1), (smax(b), 1), (mask(b), mask(b)), (smin(b), smin(b)), (1, 2), (smin(b), -1)]:
                r = u(x + y, b) if ext == 'uextend' else s(x + y, b)
                out.append(run(name, [(x, b), (y, b)], [(r, to)]))
            out.append('')
            name = '%s_%s_of_ineg_%s' % (ext, tt, t)
            out += ['function %%%s(%s) -> %s {' % (name, t, tt), 'block0(v0: %s):' % t,
                    '    v1 = ineg v0', '    v2 = %s.%s v1' % (ext, tt), '    return v2', '}']
            for x in [1, 0, smin(b), smax(b), -1]:
                r = u(-x, b) if ext == 'uextend' else s(-x, b)
                out.append(run(name, [(x, b)], [(r, to)]))
            out.append('')
# i8 -> i16 -> i32 chains where the middle value is computed
for e1 in ['uextend', 'sextend']:
    for e2 in ['uextend', 'sextend']:
        name = '%s_%s_chain_i8_i16_i64' % (e1, e2)
        out += ['function %%%s(i8, i16) -> i64 {' % name, 'block0(v0: i8, v1: i16):',
                '    v2 = %s.i16 v0' % e1, '    v3 = iadd v2, v1', '    v4 = %s.i64 v3' % e2, '    return v4', '}']
        for x, y in [(-1, 0), (-128, 0), (127, 1), (-1, 1), (0x80, 0x7f80), (-1, -0x8000)]:
            m = u(x, 8) if e1 == 'uextend' else s(x, 8)
            m = m + y
            r = u(m, 16) if e2 == 'uextend' else s(m, 16)
            out.append(run(name, [(x, 8), (y, 16)], [(r, 64)]))
        out.append('')
# sextend.i64 of i32 -> 64-bit arithmetic
out += ['function %sextend_i32_then_iadd_i64(i32, i64) -> i64 {', 'block0(v0: i32, v1: i64):',
        '    v2 = sextend.i64 v0', '    v3 = iadd v2, v1', '    return v3', '}']
for x, y in [(-1, 1), (-1, 0x1_0000_0000), (0x7fffffff, 1), (-0x80000000, 0x80000000), (5, -10)]:
    out.append(run('sextend_i32_then_iadd_i64', [(x, 32), (y, 64)], [(s(x, 32) + y, 64)]))
out.append('')
out += ['function %uextend_i32_then_isub_i64(i32, i64) -> i64 {', 'block0(v0: i32, v1: i64):',
        '    v2 = uextend.i64 v0', '    v3 = isub v2, v1', '    return v3', '}']
for x, y in [(-1, 1), (-1, 0x1_0000_0000), (0, 1), (0x80000000, 0x80000000)]:
    out.append(run('uextend_i32_then_isub_i64', [(x, 32), (y, 64)], [(u(x, 32) - y, 64)]))
out.append('')
write('extend/extend_upper_bits.clif', '\n'.join(out))
