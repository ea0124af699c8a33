"""Generators of the run-test files in arith/, icmp/, select/, extend/, control/
and memory/ (the lowering.clif compile tests other than icmp/lowering.clif are
written by hand). Expected values are computed here in Python, independently of
the compiler. Run each script with python3 from anywhere; it rewrites its files:

  arith.py fuzz.py            arith/
  icmp.py icmp_compile.py     icmp/
  select.py                   select/
  extend.py                   extend/
  control1.py .. control6.py  control/ (brif, traps, jump_args, loops, br_table,
  cfgfuzz.py                   calls, call_indirect, recursion, call_spills,
                               stack_args, random_cfg)
  memory.py memory2.py        memory/
  memory3.py
"""
import os
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TY = {8: 'i8', 16: 'i16', 32: 'i32', 64: 'i64'}
WIDTHS = [8, 16, 32, 64]

def mask(b): return (1 << b) - 1
def u(x, b): return x & mask(b)
def s(x, b):
    x &= mask(b)
    return x - (1 << b) if x >> (b - 1) else x
def smax(b): return (1 << (b - 1)) - 1
def smin(b): return -(1 << (b - 1))

def fmt(x, b):
    """A literal of type i<b>: signed decimal, hex for big i64 patterns."""
    v = s(x, b)
    if b == 64 and abs(v) >= 1 << 16:
        h = '%x' % u(x, 64)
        # group by 4 from the right for readability
        groups = []
        while h:
            groups.insert(0, h[-4:]); h = h[:-4]
        return '0x' + '_'.join(groups)
    return str(v)

def run(fn, args, res):
    """args: list of (value, bits); res: list of (value, bits)"""
    a = ', '.join(fmt(v, b) for v, b in args)
    if len(res) == 1:
        r = fmt(*res[0])
    else:
        r = '[' + ', '.join(fmt(v, b) for v, b in res) + ']'
    return '; run: %%%s(%s) == %s' % (fn, a, r)

import re
_fresh = [900]
def expand_imm(text):
    """`vA = iadd_imm.T vB, K` (gone from current CLIF) -> iconst + iadd."""
    def rep(m):
        _fresh[0] += 1
        ind, d, t, src, k = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        c = 'v%d' % _fresh[0]
        return '%s%s = iconst.%s %s\n%s%s = iadd %s, %s' % (ind, c, t, k, ind, d, src, c)
    return re.sub(r'( +)(v\d+) = iadd_imm\.(i\d+) (v\d+), (-?\w+)', rep, text)

def write(rel, text):
    text = expand_imm(text)
    p = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, 'w') as f:
        f.write(text.rstrip('\n') + '\n')
    print('wrote', rel, text.count('; run:'), 'run lines')
