#!/usr/bin/env python3
"""Generates the i128 filetests (tests/filetests/i128/*.clif); run from anywhere.

Expected values are computed here with Python's unbounded integers from the
CLIF definitions (independently of the compiler); every run line is also
checked against cranelift-interpreter by `ursa test`. Operands are edge values
(0, 1, -1, MIN, MAX, values straddling the 64-bit boundary, byte patterns)
and a few random ones from a fixed seed. Trapping divisions cannot be run
lines: backend/tests/i128.rs tests them.
"""
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'i128')
M128 = (1 << 128) - 1


def u(x, n=128):
    return x & ((1 << n) - 1)


def s(x, n=128):
    x = u(x, n)
    return x - (1 << n) if x >> (n - 1) else x


def lit(x, n=128):
    """A literal of type i<n>: small values in signed decimal, others in hex."""
    v = s(x, n)
    if abs(v) < 1 << 16:
        return str(v)
    h = '%x' % u(x, n)
    groups = []
    while h:
        groups.insert(0, h[-8:])
        h = h[:-8]
    return '0x' + '_'.join(groups)


EDGES = [0, 1, 2, M128, M128 - 1, 1 << 127, (1 << 127) + 1, (1 << 127) - 1,
         (1 << 64) - 1, 1 << 64, (1 << 64) + 1, 1 << 63, (1 << 63) - 1,
         u(-(1 << 64)), u(-(1 << 63)), 0x0123456789abcdef_fedcba9876543210,
         int('5a' * 16, 16), int('a5' * 16, 16), 0xffffffff_00000000_ffffffff_00000000, 100]

rng = random.Random(128)


def rand128():
    k = rng.choice([8, 32, 63, 64, 65, 100, 127, 128])
    x = rng.getrandbits(k)
    return u(-x) if rng.random() < 0.3 else x


