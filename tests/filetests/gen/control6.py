import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
out = ['test run', '',
       ';; Calls with more than 8 arguments or results: those past the 8th are passed',
       ';; in the outgoing area at the bottom of the caller\'s frame. The functions',
       ';; with more than 8 parameters/results are reached through callers with few.', '']
ATY = [64, 8, 32, 16, 64, 32, 8, 64, 8, 16, 32, 64]   # 12 arguments
RTY = [64, 32, 16, 8, 64, 8, 32, 64, 16, 64, 8]       # 11 results
sig = ', '.join(TY[b] for b in ATY)
rsig = ', '.join(TY[b] for b in RTY)
lines = ['function %%many_args_callee(%s) -> %s {' % (sig, rsig),
         'block0(%s):' % ', '.join('v%d: %s' % (i, TY[b]) for i, b in enumerate(ATY))]
# result j = extend/reduce of (arg j+1) + (j+1) computed in the result type
def conv(vname, fb, tb, k):
    # returns lines and resulting value name, converting v (fb) to tb
    out = []
    if fb == tb:
        return out, vname
    nv = 'v%d' % k
    if fb < tb:
        out.append('    %s = sextend.%s %s' % (nv, TY[tb], vname))
    else:
        out.append('    %s = ireduce.%s %s' % (nv, TY[tb], vname))
    return out, nv
k = 100
rets = []
for j, tb in enumerate(RTY):
    src = j + 1
    ls, vn = conv('v%d' % src, ATY[src], tb, k); k += 1
    lines += ls
    lines.append('    v%d = iconst.%s %d' % (k, TY[tb], j + 1)); c = 'v%d' % k; k += 1
    lines.append('    v%d = iadd %s, %s' % (k, vn, c)); rets.append('v%d' % k); k += 1
lines += ['    return %s' % ', '.join(rets), '}']
out.append('\n'.join(lines))
def callee(args):
    res = []
    for j, tb in enumerate(RTY):
        src = j + 1
        fb = ATY[src]
        v = args[src]
        v = s(v, fb) if fb < tb else v
        res.append(u(v + j + 1, tb))
    return res
# caller: builds the 12 arguments from two values, sums the 11 results as i64 (sign-extending narrow ones)
lines = ['function %many_args_caller(i64, i32) -> i64 {',
         '    fn0 = %%many_args_callee(%s) -> %s' % (sig, rsig), '', 'block0(v0: i64, v1: i32):']
args = []
k = 100
for i, b in enumerate(ATY):
    lines.append('    v%d = iconst.i64 %d' % (k, (i + 1) * 0x0101_0101_0101_0101 & 0x7fff_ffff_ffff_ffff)); c = 'v%d' % k; k += 1
    lines.append('    v%d = iadd v0, %s' % (k, c)); w = 'v%d' % k; k += 1
    if b < 64:
        lines.append('    v%d = ireduce.%s %s' % (k, TY[b], w)); w = 'v%d' % k; k += 1
    args.append(w)
lines.append('    %s = call fn0(%s)' % (', '.join('v%d' % (300 + j) for j in range(len(RTY))), ', '.join(args)))
acc = None
k = 400
for j, tb in enumerate(RTY):
    v = 'v%d' % (300 + j)
    if tb < 64:
        lines.append('    v%d = sextend.i64 %s' % (k, v)); v = 'v%d' % k; k += 1
    if acc is None:
        acc = v
    else:
        lines.append('    v%d = iadd %s, %s' % (k, acc, v)); acc = 'v%d' % k; k += 1
lines.append('    v%d = sextend.i64 v1' % k); e = 'v%d' % k; k += 1
lines.append('    v%d = iadd %s, %s' % (k, acc, e)); acc = 'v%d' % k; k += 1
lines += ['    return %s' % acc, '}']
out.append('')
out.append('\n'.join(lines))
for x, y in [(0, 0), (1, -1), (0x7f7f_7f7f_7f7f_7f7f, 5), (-1, 0x7fffffff), (0x1234_5678_9abc_def0, -0x8000_0000)]:
    a = [u(x + ((i + 1) * 0x0101_0101_0101_0101 & 0x7fff_ffff_ffff_ffff), b) for i, b in enumerate(ATY)]
    r = callee(a)
    tot = sum(s(v, tb) for v, tb in zip(r, RTY)) + s(y, 32)
    out.append(run('many_args_caller', [(x, 64), (y, 32)], [(tot, 64)]))
out.append('')
# indirect call with stack arguments, and a stack-argument callee that itself calls
out += ['''function %ten_args_sum(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 {
block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64, v9: i64):
    v10 = iadd v0, v1
    v11 = iadd v10, v2
    v12 = iadd v11, v3
    v13 = iadd v12, v4
    v14 = iadd v13, v5
    v15 = iadd v14, v6
    v16 = iadd v15, v7
    v17 = isub v16, v8
    v18 = isub v17, v9
    return v18
}

function %ten_args_forward(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64 {
    fn0 = %ten_args_sum(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64

block0(v0: i64, v1: i64, v2: i64, v3: i64, v4: i64, v5: i64, v6: i64, v7: i64, v8: i64, v9: i64):
    v10 = call fn0(v9, v8, v7, v6, v5, v4, v3, v2, v1, v0)
    return v10
}

function %call_ten_args(i64, i64) -> i64, i64 {
    sig0 = (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
    fn0 = %ten_args_forward(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64
    fn1 = %ten_args_sum(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> i64

block0(v0: i64, v1: i64):
    v2 = iconst.i64 0x1_0000_0000
    v3 = iadd v0, v2
    v4 = iadd v1, v2
    v5 = call fn0(v0, v0, v0, v0, v0, v0, v0, v0, v3, v4)
    v6 = func_addr.i64 fn1
    v7 = call_indirect sig0, v6(v1, v1, v1, v1, v1, v1, v1, v1, v4, v3)
    return v5, v7
}''']
# forward reverses: sum(v9, v8, ..., v0) = v9+v8+...+v2 - v1 - v0
for x, y in [(1, 2), (0, 0), (-1, 0xffff_ffff)]:
    a = [x] * 8 + [x + 0x1_0000_0000, y + 0x1_0000_0000]
    r1 = sum(a[2:]) - a[1] - a[0]
    b_ = [y] * 8 + [y + 0x1_0000_0000, x + 0x1_0000_0000]
    r2 = sum(b_[:8]) - b_[8] - b_[9]
    out.append(run('call_ten_args', [(x, 64), (y, 64)], [(r1, 64), (r2, 64)]))
out.append('')
write('control/stack_args.clif', '\n'.join(out))
