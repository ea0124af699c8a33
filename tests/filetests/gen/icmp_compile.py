import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *
OP = {'eq': 'EQ', 'ne': 'NE', 'slt': 'LT', 'sle': 'LE', 'sgt': 'GT', 'sge': 'GE', 'ult': 'LT', 'ule': 'LE', 'ugt': 'GT', 'uge': 'GE'}
def suffix(cc):
    # the signed conditions compare S32 (the default, not printed); unsigned U32;
    # eq/ne may use either.
    if cc in ('eq', 'ne'):
        return '$(=(\\.U32)?)'
    return '' if cc[0] == 's' else '.U32'
R = 'R$(=\\d+)'
out = ['test compile', '',
       ';; icmp lowers to ISETP into a predicate (the signedness in the .U32 / default',
       ';; S32 type), materialized as a value with one SEL (`SEL d, RZ, 0x1, !P`). Narrow operands are',
       ';; extended first (SGXT for signed conditions, LOP3 mask for unsigned). 64',
       ';; bits: an unsigned ISETP on the low words chained into ISETP.X on the high',
       ';; words. A constant right-hand side uses the immediate form.', '']
for cc in OP:
    out += ['function %%icmp_%s_i32(i32, i32) -> i8 {' % cc, 'block0(v0: i32, v1: i32):',
            '    v2 = icmp %s v0, v1' % cc, '    return v2', '}',
            '; check: ISETP.%s.AND%s P$(p=\\d), %s, %s, PT' % (OP[cc], suffix(cc), R, R),
            '; check: SEL %s, RZ, 0x1, !P$p' % R, '']
for cc in OP:
    out += ['function %%icmp_%s_i64(i64, i64) -> i8 {' % cc, 'block0(v0: i64, v1: i64):',
            '    v2 = icmp %s v0, v1' % cc, '    return v2', '}',
            '; check: ISETP.%s.AND.U32 P$(lo=\\d), %s, %s, PT' % (OP[cc], R, R),
            '; check: ISETP.%s.AND%s.X P$(p=\\d), %s, %s, PT, P$lo' % (OP[cc], suffix(cc), R, R),
            '; check: SEL %s, RZ, 0x1, !P$p' % R, '']
for b, hexb in [(8, '0x8'), (16, '0x10')]:
    t = TY[b]
    for cc in ['slt', 'sge']:
        out += ['function %%icmp_%s_%s(%s, %s) -> i8 {' % (cc, t, t, t), 'block0(v0: %s, v1: %s):' % (t, t),
                '    v2 = icmp %s v0, v1' % cc, '    return v2', '}',
                '; check: SGXT R$(a=\\d+), %s, %s' % (R, hexb),
                '; check: SGXT R$(b=\\d+), %s, %s' % (R, hexb),
                '; check: ISETP.%s.AND P$(p=\\d), R$a, R$b, PT' % OP[cc],
                '; not: LOP3', '']
    m = '0xff' if b == 8 else '0xffff'
    for cc in ['ult', 'ugt', 'eq']:
        out += ['function %%icmp_%s_%s(%s, %s) -> i8 {' % (cc, t, t, t), 'block0(v0: %s, v1: %s):' % (t, t),
                '    v2 = icmp %s v0, v1' % cc, '    return v2', '}',
                '; check: LOP3 R$(a=\\d+), %s, %s, RZ, 0xc0, PT' % (R, m),
                '; check: LOP3 R$(b=\\d+), %s, %s, RZ, 0xc0, PT' % (R, m),
                '; check: ISETP.%s.AND%s P$(p=\\d), R$a, R$b, PT' % (OP[cc], suffix(cc)),
                '; not: SGXT', '']
out += ['function %icmp_sgt_i32_imm(i32) -> i8 {', 'block0(v0: i32):', '    v1 = iconst.i32 5',
        '    v2 = icmp sgt v0, v1', '    return v2', '}',
        '; not: MOV R$(=\\d+), 0x5',
        '; check: ISETP.GT.AND P$(p=\\d), %s, 0x5, PT' % R, '']
out += ['function %icmp_ult_i32_imm_neg(i32) -> i8 {', 'block0(v0: i32):', '    v1 = iconst.i32 -7',
        '    v2 = icmp ult v0, v1', '    return v2', '}',
        '; check: ISETP.LT.AND.U32 P$(p=\\d), %s, $(=-0x7|0xfffffff9), PT' % R, '']
out += ['function %icmp_sle_i64_imm(i64) -> i8 {', 'block0(v0: i64):', '    v1 = iconst.i64 0x3_0000_0002',
        '    v2 = icmp sle v0, v1', '    return v2', '}',
        '; not: MOV R$(=\\d+), 0x2',
        '; not: MOV R$(=\\d+), 0x3',
        '; check: ISETP.LE.AND.U32 P$(lo=\\d), %s, 0x2, PT' % R,
        '; check: ISETP.LE.AND.X P$(p=\\d), %s, 0x3, PT, P$lo' % R, '']
write('icmp/lowering.clif', '\n'.join(out))