def pairs(k_edges=12, k_rand=24):
    e = EDGES[:k_edges]
    ps = [(a, b) for a in e for b in e]
    ps += [(rand128(), rand128()) for _ in range(k_rand)]
    ps += [(rand128(), rng.choice(EDGES)) for _ in range(k_rand // 2)]
    return ps


class F:
    def __init__(self, name, params, rets, body):
        self.name, self.params, self.rets, self.body = name, params, rets, body
        self.runs = []

    def text(self):
        bits = {'i8': 8, 'i16': 16, 'i32': 32, 'i64': 64, 'i128': 128}
        out = 'function %%%s(%s) -> %s {\nblock0(%s):\n' % (
            self.name, ', '.join(self.params), ', '.join(self.rets),
            ', '.join('v%d: %s' % (i, t) for i, t in enumerate(self.params)))
        out += ''.join('    %s\n' % l for l in self.body.strip('\n').split('\n'))
        out += '}\n'
        for a, r in self.runs:
            al = ', '.join(lit(x, bits[t]) for x, t in zip(a, self.params))
            rl = [lit(x, bits[t]) for x, t in zip(r, self.rets)]
            out += '; run: %%%s(%s) == %s\n' % (self.name, al, rl[0] if len(rl) == 1 else '[%s]' % ', '.join(rl))
        return out


def write(name, header, funcs):
    os.makedirs(OUT, exist_ok=True)
    txt = 'test run\n\n' + ''.join(';; %s\n' % h for h in header) + '\n' + '\n'.join(f.text() for f in funcs)
    with open(os.path.join(OUT, name), 'w') as fh:
        fh.write(txt)
    print('%s: %d functions, %d runs' % (name, len(funcs), sum(len(f.runs) for f in funcs)))


NOTE = ['Expected values: tests/filetests/gen/i128.py (Python integers), every run',
        'also checked against cranelift-interpreter.']


def binop(name, op, ref, ps, t='i128', rt='i128'):
    f = F(name, [t, t], [rt], 'v2 = %s v0, v1\nreturn v2' % op)
    f.runs = [((a, b), (ref(a, b),)) for a, b in ps]
    return f


def unop(name, op, ref, xs, rt='i128'):
    f = F(name, ['i128'], [rt], 'v1 = %s v0\nreturn v1' % op)
    f.runs = [((a,), (ref(a),)) for a in xs]
    return f


def gen_arith():
    ps = pairs()
    fs = [
        binop('iadd', 'iadd', lambda a, b: u(a + b), ps),
        binop('isub', 'isub', lambda a, b: u(a - b), ps),
        binop('imul', 'imul', lambda a, b: u(a * b), ps),
        # cranelift-interpreter 0.135 cannot run umulhi/smulhi.i128 (these lines
        # are checked against the expected values only; backend/tests/i128.rs
        # compares more operands with a Rust reference).
        binop('umulhi', 'umulhi', lambda a, b: (a * b) >> 128, ps[::4]),
        binop('smulhi', 'smulhi', lambda a, b: u((s(a) * s(b)) >> 128), ps[::4]),
        binop('band', 'band', lambda a, b: a & b, ps[:60]),
        binop('bor', 'bor', lambda a, b: a | b, ps[:60]),
        binop('bxor', 'bxor', lambda a, b: a ^ b, ps[:60]),
        binop('smin', 'smin', lambda a, b: u(min(s(a), s(b))), ps),
        binop('smax', 'smax', lambda a, b: u(max(s(a), s(b))), ps),
        binop('umin', 'umin', lambda a, b: min(a, b), ps),
        binop('umax', 'umax', lambda a, b: max(a, b), ps),
        unop('ineg', 'ineg', lambda a: u(-a), EDGES),
        unop('iabs', 'iabs', lambda a: u(abs(s(a))), EDGES),
        unop('bnot', 'bnot', lambda a: u(~a), EDGES),
    ]
    # band_not / bor_not / bxor_not (written with bnot: CLIF 0.135 has no fused opcodes)
    for nm, op, ref in [('band_not', 'band', lambda a, b: a & u(~b)), ('bor_not', 'bor', lambda a, b: a | u(~b)),
                        ('bxor_not', 'bxor', lambda a, b: a ^ u(~b))]:
        f = F(nm, ['i128', 'i128'], ['i128'], 'v2 = bnot v1\nv3 = %s v0, v2\nreturn v3' % op)
        f.runs = [((a, b), (ref(a, b),)) for a, b in ps[:40]]
        fs.append(f)
    f = F('bitselect', ['i128', 'i128', 'i128'], ['i128'], 'v3 = bitselect v0, v1, v2\nreturn v3')
    f.runs = [((c, a, b), ((c & a) | (u(~c) & b),)) for c in [0, M128, EDGES[15], EDGES[16]] for a, b in ps[:10]]
    fs.append(f)
    # constants: an i128 built from two i64 constants, and extended i64 constants
    f = F('const_concat', [], ['i128'], 'v0 = iconst.i64 0x7654_3210_fedc_ba98\nv1 = iconst.i64 -2\nv2 = iconcat v0, v1\nreturn v2')
    f.runs = [((), ((u(-2, 64) << 64) | 0x76543210fedcba98,))]
    fs.append(f)
    f = F('const_sext_add', ['i128'], ['i128'], 'v1 = iconst.i64 -5\nv2 = sextend.i128 v1\nv3 = iadd v0, v2\nreturn v3')
    f.runs = [((a,), (u(a - 5),)) for a in EDGES]
    fs.append(f)
    f = F('const_uext_mul', ['i128'], ['i128'], 'v1 = iconst.i64 -5\nv2 = uextend.i128 v1\nv3 = imul v0, v2\nreturn v3')
    f.runs = [((a,), (u(a * u(-5, 64)),)) for a in EDGES]
    fs.append(f)
    # i64 widening multiplication through i128 (IMAD.WIDE-style partial products)
    for nm, ext, ref in [('umul_wide', 'uextend', lambda a, b: u(a, 64) * u(b, 64)),
                         ('smul_wide', 'sextend', lambda a, b: u(s(a, 64) * s(b, 64)))]:
        f = F(nm, ['i64', 'i64'], ['i128'], 'v2 = %s.i128 v0\nv3 = %s.i128 v1\nv4 = imul v2, v3\nreturn v4' % (ext, ext))
        e64 = [0, 1, u(-1, 64), 1 << 63, (1 << 63) - 1, 0xffffffff, 1 << 32, 0x123456789abcdef0, u(-3, 64)]
        f.runs = [((a, b), (ref(a, b),)) for a in e64 for b in e64]
        fs.append(f)
    write('arith.clif', ['iadd isub imul umulhi smulhi (carry chains, partial products), logic, min/max, ineg,',
                         'iabs, constants through iconcat/extends, i64 x i64 -> i128 products.'] + NOTE, fs)


CCS = {'eq': lambda a, b: a == b, 'ne': lambda a, b: a != b,
       'slt': lambda a, b: s(a) < s(b), 'sle': lambda a, b: s(a) <= s(b),
       'sgt': lambda a, b: s(a) > s(b), 'sge': lambda a, b: s(a) >= s(b),
       'ult': lambda a, b: a < b, 'ule': lambda a, b: a <= b,
       'ugt': lambda a, b: a > b, 'uge': lambda a, b: a >= b}


def gen_icmp():
    ps = pairs(k_edges=14, k_rand=16)
    # equal halves on one side only
    ps += [(a, a ^ (1 << k)) for a in [0, M128, 1 << 64] for k in [0, 63, 64, 127]]
    fs = []
    for cc, ref in CCS.items():
        f = F('icmp_' + cc, ['i128', 'i128'], ['i8'], 'v2 = icmp %s v0, v1\nreturn v2' % cc)
        f.runs = [((a, b), (int(ref(a, b)),)) for a, b in ps]
        fs.append(f)
    # select of i128 values, by an i128 compare
    f = F('select_slt', ['i128', 'i128'], ['i128'], 'v2 = icmp slt v0, v1\nv3 = select v2, v0, v1\nreturn v3')
    f.runs = [((a, b), (a if s(a) < s(b) else b,)) for a, b in ps[:50]]
    fs.append(f)
    # an i128 condition (nonzero in either half)
    f = F('select_cond128', ['i128', 'i32', 'i32'], ['i32'], 'v3 = select v0, v1, v2\nreturn v3')
    f.runs = [((c, 42, 97), (42 if c else 97,)) for c in [0, 1, 1 << 64, 1 << 127, M128, 1 << 63]]
    fs.append(f)
    f = F('select_i128_by_i128', ['i128', 'i128', 'i128'], ['i128'], 'v3 = select v0, v1, v2\nreturn v3')
    f.runs = [((c, a, b), (a if c else b,)) for c in [0, 1 << 64, 1] for a, b in ps[:6]]
    fs.append(f)
    f = F('brif_cond128', ['i128'], ['i32'],
          'brif v0, block1, block2\nblock1:\nv1 = iconst.i32 1\nreturn v1\nblock2:\nv2 = iconst.i32 2\nreturn v2')
    f.runs = [((c,), (1 if c else 2,)) for c in [0, 1, 1 << 64, 1 << 127, M128]]
    fs.append(f)
    f = F('bmask_to_i32', ['i128'], ['i32'], 'v1 = bmask.i32 v0\nreturn v1')
    f.runs = [((c,), (u(-1, 32) if c else 0,)) for c in [0, 1, 1 << 64, 1 << 127, M128]]
    fs.append(f)
    f = F('bmask_from_i8', ['i8'], ['i128'], 'v1 = bmask.i128 v0\nreturn v1')
    f.runs = [((c,), (M128 if c else 0,)) for c in [0, 1, 0x80, 0xff]]
    fs.append(f)
    f = F('bmask_128', ['i128'], ['i128'], 'v1 = bmask.i128 v0\nreturn v1')
    f.runs = [((c,), (M128 if c else 0,)) for c in [0, 1, 1 << 64, 1 << 127]]
    fs.append(f)
    write('icmp.clif', ['icmp (all ten conditions), select and brif on i128, bmask.'] + NOTE, fs)


def rotl(x, k):
    k %= 128
    return u((x << k) | (x >> (128 - k))) if k else x


def gen_shifts():
    amounts = [0, 1, 2, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 191, 192, 255, 300]
    xs = [1, M128, 1 << 127, 0x0123456789abcdef_fedcba9876543210, (1 << 64) - 1, 1 << 64, int('a5' * 16, 16)]
    fs = []
    refs = {'ishl': lambda x, k: u(x << (k % 128)),
            'ushr': lambda x, k: x >> (k % 128),
            'sshr': lambda x, k: u(s(x) >> (k % 128)),
            'rotl': rotl,
            'rotr': lambda x, k: rotl(x, 128 - k % 128)}
    for op, ref in refs.items():
        for at, an in [('i128', 128), ('i64', 64), ('i32', 32), ('i8', 8)]:
            f = F('%s_%s' % (op, at), ['i128', at], ['i128'], 'v2 = %s v0, v1\nreturn v2' % op)
            ams = [k for k in amounts if k < (1 << an)]
            if at == 'i128':
                ams += [(1 << 64) + 3, (1 << 100) | 65, M128]
            f.runs = [((x, k), (ref(x, k),)) for x in xs for k in ams]
            fs.append(f)
        # by a constant
        for k in [0, 1, 63, 64, 65, 127, 130]:
            f = F('%s_const_%d' % (op, k), ['i128'], ['i128'], 'v1 = iconst.i32 %d\nv2 = %s v0, v1\nreturn v2' % (k, op))
            f.runs = [((x,), (ref(x, k),)) for x in xs]
            fs.append(f)
    # narrow values shifted by an i128 amount (the amount's low bits count)
    for op, n, t in [('ishl', 32, 'i32'), ('sshr', 16, 'i16'), ('rotr', 64, 'i64'), ('rotl', 8, 'i8')]:
        f = F('%s_%s_by_i128' % (op, t), [t, 'i128'], [t], 'v2 = %s v0, v1\nreturn v2' % op)
        x = u(0x8123456789abcdef, n)
        def r(k, op=op, n=n, x=x):
            k %= n
            if op == 'ishl': return u(x << k, n)
            if op == 'sshr': return u(s(x, n) >> k, n)
            rl = (lambda x, k: u((x << k) | (x >> (n - k)), n) if k else x)
            return rl(x, k) if op == 'rotl' else rl(x, (n - k) % n)
        f.runs = [((x, k), (r(k),)) for k in [0, 1, n - 1, n, n + 1, (1 << 64) + 5, 1 << 127, M128]]
        fs.append(f)
    write('shifts.clif', ['ishl ushr sshr rotl rotr of i128 by amounts of every type (mod 128),',
                          'by constants, and narrow values shifted by i128 amounts.'] + NOTE, fs)


def clz(x): return 128 - x.bit_length()


def ctz(x): return 128 if x == 0 else (x & -x).bit_length() - 1


def cls(x): return clz(x ^ u(s(x) >> 127)) - 1


def bitrev(x): return int('{:0128b}'.format(x)[::-1], 2)


def bswap(x): return int.from_bytes(x.to_bytes(16, 'little'), 'big')


def gen_bits():
    xs = EDGES + [1 << k for k in [0, 1, 62, 63, 64, 65, 126, 127]] + [u(-(1 << k)) for k in [1, 63, 64, 65, 126]] + [rand128() for _ in range(12)]
    fs = [unop('clz', 'clz', clz, xs), unop('ctz', 'ctz', ctz, xs), unop('cls', 'cls', cls, xs),
          unop('popcnt', 'popcnt', lambda x: bin(x).count('1'), xs), unop('bitrev', 'bitrev', bitrev, xs),
          unop('bswap', 'bswap', bswap, xs)]
    write('bits.clif', ['clz ctz cls popcnt bitrev bswap of i128.'] + NOTE, fs)


def gen_extend():
    fs = []
    for t, n in [('i8', 8), ('i16', 16), ('i32', 32), ('i64', 64)]:
        xs = [0, 1, (1 << n) - 1, 1 << (n - 1), (1 << (n - 1)) - 1, 0x5a5a5a5a5a5a5a5a & ((1 << n) - 1)]
        f = F('uextend_' + t, [t], ['i128'], 'v1 = uextend.i128 v0\nreturn v1')
        f.runs = [((x,), (x,)) for x in xs]
        fs.append(f)
        f = F('sextend_' + t, [t], ['i128'], 'v1 = sextend.i128 v0\nreturn v1')
        f.runs = [((x,), (u(s(x, n)),)) for x in xs]
        fs.append(f)
        f = F('ireduce_' + t, ['i128'], [t], 'v1 = ireduce.%s v0\nreturn v1' % t)
        f.runs = [((x,), (u(x, n),)) for x in EDGES]
        fs.append(f)
    f = F('iconcat', ['i64', 'i64'], ['i128'], 'v2 = iconcat v0, v1\nreturn v2')
    f.runs = [((a, b), ((b << 64) | a,)) for a in [0, 1, u(-1, 64), 1 << 63] for b in [0, 1, u(-1, 64), 1 << 63]]
    fs.append(f)
    f = F('isplit', ['i128'], ['i64', 'i64'], 'v1, v2 = isplit v0\nreturn v1, v2')
    f.runs = [((x,), (u(x, 64), x >> 64)) for x in EDGES]
    fs.append(f)
    f = F('isplit_swap', ['i128'], ['i128'], 'v1, v2 = isplit v0\nv3 = iconcat v2, v1\nreturn v3')
    f.runs = [((x,), (((x & ((1 << 64) - 1)) << 64) | (x >> 64),)) for x in EDGES]
    fs.append(f)
    for t, n in [('i8', 8), ('i16', 16), ('i32', 32), ('i64', 64), ('i128', 128)]:
        f = F('bitcast_' + t, [t], [t], 'v1 = bitcast.%s v0\nreturn v1' % t)
        f.runs = [((x,), (x,)) for x in sorted({u(e, n) for e in EDGES[:8]})]
        fs.append(f)
    write('extend.clif', ['uextend/sextend to i128, ireduce from i128, iconcat, isplit, and',
                          'bitcast between equal integer types (a copy).'] + NOTE, fs)


def gen_div():
    ps = [(a, b) for a, b in pairs(k_edges=14, k_rand=30) if b != 0]
    def sdiv(a, b):
        a, b = s(a), s(b)
        q = abs(a) // abs(b)
        return u(-q if (a < 0) != (b < 0) else q)
    def srem(a, b):
        a, b = s(a), s(b)
        r = abs(a) % abs(b)
        return u(-r if a < 0 else r)
    sps = [(a, b) for a, b in ps if not (a == 1 << 127 and b == M128)]
    fs = [binop('udiv', 'udiv', lambda a, b: a // b, ps), binop('urem', 'urem', lambda a, b: a % b, ps),
          binop('sdiv', 'sdiv', sdiv, sps), binop('srem', 'srem', srem, sps)]
    # a division inside a loop, with the quotient a block parameter
    f = F('div_loop', ['i128', 'i128'], ['i128'],
          'jump block1(v0)\nblock1(v2: i128):\nv3 = udiv v2, v1\nv4 = icmp ugt v3, v1\nbrif v4, block1(v3), block2(v3)\n'
          'block2(v5: i128):\nreturn v5')
    def dl(a, b):
        a = a // b
        while a > b:
            a = a // b
        return a
    f.runs = [((a, b), (dl(a, b),)) for a, b in [(M128, 3), (M128, 1 << 64), (1 << 100, 1000), (5, 7), (M128, (1 << 64) + 1)]]
    fs.append(f)
    write('div.clif', ['udiv urem sdiv srem of i128 (the shift-subtract loop on the halves).',
                       'Traps (zero divisor, sdiv MIN / -1) and srem MIN, -1: backend/tests/i128.rs.'] + NOTE, fs)


def gen_overflow():
    ps = pairs(k_edges=12, k_rand=12)
    fs = []
    def sv(x): return -(1 << 127) <= x < (1 << 127)
    refs = {'uadd_overflow': lambda a, b: (u(a + b), int(a + b > M128)),
            'sadd_overflow': lambda a, b: (u(a + b), int(not sv(s(a) + s(b)))),
            'usub_overflow': lambda a, b: (u(a - b), int(a < b)),
            'ssub_overflow': lambda a, b: (u(a - b), int(not sv(s(a) - s(b))))}
    for op, ref in refs.items():
        f = F(op, ['i128', 'i128'], ['i128', 'i8'], 'v2, v3 = %s v0, v1\nreturn v2, v3' % op)
        f.runs = [((a, b), ref(a, b)) for a, b in ps]
        fs.append(f)
    # The carry-in forms, as CLIF defines them (cranelift-interpreter; the
    # i32/i64 rules agree): the flag is the overflow of a +- b, or of that
    # wrapped result +- the carry (two steps). Unsigned, that is the exact carry.
    def sadd_cin(a, b, c):
        t = s(a) + s(b)
        return (u(t + c), int(not sv(t) or not sv(s(u(t)) + c)))
    def ssub_bin(a, b, c):
        t = s(a) - s(b)
        return (u(t - c), int(not sv(t) or not sv(s(u(t)) - c)))
    cin = {'uadd_overflow_cin': lambda a, b, c: (u(a + b + c), int(a + b + c > M128)),
           'sadd_overflow_cin': sadd_cin,
           'usub_overflow_bin': lambda a, b, c: (u(a - b - c), int(a < b + c)),
           'ssub_overflow_bin': ssub_bin}
    for op, ref in cin.items():
        f = F(op, ['i128', 'i128', 'i8'], ['i128', 'i8'], 'v3, v4 = %s v0, v1, v2\nreturn v3, v4' % op)
        f.runs = [((a, b, c), ref(a, b, c)) for a, b in ps[:40] for c in [0, 1]]
        fs.append(f)
    write('overflow.clif', ['uadd/sadd/usub/ssub_overflow (and the carry/borrow-in forms) on i128',
                            '(uadd_overflow_trap, umul_overflow and smul_overflow have no i128 form in CLIF).'] + NOTE, fs)


def gen_memory_calls():
    fs = []
    # written by hand below: stack slots, loads/stores through pointers, calls, block params
    text = '''function %store_load(i128, i128) -> i128 {
    ss0 = explicit_slot 48, align = 16
block0(v0: i128, v1: i128):
    v2 = stack_addr.i64 ss0
    store v0, v2+8
    store v1, v2+24
    v3 = load.i128 v2+8
    v4 = load.i128 v2+24
    v5 = isub v3, v4
    return v5
}
'''
    mem = [(EDGES[i], EDGES[j]) for i in range(0, 20, 3) for j in range(1, 20, 4)]
    text += ''.join('; run: %%store_load(%s, %s) == %s\n' % (lit(a), lit(b), lit(u(a - b))) for a, b in mem)
    text += '''
function %halves_in_memory(i128) -> i64, i64, i8 {
    ss0 = explicit_slot 16, align = 16
block0(v0: i128):
    v1 = stack_addr.i64 ss0
    store v0, v1
    v2 = load.i64 v1
    v3 = load.i64 v1+8
    v4 = load.i8 v1+15
    return v2, v3, v4
}
'''
    text += ''.join('; run: %%halves_in_memory(%s) == [%s, %s, %s]\n' % (lit(x), lit(u(x, 64), 64), lit(x >> 64, 64), lit(x >> 120, 8)) for x in EDGES)
    text += '''
function %callee(i32, i128, i64, i128) -> i128, i32 {
block0(v0: i32, v1: i128, v2: i64, v3: i128):
    v4 = uextend.i128 v2
    v5 = iadd v1, v4
    v6 = imul v5, v3
    v7 = iadd_imm v0, 1
    return v6, v7
}

function %caller(i128, i64, i128) -> i128, i32 {
    fn0 = %callee(i32, i128, i64, i128) -> i128, i32
block0(v0: i128, v1: i64, v2: i128):
    v3 = iconst.i32 41
    v4, v5 = call fn0(v3, v0, v1, v2)
    v6 = bnot v4
    return v6, v5
}
'''
    cs = [(EDGES[i], u(EDGES[(i * 7) % 20], 64), EDGES[(i * 3 + 1) % 20]) for i in range(20)]
    text += ''.join('; run: %%caller(%s, %s, %s) == [%s, 42]\n' % (lit(a), lit(b, 64), lit(c), lit(u(~u((a + b) * c)))) for a, b, c in cs)
    # The second i128 straddles the last register slot (31) and the stack.
    n = 31
    i64s = ', '.join(['i64'] * n)
    params = ', '.join('v%d: i64' % k for k in range(n))
    firsts = ', '.join('v%d' % k for k in range(n))
    results = ', '.join('v%d' % (100 + k) for k in range(n + 2))
    text += '''
function %%straddle(%s, i128, i128) -> %s, i128, i128 {
block0(%s, v%d: i128, v%d: i128):
    v200 = isub v%d, v%d
    v201 = iadd v%d, v%d
    return %s, v200, v201
}

function %%straddle_caller(i128, i128) -> i128, i64 {
    fn0 = %%straddle(%s, i128, i128) -> %s, i128, i128
block0(v0: i128, v1: i128):
    v2 = iconst.i64 7
    %s = call fn0(%s, v0, v1)
    v12 = bxor v%d, v%d
    v13 = iadd v100, v%d
    return v12, v13
}
''' % (i64s, i64s, params, n, n + 1, n, n + 1, n, n + 1, firsts, i64s, i64s, results, ', '.join(['v2'] * n), 100 + n, 101 + n, 99 + n)
    text += ''.join('; run: %%straddle_caller(%s, %s) == [%s, 14]\n' % (lit(a), lit(b), lit(u(a - b) ^ u(a + b))) for a, b in pairs(5, 5))
    text += '''
function %indirect_caller(i128, i64, i128) -> i128, i32 {
    sig0 = (i32, i128, i64, i128) -> i128, i32
    fn0 = %callee(i32, i128, i64, i128) -> i128, i32
block0(v0: i128, v1: i64, v2: i128):
    v3 = func_addr.i64 fn0
    v4 = iconst.i32 41
    v5, v6 = call_indirect sig0, v3(v4, v0, v1, v2)
    return v5, v6
}
'''
    text += ''.join('; run: %%indirect_caller(%s, %s, %s) == [%s, 42]\n' % (lit(a), lit(b, 64), lit(c), lit(u((a + b) * c))) for a, b, c in cs[:8])
    text += '''
function %loop_sum(i128, i32) -> i128 {
block0(v0: i128, v1: i32):
    v2 = iconst.i64 0
    v3 = uextend.i128 v2
    jump block1(v3, v1)
block1(v4: i128, v5: i32):
    v6 = iadd v4, v0
    v7 = iadd_imm v5, -1
    brif v7, block1(v6, v7), block2(v6)
block2(v8: i128):
    return v8
}
'''
    text += ''.join('; run: %%loop_sum(%s, %d) == %s\n' % (lit(a), n, lit(u(a * n))) for a in EDGES[:10] for n in [1, 3, 17])
    text += '''
function %spill_many(i128, i128) -> i128 {
block0(v0: i128, v1: i128):
    v2 = imul v0, v1
    v3 = iadd v0, v1
    v4 = isub v0, v1
    v5 = bxor v0, v1
    v6 = imul v2, v3
    v7 = imul v4, v5
    v8 = rotl v6, v0
    v9 = ushr v7, v1
    v10 = iadd v8, v9
    v11 = iadd v10, v2
    v12 = isub v11, v3
    v13 = bxor v12, v4
    v14 = iadd v13, v5
    return v14
}
'''
    def spill(a, b):
        v2 = u(a * b); v3 = u(a + b); v4 = u(a - b); v5 = a ^ b
        v6 = u(v2 * v3); v7 = u(v4 * v5); v8 = rotl(v6, a); v9 = v7 >> (b % 128)
        return u(((u(v8 + v9 + v2 - v3)) ^ v4) + v5)
    text += ''.join('; run: %%spill_many(%s, %s) == %s\n' % (lit(a), lit(b), lit(spill(a, b))) for a, b in pairs(6, 6))
    os.makedirs(OUT, exist_ok=True)
    hdr = 'test run\n\n;; i128 in memory (two i64 halves, little-endian), as call arguments and\n;; results (two slots each), and as block parameters in loops.\n' + ''.join(';; %s\n' % n for n in NOTE) + '\n'
    import re
    text = re.sub(r'(v\d+) = iadd_imm (v\d+), (-?\d+)', lambda m: 'v10%s = iconst.i32 %s\n    %s = iadd %s, v10%s' % (m.group(1)[1:], m.group(3), m.group(1), m.group(2), m.group(1)[1:]), text)
    with open(os.path.join(OUT, 'memory_calls.clif'), 'w') as fh:
        fh.write(hdr + text)
    print('memory_calls.clif: %d runs' % text.count('; run:'))


if __name__ == '__main__':
    gen_arith()
    gen_icmp()
    gen_shifts()
    gen_bits()
    gen_extend()
    gen_div()
    gen_overflow()
    gen_memory_calls()
