#!/usr/bin/env python3
# Writes ../i128/float_conversions.clif: fcvt between i128 and f32/f64, the expected
# values from exact rationals (fractions.Fraction) rounded to nearest even.
import os, struct, random
from fractions import Fraction
random.seed(7)
def round_to(v, mant, emin, emax):
    # v: Fraction (exact), RNE to binary float with `mant` bits of precision; returns python float value or inf
    if v == 0: return 0.0
    sign = -1 if v < 0 else 1
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2)**e > a: e -= 1
    while Fraction(2)**(e+1) <= a: e += 1
    q = Fraction(2)**(e - mant + 1)
    n = a / q
    fl = n.numerator // n.denominator
    r = n - fl
    if r > Fraction(1,2) or (r == Fraction(1,2) and fl % 2 == 1): fl += 1
    res = fl * q
    if res >= Fraction(2)**(emax+1): return sign*float('inf')
    return sign*float(res)
def f32hex(x):
    if x == float('inf'): return '+Inf'
    if x == -float('inf'): return '-Inf'
    h = float.hex(x)
    if x == 0: return '-0x0.0' if str(x).startswith('-') else '0x0.0'
    m, e = h.split('p')
    if '.' in m:
        m = m.rstrip('0')
        if m.endswith('.'): m += '0'
    return m + 'p' + str(int(e))
vals_u = [0,1,2,3,(1<<53)+1,(1<<64)-1,1<<64,(1<<64)+1,(1<<64)+(1<<11)+1,(1<<100)+(1<<47),(1<<100)+(1<<47)+1,(1<<100)+(1<<76),(1<<100)+(1<<76)+1,(1<<100)+3*(1<<76),(1<<127),(1<<128)-1,(1<<128)-(1<<103),(1<<128)-(1<<104),(1<<128)-(1<<75)]
vals_u += [random.getrandbits(random.randint(1,128)) for _ in range(20)]
def s128(u): return u - (1<<128) if u >= (1<<127) else u
def lit(u):
    return "0x%032X" % u if u >= (1<<64) else str(u)
def slit(v):
    u = v & ((1<<128)-1)
    return "0x%032X" % u if not (-(1<<63) <= v < (1<<63)) else str(v)
out=["test run","",";; fcvt_from_uint/fcvt_from_sint of i128 to f32/f64 (correct rounding: halfway cases,",";; sticky bits below the top 64, values that round up to 2^128) and",";; fcvt_to_uint/fcvt_to_sint (and _sat) of f32/f64 to i128. Expected values",";; computed with Python's exact rationals, rounded to nearest even.",""]
for ty,mant,emax in (("f32",24,127),("f64",53,1023)):
    for sg in ("uint","sint"):
        out += [f"function %from_{sg}_{ty}(i128) -> {ty} {{","block0(v0: i128):",f"    v1 = fcvt_from_{sg}.{ty} v0","    return v1","}"]
        for u in vals_u:
            v = u if sg=="uint" else s128(u)
            r = round_to(Fraction(v),mant,0,emax)
            out.append(f"; run: %from_{sg}_{ty}({lit(u) if sg=='uint' else slit(v)}) == {f32hex(r)}")
        out.append("")
# to-int
fvals = [0.0,-0.0,0.5,-0.5,-0.99,1.0,-1.0,2.0**63,2.0**64,2.0**64+2**12,2.0**100+2.0**48,2.0**127,-(2.0**127),2.0**128-2.0**75,1.5e30,-1.5e30,123456789.75]
for ty in ("f32","f64"):
    for sg in ("uint","sint"):
        for sat in ("","_sat"):
            out += [f"function %to_{sg}{sat}_{ty}({ty}) -> i128 {{",f"block0(v0: {ty}):",f"    v1 = fcvt_to_{sg}{sat}.i128 v0","    return v1","}"]
            lines=[]
            fv = list(fvals) + ([float('inf'), -float('inf'), float('nan')] )
            for x in fv:
                if ty=="f32":
                    if x==x and abs(x)!=float('inf'):
                        if abs(x) > 3.4028234663852886e38: continue
                        x = struct.unpack('<f',struct.pack('<f',x))[0]
                xs = f32hex(x) if x==x else "+NaN"
                lo,hi = (0,(1<<128)-1) if sg=="uint" else (-(1<<127),(1<<127)-1)
                if x!=x:
                    if sat: lines.append(f"; run: %to_{sg}{sat}_{ty}({xs}) == 0")
                    continue
                if abs(x)==float('inf'):
                    t = None
                else:
                    t = int(x)  # trunc
                if t is None or t<lo or t>hi:
                    if sat:
                        cl = hi if x>0 else lo
                        lines.append(f"; run: %to_{sg}{sat}_{ty}({xs}) == {slit(cl) if sg=='sint' else lit(cl)}")
                    continue
                lines.append(f"; run: %to_{sg}{sat}_{ty}({xs}) == {slit(t) if sg=='sint' else lit(t)}")
            out += lines + [""]
# trap functions
for ty in ("f32","f64"):
    for sg in ("uint","sint"):
        out += [f"function %trap_{sg}_{ty}({ty}) -> i32 {{",f"block0(v0: {ty}):",f"    v1 = fcvt_to_{sg}.i128 v0","    v2 = ireduce.i32 v1","    return v2","}"]
        out.append(f"; run: %trap_{sg}_{ty}(0x1.0p3) == 8")
        out.append("")
open(os.path.join(os.path.dirname(__file__), '..', 'i128', 'float_conversions.clif'), 'w').write("\n".join(out)+"\n")
