import os, sys, random; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
from cmpdef import cmp, CCS

EDGE = {b: [0, 1, mask(b), smax(b), smin(b) & mask(b), 2, mask(b) - 1] for b in WIDTHS}
EDGE[64] += [0xffffffff, 0x1_0000_0000, 0x8000_0000, 0xffff_ffff_0000_0000]
EDGE[32] += [0xffff, 0x1_0000, 0x8000_0000]
EDGE[16] += [0xff, 0x100]

def rnd_val(r, b):
    if r.random() < 0.6:
        return r.choice(EDGE[b])
    return r.getrandbits(b)

def gen_func(r, name, nops):
    nparams = r.randint(2, 5)
    ptys = [r.choice(WIDTHS) for _ in range(nparams)]
    vals = []  # (name, bits)
    lines = []
    code = []  # python ops: (dst, op, args...)
    for i, b in enumerate(ptys):
        vals.append(('v%d' % i, b))
    nxt = [len(ptys)]
    def new():
        v = 'v%d' % nxt[0]; nxt[0] += 1; return v
    def pick(b=None):
        c = [v for v in vals if b is None or v[1] == b]
        return r.choice(c) if c else None
    for _ in range(nops):
        op = r.choice(['iadd', 'iadd', 'isub', 'isub', 'ineg', 'iconst', 'icmp', 'select', 'select',
                       'uextend', 'sextend', 'ireduce', 'iadd_k', 'isub_k', 'icmp_k', 'spectre'])
        if op in ('iadd', 'isub'):
            a = pick(); bb = pick(a[1]); d = new()
            lines.append('    %s = %s %s, %s' % (d, op, a[0], bb[0])); code.append((d, op, a[0], bb[0], a[1])); vals.append((d, a[1]))
        elif op in ('iadd_k', 'isub_k'):
            a = pick(); k = rnd_val(r, a[1]); kc = new(); d = new()
            lines.append('    %s = iconst.%s %s' % (kc, TY[a[1]], fmt(k, a[1])))
            code.append((kc, 'iconst', k, a[1]))
            lines.append('    %s = %s %s, %s' % (d, op[:4], a[0], kc)); code.append((d, op[:4], a[0], kc, a[1])); vals.append((d, a[1]))
        elif op == 'ineg':
            a = pick(); d = new()
            lines.append('    %s = ineg %s' % (d, a[0])); code.append((d, 'ineg', a[0], a[1])); vals.append((d, a[1]))
        elif op == 'iconst':
            b = r.choice(WIDTHS); k = rnd_val(r, b); d = new()
            lines.append('    %s = iconst.%s %s' % (d, TY[b], fmt(k, b))); code.append((d, 'iconst', k, b)); vals.append((d, b))
        elif op in ('icmp', 'icmp_k'):
            a = pick(); cc = r.choice(CCS); d = new()
            if op == 'icmp':
                bb = pick(a[1])[0]
            else:
                k = rnd_val(r, a[1]); bb = new()
                lines.append('    %s = iconst.%s %s' % (bb, TY[a[1]], fmt(k, a[1]))); code.append((bb, 'iconst', k, a[1]))
            lines.append('    %s = icmp %s %s, %s' % (d, cc, a[0], bb)); code.append((d, 'icmp', cc, a[0], bb, a[1])); vals.append((d, 8))
        elif op in ('select', 'spectre'):
            c = pick(); a = pick(); bb = pick(a[1]); d = new()
            opn = 'select' if op == 'select' else 'select_spectre_guard'
            lines.append('    %s = %s %s, %s, %s' % (d, opn, c[0], a[0], bb[0])); code.append((d, 'select', c[0], c[1], a[0], bb[0])); vals.append((d, a[1]))
        elif op in ('uextend', 'sextend'):
            a = pick()
            if a[1] == 64: continue
            tb = r.choice([w for w in WIDTHS if w > a[1]]); d = new()
            lines.append('    %s = %s.%s %s' % (d, op, TY[tb], a[0])); code.append((d, op, a[0], a[1], tb)); vals.append((d, tb))
        elif op == 'ireduce':
            a = pick()
            if a[1] == 8: continue
            tb = r.choice([w for w in WIDTHS if w < a[1]]); d = new()
            lines.append('    %s = ireduce.%s %s' % (d, TY[tb], a[0])); code.append((d, 'ireduce', a[0], tb)); vals.append((d, tb))
    # results: 3 values, prefer late ones
    rets = [r.choice(vals[len(vals) // 2:]) for _ in range(3)]
    head = 'function %%%s(%s) -> %s {' % (name, ', '.join(TY[b] for b in ptys), ', '.join(TY[b] for _, b in rets))
    blk = 'block0(%s):' % ', '.join('v%d: %s' % (i, TY[b]) for i, b in enumerate(ptys))
    text = [head, blk] + lines + ['    return %s' % ', '.join(v for v, _ in rets), '}']
    def evaluate(args):
        env = {}
        for i, b in enumerate(ptys):
            env['v%d' % i] = u(args[i], b)
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
        return [(env[v], b) for v, b in rets]
    runs = []
    for _ in range(4):
        args = [rnd_val(r, b) for b in ptys]
        runs.append(run(name, list(zip(args, ptys)), evaluate(args)))
    return '\n'.join(text + runs)

def main():
  r = random.Random(20241121)
  out = ['test run', '',
         ';; Randomly generated straight-line functions (fixed seed) mixing iadd, isub,',
         ';; ineg, iconst, icmp, select, select_spectre_guard and the extensions over all',
         ';; widths; the expected results come from a Python model of the operations.', '']
  for i in range(40):
      out.append(gen_func(r, 'random_%02d' % i, r.randint(10, 40)))
      out.append('')
  write('arith/random_straight_line.clif', '\n'.join(out))

if __name__ == "__main__":
  main()
