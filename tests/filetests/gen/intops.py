"""Generates the `test run` filetests of the bitops / shifts / mul / minmax /
overflow / bits families (the `lowering.clif` compile tests are written by
hand). Expected values come from intops_model.py, an independent Python
model of the CLIF semantics, never from the compiler.

    python3 intops.py [OUTDIR [FAMILY...]]   (OUTDIR defaults to ..)
"""
import itertools, os, random, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from intops_model import *

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
TYPES = [('i8', 8), ('i16', 16), ('i32', 32), ('i64', 64)]
NB = {t: n for t, n in TYPES}

def lit(n, x): return str(s(n, x))

def edges(n):
    v = [0, 1, 2, 3, mask(n), mask(n) - 1, smin(n), smin(n) + 1, smax(n), smax(n) - 1]
    # patterns
    v += [int('5a' * (n // 8), 16), int('a5' * (n // 8), 16)]
    if n >= 16: v += [0xff, 0x100, 0x7f]
    if n >= 32: v += [0xffff, 0x10000, 0x12345678]
    if n == 64: v += [0xffffffff, 0x100000000, 0x80000000, 0x123456789abcdef0, 0xffffffff00000000]
    out = []
    for x in v:
        x = u(n, x)
        if x not in out: out.append(x)
    return out

def rnd(rng, n, k):
    out = []
    for _ in range(k):
        kind = rng.randrange(4)
        if kind == 0: x = rng.getrandbits(n)
        elif kind == 1: x = rng.getrandbits(rng.randrange(1, n + 1))
        elif kind == 2: x = -rng.getrandbits(rng.randrange(1, n))
        else: x = (1 << rng.randrange(n)) + rng.randrange(-2, 3)
        out.append(u(n, x))
    return out

def pairs(rng, n, base=None, k=24):
    e = base or [0, 1, mask(n), smin(n), smax(n), 2, smin(n) + 1]
    e = [u(n, x) for x in e]
    ps = list(itertools.product(e, e))
    r = rnd(rng, n, 2 * k)
    ps += list(zip(r[:k], r[k:]))
    out = []
    for p in ps:
        if p not in out: out.append(p)
    return out

class F:
    """One CLIF function: params (types), results (types), body(args) -> (lines, results)."""
    def __init__(self, name, params, rets, body, garbage=False, doc=None):
        self.name, self.params, self.rets, self.body, self.garbage, self.doc = name, params, rets, body, garbage, doc
        self.runs = []

    def text(self):
        ps = ', '.join(self.params)
        rs = ', '.join(self.rets)
        args = ['v%d' % i for i in range(len(self.params))]
        lines = []
        nv = [100]
        def fresh():
            nv[0] += 1
            return 'v%d' % nv[0]
        if self.garbage:
            # x + 2*MIN keeps the value and sets bits above the type's width.
            ks = {}
            for i, t in enumerate(self.params):
                if NB[t] < 32:
                    if t not in ks:
                        ks[t] = fresh()
                        lines.append('    %s = iconst.%s %d' % (ks[t], t, smin(NB[t])))
                    a1, a2 = fresh(), fresh()
                    lines.append('    %s = iadd %s, %s' % (a1, args[i], ks[t]))
                    lines.append('    %s = iadd %s, %s' % (a2, a1, ks[t]))
                    args[i] = a2
        body, res = self.body(args, fresh)
        lines += ['    ' + l for l in body]
        hdr = 'function %%%s(%s) -> %s {\nblock0(%s):\n' % (
            self.name, ps, rs, ', '.join('v%d: %s' % (i, t) for i, t in enumerate(self.params)))
        out = ''
        if self.doc: out += ''.join(';; %s\n' % d for d in self.doc)
        out += hdr + '\n'.join(lines) + '\n    return %s\n}\n' % ', '.join(res)
        for args_, rets_ in self.runs:
            a = ', '.join(lit(NB[t], x) for t, x in zip(self.params, args_))
            r = [lit(NB[t], x) for t, x in zip(self.rets, rets_)]
            r = r[0] if len(r) == 1 else '[%s]' % ', '.join(r)
            out += '; run: %%%s(%s) == %s\n' % (self.name, a, r)
        return out

def write(path, header, funcs):
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    txt = 'test run\n\n' + ''.join(';; %s\n' % h for h in header) + '\n' + '\n'.join(f.text() for f in funcs)
    open(full, 'w').write(txt)
    nruns = sum(len(f.runs) for f in funcs)
    print('%s: %d functions, %d runs' % (path, len(funcs), nruns))

GEN_NOTE = ['Expected values are computed by an independent Python model of the CLIF',
            'semantics (not by the compiler); every run is also checked against',
            'cranelift-interpreter. `_g` functions first add 2*MIN to each narrow',
            'argument: same value, garbage in the register bits above its width.']

def simple(name, inst, params, rets, ref, inputs, garbage_too=True, nres=1):
    """inst: format string with {a0} {a1}..; ref(*args) -> tuple/int"""
    fs = []
    for g in ([False, True] if garbage_too and any(NB[t] < 32 for t in params) else [False]):
        def body(args, fresh, inst=inst, nres=nres):
            outs = [fresh() for _ in range(nres)]
            return ['%s = %s' % (', '.join(outs), inst.format(*args))], outs
        f = F(name + ('_g' if g else ''), params, rets, body, garbage=g)
        for a in inputs:
            r = ref(*a)
            f.runs.append((a, r if isinstance(r, tuple) else (r,)))
        fs.append(f)
    return fs

# Each family draws its random operands from its own generator, so that
# regenerating one family leaves the others' files unchanged.
rng = None

# ---------------------------------------------------------------- bitops
def gen_bitops():
    fs = []
    for t, n in TYPES:
        ps = pairs(rng, n, k=10)
        fs += simple('band_' + t, 'band {}, {}', [t, t], [t], lambda a, b, n=n: band(n, a, b), ps)
        fs += simple('bor_' + t, 'bor {}, {}', [t, t], [t], lambda a, b, n=n: bor(n, a, b), ps)
        fs += simple('bxor_' + t, 'bxor {}, {}', [t, t], [t], lambda a, b, n=n: bxor(n, a, b), ps)
        fs += simple('bnot_' + t, 'bnot {}', [t], [t], lambda a, n=n: bnot(n, a), [(x,) for x in edges(n)])
        tri = [(c, x, y) for c in [0, mask(n), int('f0' * (n // 8), 16), 0x5a] for x, y in pairs(rng, n, k=3)[:8]]
        fs += simple('bitselect_' + t, 'bitselect {}, {}, {}', [t, t, t], [t], lambda c, x, y, n=n: bitselect(n, c, x, y), tri)
    write('bitops/logic.clif', ['band, bor, bxor, bnot, bitselect on every width.'] + GEN_NOTE, fs)

    # trees folded into LOP3 (or not): expressions over args and constants
    fs = []
    exprs = [
        ('and_xor_not', ('and', ('xor', 'a', 'b'), ('not', 'c'))),
        ('andnot', ('and', 'a', ('not', 'b'))),
        ('ornot', ('or', 'a', ('not', 'b'))),
        ('xornot', ('xor', 'a', ('not', 'b'))),
        ('notnot', ('not', ('not', 'a'))),
        ('maj', ('or', ('or', ('and', 'a', 'b'), ('and', 'a', 'c')), ('and', 'b', 'c'))),
        ('xor3', ('xor', ('xor', 'a', 'b'), 'c')),
        ('sel_xor', ('sel', 'a', ('xor', 'b', 'c'), ('not', 'c'))),
        ('k_and_or', ('or', ('and', 'a', ('k', 0x0f0f0f0f0f0f0f0f)), 'b')),
        ('k_xor_not', ('not', ('xor', 'a', ('k', 0x123456789abcdef0)))),
        ('k_two', ('and', ('or', 'a', ('k', 0xff00ff00ff00ff00)), ('xor', 'b', ('k', 0x3c3c3c3c3c3c3c3c)))),
        ('k_only', ('and', ('k', 0xf0f0), ('not', ('k', 0x3333)))),
        ('xx', ('xor', 'a', 'a')),
        ('x_or_notx', ('or', 'b', ('not', 'b'))),
        ('four', ('xor', ('and', 'a', 'b'), ('or', 'c', 'd'))),
        ('deep', ('not', ('and', ('or', ('xor', 'a', 'b'), ('not', 'a')), ('sel', 'c', 'a', ('not', 'b'))))),
        ('shared', ('xor', ('and', 'a', 'b'), ('or', ('and', 'a', 'b'), 'c'))),
    ]
    names = ['a', 'b', 'c', 'd']
    for t, n in TYPES:
        for ename, e in exprs:
            def leaves(e):
                if isinstance(e, str): return {e}
                if e[0] == 'k': return set()
                return set().union(*[leaves(x) for x in e[1:]])
            used = sorted(leaves(e))
            if not used: used = ['a']
            for g in ([False, True] if n < 32 else [False]):
                def body(args, fresh, e=e, used=used, t=t, n=n):
                    env = dict(zip(used, args))
                    lines = []
                    def emit(e):
                        if isinstance(e, str): return env[e]
                        if e[0] == 'k':
                            v = fresh(); lines.append('%s = iconst.%s %s' % (v, t, lit(n, u(n, e[1])))); return v
                        xs = [emit(x) for x in e[1:]]
                        v = fresh()
                        op = {'and': 'band', 'or': 'bor', 'xor': 'bxor', 'not': 'bnot', 'sel': 'bitselect'}[e[0]]
                        lines.append('%s = %s %s' % (v, op, ', '.join(xs)))
                        return v
                    r = emit(e)
                    return lines, [r]
                f = F('%s_%s%s' % (ename, t, '_g' if g else ''), [t] * len(used), [t], body, garbage=g)
                def ev(e, env):
                    if isinstance(e, str): return env[e]
                    if e[0] == 'k': return u(n, e[1])
                    xs = [ev(x, env) for x in e[1:]]
                    return {'and': lambda a, b: a & b, 'or': lambda a, b: a | b, 'xor': lambda a, b: a ^ b,
                            'not': lambda a: ~a, 'sel': lambda c, x, y: (c & x) | (~c & y)}[e[0]](*xs)
                vals = [0, mask(n), int('5a' * (n // 8), 16), int('c3' * (n // 8), 16), smin(n), 1] + rnd(rng, n, 6)
                for i in range(8):
                    a = tuple(vals[(i * 3 + j * 5) % len(vals)] for j in range(len(used)))
                    f.runs.append((a, (u(n, ev(e, dict(zip(used, a)))),)))
                fs.append(f)
    write('bitops/fold.clif', ['Trees of bitwise ops (folded into one LOP3 when they have at most three',
                               'distinct leaves), with constant leaves, repeated leaves, a shared subtree,',
                               'four leaves (not one LOP3), and trees that reduce to a leaf or a constant.'] + GEN_NOTE, fs)

    fs = []
    for t, n in TYPES:
        for t2, n2 in TYPES:
            vals = [0, 1, mask(n), smin(n), 0x80 if n > 8 else 2] + ([0x100000000, 0x8000] if n == 64 else [])
            vals = [u(n, v) for v in vals]
            fs += simple('bmask_%s_%s' % (t, t2), 'bmask.%s {}' % t2, [t], [t2], lambda x, n=n, n2=n2: bmask(n2, n, x), [(v,) for v in vals])
    # bmask of a compare
    def body(args, fresh):
        c, d = fresh(), fresh()
        return ['%s = icmp ult %s, %s' % (c, args[0], args[1]), '%s = bmask.i64 %s' % (d, c)], [d]
    f = F('bmask_icmp', ['i32', 'i32'], ['i64'], body)
    for a, b in [(1, 2), (2, 1), (0, 0), (0, 0xffffffff)]:
        f.runs.append(((a, b), (mask(64) if a < b else 0,)))
    fs.append(f)
    write('bitops/bmask.clif', ['bmask from every integer type to every integer type: all ones for a', 'nonzero input, 0 for zero.'] + GEN_NOTE, fs)

# ---------------------------------------------------------------- shifts
def amounts(tamt):
    na = NB[tamt]
    a = [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 257, -1, -2]
    if na == 64: a += [(1 << 32) + 3, (1 << 63) + 1]
    out = []
    for x in a:
        x = u(na, x)
        if x not in out: out.append(x)
    return out

SHIFTS = {'ishl': ishl, 'ushr': ushr, 'sshr': sshr, 'rotl': rotl, 'rotr': rotr}

def gen_shifts():
    for op, ref in SHIFTS.items():
        fs = []
        for t, n in TYPES:
            vals = [1, mask(n), smin(n), smax(n), int('81' + '00' * (n // 8 - 2) + '5a', 16) if n > 8 else 0x81, rnd(rng, n, 1)[0]]
            for tamt in (['i32', 'i8', 'i64'] if t != 'i32' else ['i32', 'i8', 'i16', 'i64']):
                ins = [(v, a) for v in vals for a in amounts(tamt)]
                ins = ins if tamt == 'i32' else ins[::3]
                fs += simple('%s_%s_%s' % (op, t, tamt), op + ' {}, {}', [t, tamt], [t],
                             lambda x, y, n=n, ref=ref: ref(n, x, y), ins)
            # constant amounts: the immediate forms
            for k in dict.fromkeys([0, 1, 3, n - 1, n, n + 1, 33, 65, -1]):
                def body(args, fresh, k=k):
                    c, d = fresh(), fresh()
                    return ['%s = iconst.i32 %d' % (c, s(32, k)), '%s = %s %s, %s' % (d, op, args[0], c)], [d]
                for g in ([False, True] if n < 32 else [False]):
                    f = F('%s_%s_k%s%s' % (op, t, str(k).replace('-', 'm'), '_g' if g else ''), [t], [t], body, garbage=g)
                    for v in vals:
                        f.runs.append(((v,), (ref(n, v, u(32, k)),)))
                    fs.append(f)
            # an i64 constant amount whose high word is set
            def body(args, fresh):
                c, d = fresh(), fresh()
                return ['%s = iconst.i64 0x100000003' % c, '%s = %s %s, %s' % (d, op, args[0], c)], [d]
            f = F('%s_%s_kbig' % (op, t), [t], [t], body)
            for v in vals:
                f.runs.append(((v,), (ref(n, v, (1 << 32) + 3),)))
            fs.append(f)
        write('shifts/%s.clif' % op, ['%s on every width, by amounts of every integer type (taken mod the' % op,
                                      'width), by registers and by constants (SHF immediates).'] + GEN_NOTE, fs)

# ---------------------------------------------------------------- mul
def gen_mul():
    fs = []
    for t, n in TYPES:
        ps = pairs(rng, n, k=16)
        fs += simple('imul_' + t, 'imul {}, {}', [t, t], [t], lambda a, b, n=n: imul(n, a, b), ps)
        for k in [3, -1, 0x7f, -128, 0x12345, -0x80000000, 0x100000003, 0x7fffffffffffffff, 0xdeadbeefcafef00d]:
            kk = u(n, k)
            def body(args, fresh, kk=kk, t=t, n=n):
                c, d, e = fresh(), fresh(), fresh()
                return ['%s = iconst.%s %s' % (c, t, lit(n, kk)), '%s = imul %s, %s' % (d, args[0], c), '%s = imul %s, %s' % (e, c, d)], [e]
            for g in ([False, True] if n < 32 else [False]):
                f = F('imul_%s_k%x%s' % (t, u(64, k), '_g' if g else ''), [t], [t], body, garbage=g)
                for v in edges(n)[:8]:
                    f.runs.append(((v,), (imul(n, kk, imul(n, v, kk)),)))
                fs.append(f)
    write('mul/imul.clif', ['imul on every width, by registers and by constants (IMAD immediates;', 'constant on either side).'] + GEN_NOTE, fs)

    fs = []
    for t, n in TYPES:
        ps = pairs(rng, n, base=[0, 1, 2, mask(n), smin(n), smax(n), smin(n) + 1, 3], k=24)
        fs += simple('umulhi_' + t, 'umulhi {}, {}', [t, t], [t], lambda a, b, n=n: umulhi(n, a, b), ps)
        fs += simple('smulhi_' + t, 'smulhi {}, {}', [t, t], [t], lambda a, b, n=n: smulhi(n, a, b), ps)
    write('mul/mulhi.clif', ['umulhi and smulhi on every width (the high half of the double-width', 'product).'] + GEN_NOTE, fs)

    fs = []
    for t, n in TYPES:
        fs += simple('iabs_' + t, 'iabs {}', [t], [t], lambda a, n=n: iabs(n, a), [(x,) for x in edges(n) + rnd(rng, n, 6)])
    write('mul/iabs.clif', ['iabs on every width (INT_MIN stays INT_MIN).'] + GEN_NOTE, fs)

# ---------------------------------------------------------------- minmax
def gen_minmax():
    fs = []
    for t, n in TYPES:
        ps = pairs(rng, n, base=[0, 1, mask(n), smin(n), smax(n), smax(n) + 2, 5], k=12)
        for op, ref in [('smin', smin_), ('smax', smax_), ('umin', umin), ('umax', umax)]:
            fs += simple('%s_%s' % (op, t), op + ' {}, {}', [t, t], [t], lambda a, b, n=n, ref=ref: ref(n, a, b), ps)
            for k in [5, -1, smin(n)]:
                kk = u(n, k)
                def body(args, fresh, kk=kk, t=t, n=n, op=op):
                    c, d, e = fresh(), fresh(), fresh()
                    return ['%s = iconst.%s %s' % (c, t, lit(n, kk)), '%s = %s %s, %s' % (d, op, args[0], c),
                            '%s = %s %s, %s' % (e, op, c, args[1])], [d, e]
                for g in ([False, True] if n < 32 else [False]):
                    f = F('%s_%s_k%x%s' % (op, t, kk, '_g' if g else ''), [t, t], [t, t], body, garbage=g)
                    for a, b in ps[:12]:
                        f.runs.append(((a, b), (ref(n, a, kk), ref(n, kk, b))))
                    fs.append(f)
    write('minmax/minmax.clif', ['smin, smax, umin, umax on every width, also with a constant operand on', 'either side.'] + GEN_NOTE, fs)

# ---------------------------------------------------------------- overflow
def gen_overflow():
    fs = []
    for op, ref in [('uadd_overflow', uadd_overflow), ('sadd_overflow', sadd_overflow),
                    ('usub_overflow', usub_overflow), ('ssub_overflow', ssub_overflow)]:
        for t, n in TYPES:
            ps = pairs(rng, n, base=[0, 1, mask(n), smin(n), smax(n), 2, mask(n) - 1, smin(n) + 1], k=12)
            fs += simple('%s_%s' % (op, t), op + ' {}, {}', [t, t], [t, 'i8'], lambda a, b, n=n, ref=ref: ref(n, a, b), ps, nres=2)
    write('overflow/add_sub.clif', ['uadd_overflow, sadd_overflow, usub_overflow, ssub_overflow on every', 'width: the wrapped result and the overflow flag (0 or 1).'] + GEN_NOTE, fs)

    fs = []
    for op, ref in [('umul_overflow', umul_overflow), ('smul_overflow', smul_overflow)]:
        for t, n in TYPES:
            b = [0, 1, 2, mask(n), smin(n), smax(n), smin(n) + 1, 1 << (n // 2), (1 << (n // 2)) - 1, 1 << (n // 2 - 1), 3]
            ps = pairs(rng, n, base=b, k=16)
            fs += simple('%s_%s' % (op, t), op + ' {}, {}', [t, t], [t, 'i8'], lambda a, b, n=n, ref=ref: ref(n, a, b), ps, nres=2)
    write('overflow/mul.clif', ['umul_overflow and smul_overflow on every width.'] + GEN_NOTE, fs)

    fs = []
    for op, ref in [('uadd_overflow_cin', uadd_overflow_cin), ('sadd_overflow_cin', sadd_overflow_cin),
                    ('usub_overflow_bin', usub_overflow_bin), ('ssub_overflow_bin', ssub_overflow_bin)]:
        for t, n in TYPES:
            ps = pairs(rng, n, base=[0, 1, mask(n), smin(n), smax(n), mask(n) - 1, smin(n) + 1], k=6)
            ins = [(a, b, c) for a, b in ps for c in (0, 1)] + [(a, b, c) for (a, b), c in zip(ps[::5], itertools.cycle([2, 0xff, 0x80]))]
            fs += simple('%s_%s' % (op, t), op + ' {}, {}, {}', [t, t, 'i8'], [t, 'i8'],
                         lambda a, b, c, n=n, ref=ref: ref(n, a, b, c), ins, nres=2)
    # chained: 64-bit add as two i32 with carry, 128-bit style
    def body(args, fresh):
        lo, c, hi, c2 = fresh(), fresh(), fresh(), fresh()
        return ['%s, %s = uadd_overflow %s, %s' % (lo, c, args[0], args[2]),
                '%s, %s = uadd_overflow_cin %s, %s, %s' % (hi, c2, args[1], args[3], c)], [lo, hi, c2]
    f = F('add64_by_halves', ['i32'] * 4, ['i32', 'i32', 'i8'], body)
    for a, b in [(0xffffffffffffffff, 1), (0x00000001ffffffff, 1), (0x123456789abcdef0, 0xfedcba9876543210), (0, 0), (0x8000000080000000, 0x8000000080000000)]:
        t_ = a + b
        f.runs.append(((a & mask(32), a >> 32, b & mask(32), b >> 32), (t_ & mask(32), (t_ >> 32) & mask(32), t_ >> 64)))
    fs.append(f)
    def body(args, fresh):
        lo, c, hi, c2 = fresh(), fresh(), fresh(), fresh()
        return ['%s, %s = usub_overflow %s, %s' % (lo, c, args[0], args[2]),
                '%s, %s = ssub_overflow_bin %s, %s, %s' % (hi, c2, args[1], args[3], c)], [lo, hi, c2]
    f = F('ssub64_by_halves', ['i32'] * 4, ['i32', 'i32', 'i8'], body)
    for a, b in [(0, 1), (0x8000000000000000, 1), (0x7fffffffffffffff, 0xffffffffffffffff), (0x123456789abcdef0, 0x0fedcba987654321), (5, 5)]:
        lo, bo = usub_overflow(32, a & mask(32), b & mask(32))
        hi, f2 = ssub_overflow_bin(32, a >> 32, b >> 32, bo)
        f.runs.append(((a & mask(32), a >> 32, b & mask(32), b >> 32), (lo, hi, f2)))
    fs.append(f)
    write('overflow/carry.clif', ['uadd_overflow_cin, sadd_overflow_cin, usub_overflow_bin,',
                                  'ssub_overflow_bin on every width, with carry/borrow inputs 0, 1 and other',
                                  'nonzero values (which count as 1); multi-word chains.',
                                  'The signed forms report overflow when either step (x op y, then the',
                                  'carry) overflows, as cranelift-interpreter does.'] + GEN_NOTE, fs)

    fs = []
    for t, n in [('i32', 32), ('i64', 64)]:
        ins = [(0, 0), (1, 2), (mask(n) - 1, 1), (smax(n), smax(n)), (1 << (n - 1), (1 << (n - 1)) - 1), (mask(n), 0)]
        fs += simple('uadd_overflow_trap_' + t, 'uadd_overflow_trap {}, {}, user1', [t, t], [t], lambda a, b, n=n: u(n, a + b), ins)
    write('overflow/trap.clif', ['uadd_overflow_trap (i32, i64) on sums that do not overflow (a run that',
                                 'traps cannot be expressed as a `run:` line; see lowering.clif for the trap).'] + GEN_NOTE, fs)

# ---------------------------------------------------------------- bits
def gen_bits():
    fs = []
    for t, n in TYPES:
        vals = edges(n) + rnd(rng, n, 10) + [1 << i for i in range(0, n, 7)] + [mask(n) >> i for i in range(1, n, 9)] + [u(n, -(1 << i)) for i in range(0, n, 5)]
        vals = list(dict.fromkeys(vals))
        for op, ref in [('clz', clz), ('ctz', ctz), ('cls', cls), ('popcnt', popcnt)]:
            fs += simple('%s_%s' % (op, t), op + ' {}', [t], [t], lambda x, n=n, ref=ref: ref(n, x), [(v,) for v in vals])
    write('bits/counts.clif', ['clz, ctz, cls, popcnt on every width.'] + GEN_NOTE, fs)
    fs = []
    for t, n in TYPES:
        vals = edges(n) + rnd(rng, n, 8)
        vals = list(dict.fromkeys(vals))
        fs += simple('bitrev_' + t, 'bitrev {}', [t], [t], lambda x, n=n: bitrev(n, x), [(v,) for v in vals])
        if n > 8:
            fs += simple('bswap_' + t, 'bswap {}', [t], [t], lambda x, n=n: bswap(n, x), [(v,) for v in vals])
    write('bits/reverse.clif', ['bitrev on every width, bswap on i16, i32, i64.'] + GEN_NOTE, fs)

for g in sys.argv[2:] or ['bitops', 'shifts', 'mul', 'minmax', 'overflow', 'bits']:
    rng = random.Random('intops-' + g)
    globals()['gen_' + g]()
