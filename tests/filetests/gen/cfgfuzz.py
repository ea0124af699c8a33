import os, sys, random; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
from cmpdef import cmp, CCS

NTAB_MIN = 0
EDGE = {b: [0, 1, mask(b), smax(b), smin(b) & mask(b), 2, mask(b) - 1] for b in WIDTHS}
EDGE[64] += [0xffffffff, 0x1_0000_0000, 0x8000_0000, 0xffff_ffff_0000_0000]
EDGE[32] += [0xffff, 0x1_0000, 0x8000_0000]
EDGE[16] += [0xff, 0x100]
def rnd_val(r, b):
    return r.choice(EDGE[b]) if r.random() < 0.6 else r.getrandbits(b)

HELPER = '''function %helper(i64, i32) -> i64, i32 {
block0(v0: i64, v1: i32):
    v2 = sextend.i64 v1
    v3 = isub v0, v2
    v4 = ireduce.i32 v0
    v5 = iadd v4, v1
    return v3, v5
}'''
def helper(a, b):
    return u(a - s(b, 32), 64), u(u(a, 32) + b, 32)

class Gen:
    def __init__(self, r):
        self.r = r; self.n = 0
    def new(self):
        self.n += 1; return 'v%d' % (self.n + 99)

def gen_ops(g, vals, nops, lines, code, allow_mem, allow_call):
    r = g.r
    def pick(b=None):
        c = [v for v in vals if b is None or v[1] == b]
        return r.choice(c) if c else None
    for _ in range(nops):
        ops = ['iadd', 'iadd', 'isub', 'ineg', 'iconst', 'icmp', 'select', 'uextend', 'sextend', 'ireduce', 'iadd_k']
        if allow_mem: ops += ['store', 'load', 'load']
        if allow_call: ops += ['call']
        op = r.choice(ops)
        if op in ('iadd', 'isub'):
            a = pick(); bb = pick(a[1]); d = g.new()
            lines.append('    %s = %s %s, %s' % (d, op, a[0], bb[0])); code.append((d, op, a[0], bb[0], a[1])); vals.append((d, a[1]))
        elif op == 'iadd_k':
            a = pick(); k = rnd_val(r, a[1]); kc = g.new(); d = g.new()
            lines.append('    %s = iconst.%s %s' % (kc, TY[a[1]], fmt(k, a[1]))); code.append((kc, 'iconst', k, a[1]))
            lines.append('    %s = iadd %s, %s' % (d, a[0], kc)); code.append((d, 'iadd', a[0], kc, a[1])); vals.append((d, a[1]))
        elif op == 'ineg':
            a = pick(); d = g.new()
            lines.append('    %s = ineg %s' % (d, a[0])); code.append((d, 'ineg', a[0], a[1])); vals.append((d, a[1]))
        elif op == 'iconst':
            b = r.choice(WIDTHS); k = rnd_val(r, b); d = g.new()
            lines.append('    %s = iconst.%s %s' % (d, TY[b], fmt(k, b))); code.append((d, 'iconst', k, b)); vals.append((d, b))
        elif op == 'icmp':
            a = pick(); bb = pick(a[1]); cc = r.choice(CCS); d = g.new()
            lines.append('    %s = icmp %s %s, %s' % (d, cc, a[0], bb[0])); code.append((d, 'icmp', cc, a[0], bb[0], a[1])); vals.append((d, 8))
        elif op == 'select':
            c = pick(); a = pick(); bb = pick(a[1]); d = g.new()
            lines.append('    %s = select %s, %s, %s' % (d, c[0], a[0], bb[0])); code.append((d, 'select', c[0], c[1], a[0], bb[0])); vals.append((d, a[1]))
        elif op in ('uextend', 'sextend'):
            a = pick()
            if a[1] == 64: continue
            tb = r.choice([w for w in WIDTHS if w > a[1]]); d = g.new()
            lines.append('    %s = %s.%s %s' % (d, op, TY[tb], a[0])); code.append((d, op, a[0], a[1], tb)); vals.append((d, tb))
        elif op == 'ireduce':
            a = pick()
            if a[1] == 8: continue
            tb = r.choice([w for w in WIDTHS if w < a[1]]); d = g.new()
            lines.append('    %s = ireduce.%s %s' % (d, TY[tb], a[0])); code.append((d, 'ireduce', a[0], tb)); vals.append((d, tb))
        elif op == 'store':
            a = pick(); nb = a[1] // 8
            kind = r.choice(['store'] + (['istore8'] if a[1] > 8 else []) + (['istore16'] if a[1] > 16 else []) + (['istore32'] if a[1] > 32 else []))
            if kind != 'store': nb = int(kind[6:]) // 8
            off = r.randrange(0, 64 // nb) * nb
            big = r.random() < 0.2
            at = r.choice(['i64', 'i32'])
            lines.append('    %s %s%s %s, %s+%d' % (kind, 'big ' if big else '', '', a[0], 'v90' if at == 'i64' else 'v91', off))
            code.append((None, 'store', a[0], nb, off, big))
        elif op == 'load':
            tb = r.choice(WIDTHS)
            kinds = [('load', tb // 8, False)]
            if tb == 32: kinds += [('uload8', 1, False), ('sload8', 1, True), ('uload16', 2, False), ('sload16', 2, True)]
            if tb == 64: kinds += [('uload8', 1, False), ('sload8', 1, True), ('uload16', 2, False), ('sload16', 2, True), ('uload32', 4, False), ('sload32', 4, True)]
            kind, nb, sg = r.choice(kinds)
            off = r.randrange(0, 64 // nb) * nb
            big = r.random() < 0.2
            # (the interpreter mishandles uload32/sload32 through i32 addresses)
            at = 'i64' if kind in ('uload32', 'sload32') else r.choice(['i64', 'i32'])
            d = g.new()
            lines.append('    %s = %s.%s %s%s+%d' % (d, kind, TY[tb], 'big ' if big else '', 'v90' if at == 'i64' else 'v91', off))
            code.append((d, 'load', nb, sg, off, big, tb)); vals.append((d, tb))
        elif op == 'call':
            a = pick(64); bb = pick(32)
            if a is None or bb is None: continue
            d1 = g.new(); d2 = g.new()
            lines.append('    %s, %s = call fn0(%s, %s)' % (d1, d2, a[0], bb[0]))
            code.append(((d1, d2), 'call', a[0], bb[0])); vals.append((d1, 64)); vals.append((d2, 32))

def eval_ops(code, env, mem):
    for c in code:
        d, op = c[0], c[1]
        if op == 'iconst': env[d] = u(c[2], c[3])
        elif op == 'iadd': env[d] = u(env[c[2]] + env[c[3]], c[4])
        elif op == 'isub': env[d] = u(env[c[2]] - env[c[3]], c[4])
        elif op == 'ineg': env[d] = u(-env[c[2]], c[3])
        elif op == 'icmp': env[d] = cmp(c[2], env[c[3]], env[c[4]], c[5])
        elif op == 'select': env[d] = env[c[4]] if env[c[2]] else env[c[5]]
        elif op == 'uextend': env[d] = env[c[2]]
        elif op == 'sextend': env[d] = u(s(env[c[2]], c[3]), c[4])
        elif op == 'ireduce': env[d] = u(env[c[2]], c[3])
        elif op == 'store':
            v, nb, off, big = env[c[2]], c[3], c[4], c[5]
            bs = [(v >> (8 * i)) & 0xff for i in range(nb)]
            if big: bs.reverse()
            mem[off:off + nb] = bytes(bs)
        elif op == 'load':
            nb, sg, off, big, tb = c[2], c[3], c[4], c[5], c[6]
            bs = list(mem[off:off + nb])
            if big: bs.reverse()
            v = sum(b << (8 * i) for i, b in enumerate(bs))
            env[d] = u(s(v, 8 * nb) if sg else v, tb)
        elif op == 'call':
            x, y = helper(env[c[2]], env[c[3]])
            env[d[0]] = x; env[d[1]] = y

def gen_func(r, name):
    g = Gen(r)
    nparams = r.randint(2, 4)
    ptys = [r.choice(WIDTHS) for _ in range(nparams)]
    rtys = [r.choice(WIDTHS) for _ in range(r.randint(1, 3))]
    nblocks = r.randint(2, 6)
    bparams = [[r.choice(WIDTHS) for _ in range(r.randint(0, 3))] for _ in range(nblocks)]
    fparams = [('v%d' % i, b) for i, b in enumerate(ptys)]
    fuel0 = r.randint(1, 25)
    text = ['function %%%s(%s) -> %s {' % (name, ', '.join(TY[b] for b in ptys), ', '.join(TY[b] for b in rtys)),
            '    ss0 = explicit_slot 64', '    fn0 = %helper(i64, i32) -> i64, i32', '',
            'block0(%s):' % ', '.join('%s: %s' % (v, TY[b]) for v, b in fparams),
            '    v90 = stack_addr.i64 ss0', '    v91 = stack_addr.i32 ss0', '    v92 = iconst.i64 0']
    text += ['    store v92, v90+%d' % (8 * i) for i in range(8)]
    text += ['    v93 = iconst.i32 %d' % fuel0]
    def args_for(vals, tys):
        out = []
        extra = []
        for b in tys:
            c = [v for v in vals if v[1] == b]
            if c:
                out.append(r.choice(c)[0])
            else:
                k = rnd_val(r, b); d = g.new()
                extra.append(('    %s = iconst.%s %s' % (d, TY[b], fmt(k, b)), (d, 'iconst', k, b)))
                out.append(d)
        return out, extra
    # entry: jump to block 1 (index 0 of bparams)
    blocks = {}  # index -> dict
    entry_vals = list(fparams)
    a, extra = args_for(entry_vals, bparams[0])
    for l, c in extra: text.append(l)
    entry_code = [c for l, c in extra]
    text.append('    jump block1(v93%s)' % ''.join(', ' + x for x in a))
    entry_jump = a
    exit_id = nblocks + 1
    bl = []
    for i in range(nblocks):
        bid = i + 1
        pnames = []
        for b in bparams[i]:
            pnames.append((g.new(), b))
        fuel = g.new()
        lines = ['', 'block%d(%s: i32%s):' % (bid, fuel, ''.join(', %s: %s' % (v, TY[b]) for v, b in pnames))]
        vals = list(fparams) + pnames
        code = []
        gen_ops(g, vals, r.randint(2, 12), lines, code, True, r.random() < 0.5)
        f2 = g.new(); m1 = g.new()
        lines.append('    %s = iconst.i32 -1' % m1)
        lines.append('    %s = iadd %s, %s' % (f2, fuel, m1))
        ea, extra = args_for(vals, rtys)
        for l, c in extra: lines.append(l); code.append(c)
        disp = 100 + bid
        lines.append('    brif %s, block%d, block%d(%s)' % (f2, disp, exit_id, ', '.join(ea)))
        # dispatch block
        lines.append('')
        lines.append('block%d:' % disp)
        kind = r.choice(['jump', 'brif', 'brif', 'br_table'])
        term = None
        dcode = []
        def target():
            j = r.randrange(nblocks)
            ta, extra = args_for(vals, bparams[j])
            for l, c in extra: lines.append(l); dcode.append(c)
            return j, ta
        if kind == 'jump':
            j, ta = target()
            lines.append('    jump block%d(%s)' % (j + 1, ', '.join([f2] + ta)))
            term = ('jump', (j, ta))
        elif kind == 'brif':
            c = r.choice(vals)
            j1, t1 = target(); j2, t2 = target()
            lines.append('    brif %s, block%d(%s), block%d(%s)' % (c[0], j1 + 1, ', '.join([f2] + t1), j2 + 1, ', '.join([f2] + t2)))
            term = ('brif', c[0], (j1, t1), (j2, t2))
        else:
            c = [v for v in vals if v[1] == 32]
            if c and r.random() < 0.7:
                idx = r.choice(c)[0]
            else:
                src = r.choice(vals); idx = g.new()
                if src[1] == 64:
                    lines.append('    %s = ireduce.i32 %s' % (idx, src[0])); dcode.append((idx, 'ireduce', src[0], 32))
                elif src[1] == 32:
                    idx = src[0]
                else:
                    lines.append('    %s = uextend.i32 %s' % (idx, src[0])); dcode.append((idx, 'uextend', src[0], src[1], 32))
            ntab = r.randint(NTAB_MIN, 4)
            dflt = target()
            tab = [target() for _ in range(ntab)]
            fa = lambda t: 'block%d(%s)' % (t[0] + 1, ', '.join([f2] + t[1]))
            lines.append('    br_table %s, %s, [%s]' % (idx, fa(dflt), ', '.join(fa(t) for t in tab)))
            term = ('br_table', idx, dflt, tab)
        bl.append(dict(pnames=pnames, fuel=fuel, code=code, f2=f2, ea=ea, dcode=dcode, term=term))
        text += lines
    rv = [g.new() for _ in rtys]
    text += ['', 'block%d(%s):' % (exit_id, ', '.join('%s: %s' % (v, TY[b]) for v, b in zip(rv, rtys))),
             '    return %s' % ', '.join(rv), '}']
    def evaluate(args):
        env = {'v%d' % i: u(a_, b) for i, (a_, b) in enumerate(zip(args, ptys))}
        mem = bytearray(64)
        eval_ops(entry_code, env, mem)
        cur = 0; fuel = fuel0; bargs = [env[x] for x in entry_jump]
        steps = 0
        while True:
            steps += 1
            assert steps < 100
            B = bl[cur]
            env[B['fuel']] = fuel
            for (v, b), x in zip(B['pnames'], bargs):
                env[v] = x
            eval_ops(B['code'], env, mem)
            f2 = u(fuel - 1, 32)
            env[B['f2']] = f2
            if f2 == 0:
                return [(env[x], b) for x, b in zip(B['ea'], rtys)]
            eval_ops(B['dcode'], env, mem)
            t = B['term']
            if t[0] == 'jump':
                nxt = t[1]
            elif t[0] == 'brif':
                nxt = t[2] if env[t[1]] else t[3]
            else:
                i = env[t[1]]
                nxt = t[3][i] if i < len(t[3]) else t[2]
            cur = nxt[0]; bargs = [env[x] for x in nxt[1]]; fuel = f2
    runs = []
    for _ in range(3):
        args = [rnd_val(r, b) for b in ptys]
        runs.append(run(name, list(zip(args, ptys)), evaluate(args)))
    return '\n'.join(text + runs)

def make(path, seed, n):
    r = random.Random(seed)
    out = ['test run', '',
           ';; Randomly generated functions (fixed seed) with several blocks, block',
           ';; parameters of every width, brif / jump / br_table edges in any direction',
           ';; (loops bounded by a fuel counter), loads and stores of every width and',
           ';; endianness on a stack slot, and calls; the expected results come from a',
           ';; Python model of the control flow, the memory and the operations.', '', HELPER, '']
    for i in range(n):
        out.append(gen_func(r, 'cfg_random_%02d' % i)); out.append('')
    write(path, '\n'.join(out))

if __name__ == '__main__':
    make('control/random_cfg.clif', 777, 30)
