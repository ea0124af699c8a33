//! Threaded code for full warps, built once per launch.
//!
//! Every warp (not uniform-datapath) instruction that has a full-warp fast
//! form becomes a [`Fast`] entry: the function that runs it over all 32
//! lanes, chosen for its operand kinds (each source is a register row or one
//! value broadcast to every lane), with register rows, immediates, source
//! negations and constant-bank values (read once, at launch) resolved. The
//! issue loop calls it when all 32 lanes of a warp execute the instruction;
//! every other case (partial masks, one lane, the uniform datapath, uniform
//! register sources but ISETP's SrcB, carries on IMAD, directed rounding,
//! memory, control)
//! runs the general semantics (`exec::execute`). The fast forms compute with
//! the same scalar functions as the general ones (`alu_int`, `float32`), so
//! there is one definition of each instruction's meaning; each 32-lane loop
//! works on fixed-size rows, which the compiler vectorises on the x86-64
//! baseline (SSE2). The exceptions are written in 32-bit words because
//! SSE2 has no 32-bit or 64-bit lane multiply and only 2-lane 64-bit
//! shifts: IMAD.WIDE, IMAD and IMAD.WIDE by a broadcast power of two (a
//! shift), SHF by a broadcast amount; the unit tests below compare each
//! with the scalar function lane by lane.

use crate::alu_int::{bool_op, cmp_mask, iadd, imnmx, lop3, shf, shf_amount};
use crate::dalu::fcmp;
use crate::float32::{add_mul_rn, ffma_rn, fmnmx_rows, fmod32};
use crate::memory::ConstBanks;
use crate::ops::*;
use crate::program::Program;
use crate::regs::{bit_if, bit_of, pack_lanes, rows, Regs, LANES, P_DUMP};
use crate::timing::{Ctrl, SCOREBOARDS};

type Row = [u32; LANES];

/// The function of a fast entry: runs it over all 32 lanes of `Regs`.
pub(crate) type Run = fn(&mut Regs, &Fast);

/// One instruction's full-warp fast form.
#[derive(Clone, Copy)]
pub(crate) struct Fast {
    pub run: Run,
    /// What the issue loop needs, copied from the instruction's `Exec` so
    /// that a run of fast instructions reads one array: guard, control
    /// bits, latency, form (for statistics).
    pub guard: PIn,
    /// The guard is PT, all ones in every warp: the loop reads no
    /// predicate for it.
    pub unguarded: bool,
    /// What the issue adds to the warp's clock when it waits for no
    /// scoreboard and sets none (`req` 0, not a variable-latency write):
    /// the stall count, at least 1; 0 when it takes `WarpClock::issue`.
    pub clock_step: u8,
    pub ctrl: Ctrl,
    pub lat: u16,
    pub variable: bool,
    pub form: u16,
    /// A branch (BRA): the target every executing lane jumps to; `run` does
    /// nothing.
    pub jump: Option<u64>,
    /// Destination rows (the second for 64-bit results).
    d: [u16; 2],
    /// Source rows: a, b, c (and c's high row for a 64-bit c).
    s: [u16; 4],
    /// Broadcast values of the sources that are not rows (already negated
    /// or modified).
    k: [u32; 4],
    /// Per source, 0 or all ones: an integer row source is negated by
    /// `(x ^ m) - m`; a float row source is modified by `(x & fand) ^ m`.
    m: [u32; 3],
    fand: [u32; 3],
    /// Op-specific: a LUT or flags.
    x: u32,
    cmp: Cmp,
    fcmp: FCmp,
    bop: BoolOp,
    pp: PIn,
    pu: PDst,
    pv: PDst,
}

/// The fast entries of a program (None where an instruction has none),
/// indexed like `Program::code`.
pub(crate) fn build(prog: &Program, cb: &ConstBanks) -> Vec<Option<Fast>> {
    prog.code
        .iter()
        .map(|e| {
            if e.uniform {
                return None;
            }
            let f = match e.op {
                Op::Bra { target } => Fast { jump: Some(target), ..blank() },
                _ => translate(&e.op, cb)?,
            };
            Some(Fast {
                guard: e.guard,
                unguarded: e.guard == PIn::TRUE,
                clock_step: if e.ctrl.req == 0 && !(e.variable && (e.ctrl.wsb as usize) < SCOREBOARDS) { e.ctrl.stall.max(1) } else { 0 },
                ctrl: e.ctrl,
                lat: e.lat,
                variable: e.variable,
                form: e.form,
                ..f
            })
        })
        .collect()
}

/// An entry with no operands that does nothing.
fn blank() -> Fast {
    Fast {
        run: nop,
        guard: PIn::TRUE,
        unguarded: true,
        clock_step: 1,
        ctrl: Ctrl::default(),
        lat: 1,
        variable: false,
        form: u16::MAX,
        jump: None,
        d: [0; 2],
        s: [0; 4],
        k: [0; 4],
        m: [0; 3],
        fand: [u32::MAX; 3],
        x: 0,
        cmp: Cmp::Eq,
        fcmp: FCmp::Eq,
        bop: BoolOp::And,
        pp: PIn::TRUE,
        pu: PDst { uniform: false, idx: P_DUMP },
        pv: PDst { uniform: false, idx: P_DUMP },
    }
}

/// A 32-bit source: Some((broadcast, row, value)); None for a uniform
/// register (read at issue time: left to the general path) or a constant
/// outside its bank (the general path reports the fault).
fn source(s: Src, cb: &ConstBanks) -> Option<(bool, u16, u32)> {
    match s {
        Src::R(r) => Some((false, r, 0)),
        Src::Imm(v) => Some((true, 0, v)),
        Src::C(c) => cb.u32(c.bank, c.off).ok().map(|v| (true, 0, v)),
        Src::U(_) => None,
    }
}

/// A 64-bit source as (broadcast, low row, high row, value).
fn source64(s: Src64, cb: &ConstBanks) -> Option<(bool, u16, u16, u64)> {
    match s {
        Src64::R(lo, hi) => Some((false, lo, hi, 0)),
        Src64::Imm(v) => Some((true, 0, 0, v)),
        Src64::C(c) => cb.u64(c.bank, c.off).ok().map(|v| (true, 0, 0, v)),
        Src64::C32(c) => cb.u32(c.bank, c.off).ok().map(|v| (true, 0, 0, v as u64)),
        Src64::U(..) => None,
    }
}

/// Picks the monomorph of `$f` for the broadcast flags of its sources.
macro_rules! kinds {
    ($f:ident, $a:expr) => {
        if $a {
            $f::<true> as Run
        } else {
            $f::<false> as Run
        }
    };
    ($f:ident, $a:expr, $b:expr) => {
        match ($a, $b) {
            (false, false) => $f::<false, false> as Run,
            (false, true) => $f::<false, true> as Run,
            (true, false) => $f::<true, false> as Run,
            (true, true) => $f::<true, true> as Run,
        }
    };
    ($f:ident, $a:expr, $b:expr, $c:expr) => {
        match ($a, $b, $c) {
            (false, false, false) => $f::<false, false, false> as Run,
            (false, false, true) => $f::<false, false, true> as Run,
            (false, true, false) => $f::<false, true, false> as Run,
            (false, true, true) => $f::<false, true, true> as Run,
            (true, false, false) => $f::<true, false, false> as Run,
            (true, false, true) => $f::<true, false, true> as Run,
            (true, true, false) => $f::<true, true, false> as Run,
            (true, true, true) => $f::<true, true, true> as Run,
        }
    };
}

const SIGN: u32 = 1 << 31;

/// The fast form of one op, if it has one.
fn translate(op: &Op, cb: &ConstBanks) -> Option<Fast> {
    let mut f = blank();
    // Resolves source `i`; `neg` negates it (integers), returns whether it
    // is broadcast.
    let int = |f: &mut Fast, i: usize, s: Src, neg: bool| -> Option<bool> {
        let (k, row, v) = source(s, cb)?;
        if k {
            f.k[i] = if neg { v.wrapping_neg() } else { v };
        } else {
            f.s[i] = row;
            f.m[i] = if neg { u32::MAX } else { 0 };
        }
        Some(k)
    };
    let float = |f: &mut Fast, i: usize, s: Src, m: FMod| -> Option<bool> {
        let (k, row, v) = source(s, cb)?;
        if k {
            f.k[i] = fmod32(v, m);
        } else {
            f.s[i] = row;
            f.fand[i] = if m.abs { !SIGN } else { u32::MAX };
            f.m[i] = if m.neg { SIGN } else { 0 };
        }
        Some(k)
    };
    let row = |d: Dst| match d {
        Dst::R(r) => Some(r),
        Dst::U(_) => None,
    };
    let plain = |p: PDst| !p.uniform && p.idx == P_DUMP;
    f.run = match *op {
        Op::Iadd { d, a, b, neg_a, neg_b, x: false, pu, .. } if plain(pu) => {
            // No carry is kept: the negations fold into the sources.
            f.d[0] = row(d)?;
            kinds!(iadd_plain, int(&mut f, 0, a, neg_a)?, int(&mut f, 1, b, neg_b)?)
        }
        Op::Iadd { d, a, b, neg_a, neg_b, x, pp, pu } => {
            f.d[0] = row(d)?;
            f.x = neg_a as u32 | (neg_b as u32) << 1 | (x as u32) << 2;
            (f.pp, f.pu) = (pp, pu);
            kinds!(iadd_carry, int(&mut f, 0, a, false)?, int(&mut f, 1, b, false)?)
        }
        Op::Imad { d, a, b, c, neg_c, hi: false, x: false, pu, .. } if plain(pu) => {
            f.d[0] = row(d)?;
            let k = (int(&mut f, 0, a, false)?, int(&mut f, 1, b, false)?, int(&mut f, 2, c, neg_c)?);
            // A broadcast power of two (a size known at launch, a scale):
            // the product is a shift, which SSE2 has for 32-bit lanes (and
            // not a multiply).
            if k.1 && f.k[1].is_power_of_two() {
                kinds!(imad_lo_shl, k.0, k.2)
            } else {
                kinds!(imad_lo, k.0, k.1, k.2)
            }
        }
        Op::ImadWide { d: Dst64::R(lo, hi), a, b, c, neg_c, x: false, signed, pu, .. } if plain(pu) => {
            f.d = [lo, hi];
            let (ka, kb) = (int(&mut f, 0, a, false)?, int(&mut f, 1, b, false)?);
            let (kc, clo, chi, v) = source64(c, cb)?;
            let v = if neg_c { v.wrapping_neg() } else { v };
            f.s[2] = clo;
            f.s[3] = chi;
            f.k[2] = v as u32;
            f.k[3] = (v >> 32) as u32;
            f.m[2] = if neg_c && !kc { u32::MAX } else { 0 };
            f.x = signed as u32;
            // A broadcast power of two below 2^31 (an address's scale):
            // the product is a shift.
            if kb && f.k[1].is_power_of_two() && f.k[1] < SIGN {
                kinds!(imad_wide_shl, ka, kc)
            } else {
                kinds!(imad_wide, ka, kb, kc)
            }
        }
        Op::Lop3 { d, a, b, c, lut, pu, .. } if plain(pu) => {
            f.d[0] = row(d)?;
            f.x = lut as u32;
            let k = (int(&mut f, 0, a, false)?, int(&mut f, 1, b, false)?, int(&mut f, 2, c, false)?);
            match lut {
                0x96 => kinds!(lop3_96, k.0, k.1, k.2),
                0xc0 => kinds!(lop3_c0, k.0, k.1, k.2),
                0xfc => kinds!(lop3_fc, k.0, k.1, k.2),
                0x3c => kinds!(lop3_3c, k.0, k.1, k.2),
                0x80 => kinds!(lop3_80, k.0, k.1, k.2),
                0xfe => kinds!(lop3_fe, k.0, k.1, k.2),
                _ => kinds!(lop3_plain, k.0, k.1, k.2),
            }
        }
        Op::Shf { d, a, b, c, right, hi, wrap, signed, wide } => {
            f.d[0] = row(d)?;
            f.x = right as u32 | (hi as u32) << 1 | (wrap as u32) << 2 | (signed as u32) << 3 | (wide as u32) << 4;
            kinds!(shf_any, int(&mut f, 0, a, false)?, int(&mut f, 1, b, false)?, int(&mut f, 2, c, false)?)
        }
        Op::Mov { d, s } => {
            f.d[0] = row(d)?;
            kinds!(mov, int(&mut f, 0, s, false)?)
        }
        Op::Isetp { a, b, signed, x: false, cmp, bop, pp, pu, pv, .. } => {
            (f.x, f.cmp, f.bop) = (signed as u32, cmp, bop);
            (f.pp, f.pu, f.pv) = (pp, pu, pv);
            if let Src::U(u) = b {
                // A uniform register SrcB (a loop's bound): its index in
                // `s`, its value read when the entry runs (at issue).
                f.s[1] = u as u16;
                kinds!(isetp_ub, int(&mut f, 0, a, false)?)
            } else {
                kinds!(isetp, int(&mut f, 0, a, false)?, int(&mut f, 1, b, false)?)
            }
        }
        Op::Sel { d, a, b, pp } => {
            f.d[0] = row(d)?;
            f.pp = pp;
            kinds!(sel, int(&mut f, 0, a, false)?, int(&mut f, 1, b, false)?)
        }
        Op::Imnmx { d, a, b, neg_a, neg_b, signed, pp } => {
            f.d[0] = row(d)?;
            f.x = signed as u32;
            f.pp = pp;
            kinds!(imnmx_any, int(&mut f, 0, a, neg_a)?, int(&mut f, 1, b, neg_b)?)
        }
        Op::Fadd { d, a, b, ma, mb, rnd: Rnd::Rn } | Op::Fmul { d, a, b, ma, mb, rnd: Rnd::Rn } => {
            f.d[0] = row(d)?;
            let (ka, kb) = (float(&mut f, 0, a, ma)?, float(&mut f, 1, b, mb)?);
            if matches!(op, Op::Fadd { .. }) {
                kinds!(fadd, ka, kb)
            } else {
                kinds!(fmul, ka, kb)
            }
        }
        Op::Ffma { d, a, b, c, ma, mb, mc, rnd: Rnd::Rn } => {
            f.d[0] = row(d)?;
            kinds!(ffma, float(&mut f, 0, a, ma)?, float(&mut f, 1, b, mb)?, float(&mut f, 2, c, mc)?)
        }
        Op::Fmnmx { d, a, b, ma, mb, nan, pp } => {
            f.d[0] = row(d)?;
            f.x = nan as u32;
            f.pp = pp;
            kinds!(fmnmx_any, float(&mut f, 0, a, ma)?, float(&mut f, 1, b, mb)?)
        }
        Op::Fsetp { a, b, ma, mb, cmp, bop, pp, pu, pv } => {
            (f.fcmp, f.bop) = (cmp, bop);
            (f.pp, f.pu, f.pv) = (pp, pu, pv);
            kinds!(fsetp, float(&mut f, 0, a, ma)?, float(&mut f, 1, b, mb)?)
        }
        _ => return None,
    };
    Some(f)
}

/// The `run` of branches and of an entry under construction.
fn nop(_: &mut Regs, _: &Fast) {}

/// Source `i` of `f` over 32 lanes: its row, or its value broadcast.
#[inline(always)]
fn src<const K: bool>(r: &Regs, f: &Fast, i: usize) -> Row {
    if K {
        [f.k[i]; LANES]
    } else {
        r.r[f.s[i] as usize]
    }
}

/// Integer source `i`, negated where its mask says so (broadcast values
/// were negated at launch). The mask is 0 or all ones: a row not negated
/// (most) is used as it is, not through `(x ^ 0) - 0`.
#[inline(always)]
fn isrc<const K: bool>(r: &Regs, f: &Fast, i: usize) -> Row {
    let v = src::<K>(r, f, i);
    if K || f.m[i] == 0 {
        v
    } else {
        rows(|l| v[l].wrapping_neg())
    }
}

/// Float source `i` with its sign modifiers (broadcast values were
/// modified at launch), lane by lane: read in place, so that the fused loops
/// of `float32` load each row once, straight from the register file.
#[inline(always)]
fn fsrc<'a, const K: bool>(r: &'a Regs, f: &Fast, i: usize) -> impl Fn(usize) -> u32 + 'a {
    let (row, k, a, m) = (&r.r[f.s[i] as usize], f.k[i], f.fand[i], f.m[i]);
    move |l| if K { k } else { (row[l] & a) ^ m }
}

#[inline(always)]
fn put(r: &mut Regs, row: u16, v: Row) {
    r.r[row as usize] = v;
}

fn iadd_plain<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let (a, b) = (isrc::<A>(r, f, 0), isrc::<B>(r, f, 1));
    put(r, f.d[0], rows(|l| a[l].wrapping_add(b[l])));
}

fn iadd_carry<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let (a, b) = (src::<A>(r, f, 0), src::<B>(r, f, 1));
    let (neg_a, neg_b, x) = (f.x & 1 != 0, f.x & 2 != 0, f.x & 4 != 0);
    let cin = r.pin::<LANES>(f.pp);
    let mut carry = 0u32;
    let d = rows(|l| {
        let (v, c) = iadd(a[l], b[l], neg_a, neg_b, x, bit_of(cin, l));
        carry |= bit_if(c, l);
        v
    });
    put(r, f.d[0], d);
    r.pout::<LANES>(f.pu, carry, u32::MAX);
}

fn imad_lo<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast) {
    let (a, b, c) = (src::<A>(r, f, 0), src::<B>(r, f, 1), isrc::<C>(r, f, 2));
    put(r, f.d[0], rows(|l| a[l].wrapping_mul(b[l]).wrapping_add(c[l])));
}

/// `imad_lo` whose SrcB is a broadcast 2^k: SrcA shifted left by k.
fn imad_lo_shl<const A: bool, const C: bool>(r: &mut Regs, f: &Fast) {
    let (a, c) = (src::<A>(r, f, 0), isrc::<C>(r, f, 2));
    let k = f.k[1].trailing_zeros();
    put(r, f.d[0], rows(|l| (a[l] << k).wrapping_add(c[l])));
}

/// IMAD.WIDE without a carry-out: the 64-bit product plus (negated) SrcC.
/// Written in 32-bit halves so that it is vector code on the baseline
/// x86-64 (SSE2 has no signed or 64-bit lane multiply, and the plain
/// 64-bit form was 32 scalar multiplies): the product is the unsigned one
/// (PMULUDQ), its high word corrected for signed operands, and SrcC is
/// negated and added word by word with the carry between the halves.
fn imad_wide<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast) {
    // The signed product's high word is the unsigned one's less b where
    // a < 0 and less a where b < 0 (two's complement, modulo 2^32).
    let signed = if f.x != 0 { u32::MAX } else { 0 };
    wide_rows::<A, B, C>(r, f, |a, b, clo, chi| {
        let p = a as u64 * b as u64;
        let fix = (((a as i32 >> 31) as u32 & b).wrapping_add((b as i32 >> 31) as u32 & a)) & signed;
        let lo = (p as u32).wrapping_add(clo);
        let carry = (lo < p as u32) as u32;
        (lo, ((p >> 32) as u32).wrapping_sub(fix).wrapping_add(chi).wrapping_add(carry))
    });
}

/// Lanes the 64-bit-result forms (`wide_rows`) compute at a time.
const CHUNK: usize = 8;

/// Source `i` of `f` for the `CHUNK` lanes from `c`: its row's, or its
/// value broadcast.
#[inline(always)]
fn src_chunk<const K: bool>(r: &Regs, f: &Fast, i: usize, c: usize) -> [u32; CHUNK] {
    if K {
        [f.k[i]; CHUNK]
    } else {
        r.r[f.s[i] as usize][c..c + CHUNK].try_into().expect("a chunk of a row")
    }
}

/// Runs a 64-bit-result IMAD.WIDE form: `lane(a, b, c_lo, c_hi)` gives a
/// lane's low and high result words from its sources (SrcC negated where
/// asked), `CHUNK` lanes at a time. Each chunk's sources are read before
/// its results are written, so a destination row that is also a source
/// row is read as it was (the lanes are independent); the chunks stay in
/// vector registers, where whole rows (three sources, two results) were
/// copied through the stack.
#[inline(always)]
fn wide_rows<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast, lane: impl Fn(u32, u32, u32, u32) -> (u32, u32)) {
    for c in (0..LANES).step_by(CHUNK) {
        let (a, b) = (src_chunk::<A>(r, f, 0, c), src_chunk::<B>(r, f, 1, c));
        let (mut clo, mut chi) = (src_chunk::<C>(r, f, 2, c), src_chunk::<C>(r, f, 3, c));
        if !C && f.m[2] != 0 {
            // -c = !c + 1: the +1 carries into the high word when the low one is 0.
            for l in 0..CHUNK {
                chi[l] = (!chi[l]).wrapping_add((clo[l] == 0) as u32);
                clo[l] = (!clo[l]).wrapping_add(1);
            }
        }
        let mut dlo = [0u32; CHUNK];
        let mut dhi = [0u32; CHUNK];
        for l in 0..CHUNK {
            (dlo[l], dhi[l]) = lane(a[l], b[l], clo[l], chi[l]);
        }
        r.r[f.d[0] as usize][c..c + CHUNK].copy_from_slice(&dlo);
        r.r[f.d[1] as usize][c..c + CHUNK].copy_from_slice(&dhi);
    }
}

/// IMAD.WIDE (no carry-out) whose SrcB is a broadcast 2^k, k < 31 (so
/// positive also when signed): the product is SrcA shifted left by k, its
/// high word SrcA's top k bits (signed: arithmetic, so the sign extended),
/// then SrcC added with the carry between the halves. Shifts and adds,
/// vector code on SSE2 where `imad_wide` multiplies.
fn imad_wide_shl<const A: bool, const C: bool>(r: &mut Regs, f: &Fast) {
    let k = f.k[1].trailing_zeros();
    #[cfg(target_arch = "x86_64")]
    if C || f.m[2] == 0 {
        // (A negated SrcC takes the portable form below.)
        if f.x != 0 {
            shl_wide_sse2::<A, C, true>(r, f, k);
        } else {
            shl_wide_sse2::<A, C, false>(r, f, k);
        }
        return;
    }
    // a >> (32 - k) without a shift by 32 when k = 0: (a >> 1) >> (31 - k).
    if f.x != 0 {
        shl_wide::<A, C>(r, f, k, |v| ((v as i32 >> 1) >> (31 - k)) as u32)
    } else {
        shl_wide::<A, C>(r, f, k, |v| (v >> 1) >> (31 - k))
    }
}

/// `imad_wide_shl`'s lanes: `a << k` plus `c`, the high word of `a << k` from `hi`.
#[inline(always)]
fn shl_wide<const A: bool, const C: bool>(r: &mut Regs, f: &Fast, k: u32, hi: impl Fn(u32) -> u32) {
    // SrcB (the broadcast 2^k) is not read: a broadcast "row" for `wide_rows`.
    wide_rows::<A, true, C>(r, f, |a, _, clo, chi| {
        let p = a << k;
        let lo = p.wrapping_add(clo);
        (lo, hi(a).wrapping_add(chi).wrapping_add((lo < p) as u32))
    });
}

/// `shl_wide` of a SrcC that is not negated on x86-64: four lanes at a
/// time in SSE2 registers, written out (the portable form's chunks cost
/// half as much again). A shift by a count in a register gives 0 (logical)
/// or the sign (arithmetic) for a count of 32, so the high word is
/// `a >> (32 - k)` for every k, 0 included; the carry out of the low word
/// is an unsigned compare, a signed one of the words with their sign bits
/// flipped, all ones where it carries (so subtracted).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn shl_wide_sse2<const A: bool, const C: bool, const SIGNED: bool>(r: &mut Regs, f: &Fast, k: u32) {
    use std::arch::x86_64::*;
    let rows = r.r.len();
    let (a_row, clo_row, chi_row) = (f.s[0] as usize, f.s[2] as usize, f.s[3] as usize);
    let (lo_row, hi_row) = (f.d[0] as usize, f.d[1] as usize);
    assert!((A || a_row < rows) && (C || (clo_row < rows && chi_row < rows)) && lo_row < rows && hi_row < rows);
    let base = r.r.as_mut_ptr() as *mut u32;
    // SAFETY: SSE2 is part of the x86-64 baseline. Every row read or
    // written is one of the register file's (asserted above): `row(i)` is
    // its first lane, and each 16-byte access at `row(i).add(c)`, c + 4 <=
    // LANES, stays in it (a row is `LANES` contiguous `u32`s, the rows one
    // array; all pointers come from `base`). A chunk's sources are read
    // before its results are written, and no chunk reads another's lanes,
    // so a destination that is also a source is read as it was.
    unsafe {
        let row = |i: usize| base.add(i * LANES);
        let left = _mm_cvtsi32_si128(k as i32);
        let right = _mm_cvtsi32_si128(32 - k as i32);
        let sign = _mm_set1_epi32(i32::MIN);
        let (ka, kclo, kchi) = (_mm_set1_epi32(f.k[0] as i32), _mm_set1_epi32(f.k[2] as i32), _mm_set1_epi32(f.k[3] as i32));
        for c in (0..LANES).step_by(4) {
            let load = |i: usize| _mm_loadu_si128(row(i).add(c) as *const __m128i);
            let a = if A { ka } else { load(a_row) };
            let (clo, chi) = if C { (kclo, kchi) } else { (load(clo_row), load(chi_row)) };
            let p = _mm_sll_epi32(a, left);
            let high = if SIGNED { _mm_sra_epi32(a, right) } else { _mm_srl_epi32(a, right) };
            let lo = _mm_add_epi32(p, clo);
            let carry = _mm_cmplt_epi32(_mm_xor_si128(lo, sign), _mm_xor_si128(p, sign));
            let hi = _mm_sub_epi32(_mm_add_epi32(high, chi), carry);
            _mm_storeu_si128(row(lo_row).add(c) as *mut __m128i, lo);
            _mm_storeu_si128(row(hi_row).add(c) as *mut __m128i, hi);
        }
    }
}

fn lop3_plain<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast) {
    lop3_lut::<A, B, C>(r, f, f.x as u8);
}

#[inline(always)]
fn lop3_lut<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast, lut: u8) {
    let (a, b, c) = (src::<A>(r, f, 0), src::<B>(r, f, 1), src::<C>(r, f, 2));
    put(r, f.d[0], rows(|l| lop3(a[l], b[l], c[l], lut)));
}

/// LOP3 with a common truth table known when the function is compiled, so
/// that `lop3` folds to one or two vector operations (a^b^c, a&b, a|b, a^b,
/// a&b&c, a|b|c); other tables take `lop3_plain`.
macro_rules! lop3_with_lut {
    ($($name:ident = $lut:expr),*) => {
        $(
            fn $name<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast) {
                lop3_lut::<A, B, C>(r, f, $lut);
            }
        )*
    };
}
lop3_with_lut!(lop3_96 = 0x96, lop3_c0 = 0xc0, lop3_fc = 0xfc, lop3_3c = 0x3c, lop3_80 = 0x80, lop3_fe = 0xfe);

fn shf_any<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast) {
    let (a, c) = (src::<A>(r, f, 0), src::<C>(r, f, 2));
    let x = f.x;
    let (right, hi, wrap, signed, wide) = (x & 1 != 0, x & 2 != 0, x & 4 != 0, x & 8 != 0, x & 16 != 0);
    let d = if B {
        // One shift amount for every lane: a loop per direction and half,
        // each a vector shift by a uniform count.
        let n = shf_amount(f.k[1], wrap, wide);
        match (right, signed, hi) {
            (false, _, false) => shf_row(&a, &c, n, false, false, false),
            (false, _, true) => shf_row(&a, &c, n, false, false, true),
            (true, false, false) => shf_row(&a, &c, n, true, false, false),
            (true, false, true) => shf_row(&a, &c, n, true, false, true),
            (true, true, false) => shf_row(&a, &c, n, true, true, false),
            (true, true, true) => shf_row(&a, &c, n, true, true, true),
        }
    } else {
        let b = src::<B>(r, f, 1);
        rows(|l| shf(a[l], b[l], c[l], right, hi, wrap, signed, wide))
    };
    put(r, f.d[0], d);
}

/// [`shf_by`] over 32 lanes for one amount `n` (0–64), in 32-bit words:
/// the 64-bit funnel `c:a` shifted and one word taken is, for a given
/// `n`, one or two 32-bit shifts by uniform counts (SSE2 has those for 4
/// lanes, not the 64-bit shifts and shuffles of the funnel for 2).
#[inline(always)]
fn shf_row(a: &Row, c: &Row, n: u32, right: bool, signed: bool, hi: bool) -> Row {
    const ZERO: Row = [0; LANES];
    match (right, hi) {
        (false, false) if n < 32 => rows(|l| a[l] << n),
        (false, false) => ZERO,
        (false, true) if n == 0 => *c,
        (false, true) if n < 32 => rows(|l| c[l] << n | a[l] >> (32 - n)),
        (false, true) if n < 64 => rows(|l| a[l] << (n - 32)),
        (false, true) => ZERO,
        (true, true) if signed => rows(|l| (c[l] as i32 >> n.min(31)) as u32),
        (true, true) if n < 32 => rows(|l| c[l] >> n),
        (true, true) => ZERO,
        (true, false) if n == 0 => *a,
        (true, false) if n < 32 => rows(|l| a[l] >> n | c[l] << (32 - n)),
        (true, false) if signed => rows(|l| (c[l] as i32 >> (n - 32).min(31)) as u32),
        (true, false) if n < 64 => rows(|l| c[l] >> (n - 32)),
        (true, false) => ZERO,
    }
}

fn mov<const A: bool>(r: &mut Regs, f: &Fast) {
    let v = src::<A>(r, f, 0);
    put(r, f.d[0], v);
}

fn isetp<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let (a, b) = (src::<A>(r, f, 0), src::<B>(r, f, 1));
    isetp_rows(r, f, &a, &b);
}

/// ISETP with a uniform register SrcB (`s[1]` its index).
fn isetp_ub<const A: bool>(r: &mut Regs, f: &Fast) {
    let (a, b) = (src::<A>(r, f, 0), [r.ur[f.s[1] as usize]; LANES]);
    isetp_rows(r, f, &a, &b);
}

#[inline(always)]
fn isetp_rows(r: &mut Regs, f: &Fast, a: &Row, b: &Row) {
    let p = r.pin::<LANES>(f.pp);
    let t = cmp_mask::<LANES>(a, b, f.x != 0, f.cmp);
    r.pout::<LANES>(f.pu, bool_op(f.bop, t, p), u32::MAX);
    r.pout::<LANES>(f.pv, bool_op(f.bop, !t, p), u32::MAX);
}

fn sel<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let (a, b) = (src::<A>(r, f, 0), src::<B>(r, f, 1));
    let p = r.pin::<LANES>(f.pp);
    put(r, f.d[0], rows(|l| if bit_of(p, l) { a[l] } else { b[l] }));
}

fn imnmx_any<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let (a, b) = (isrc::<A>(r, f, 0), isrc::<B>(r, f, 1));
    let (signed, min) = (f.x != 0, r.pin::<LANES>(f.pp));
    put(r, f.d[0], rows(|l| imnmx(a[l], b[l], signed, bit_of(min, l))));
}

fn fadd<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let v = add_mul_rn::<LANES, true>(fsrc::<A>(r, f, 0), fsrc::<B>(r, f, 1));
    put(r, f.d[0], v);
}

fn fmul<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let v = add_mul_rn::<LANES, false>(fsrc::<A>(r, f, 0), fsrc::<B>(r, f, 1));
    put(r, f.d[0], v);
}

fn ffma<const A: bool, const B: bool, const C: bool>(r: &mut Regs, f: &Fast) {
    let v = ffma_rn::<LANES>(fsrc::<A>(r, f, 0), fsrc::<B>(r, f, 1), fsrc::<C>(r, f, 2));
    put(r, f.d[0], v);
}

fn fmnmx_any<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let min = r.pin::<LANES>(f.pp);
    let v = fmnmx_rows::<LANES>(fsrc::<A>(r, f, 0), fsrc::<B>(r, f, 1), min, f.x != 0);
    put(r, f.d[0], v);
}

fn fsetp<const A: bool, const B: bool>(r: &mut Regs, f: &Fast) {
    let (cmp, bop) = (f.fcmp, f.bop);
    let p = r.pin::<LANES>(f.pp);
    let t = {
        let (a, b) = (fsrc::<A>(r, f, 0), fsrc::<B>(r, f, 1));
        pack_lanes(rows::<u32, LANES>(|l| 0u32.wrapping_sub(fcmp(cmp, f32::from_bits(a(l)) as f64, f32::from_bits(b(l)) as f64) as u32)))
    };
    r.pout::<LANES>(f.pu, bool_op(bop, t, p), u32::MAX);
    r.pout::<LANES>(f.pv, bool_op(bop, !t, p), u32::MAX);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alu_int::{imad_wide as general, shf_by};

    /// `imad_wide_shl` (SrcB a broadcast power of two) against the general
    /// semantics, lane by lane: signed and unsigned, every shift, SrcA a
    /// row or broadcast, SrcC a row pair (plain and negated) or broadcast.
    #[test]
    fn imad_wide_by_a_power_of_two_is_the_general_product() {
        let cb = ConstBanks::new();
        let mut next = crate::test_rng::xorshift64(0x9e37_79b9_7f4a_7c15u64);
        let mut regs = Regs::new();
        let mut shl_runs = 0;
        for k in 0..32 {
            for signed in [false, true] {
                for (a_row, c_row, neg_c) in [(true, true, false), (true, true, true), (true, false, false), (false, true, true)] {
                    for row in 0..6 {
                        // Lane values with the edges: 0, -1, the sign bit.
                        regs.r[row] = rows(|l| match l {
                            0 => 0,
                            1 => u32::MAX,
                            2 => SIGN,
                            3 => SIGN - 1,
                            _ => next() as u32,
                        });
                    }
                    let ka = next() as u32;
                    let kc = next();
                    let a = if a_row { Src::R(0) } else { Src::Imm(ka) };
                    let c = if c_row { Src64::R(2, 3) } else { Src64::Imm(kc) };
                    let pu = PDst { uniform: false, idx: P_DUMP };
                    let op = Op::ImadWide { d: Dst64::R(4, 5), a, b: Src::Imm(1 << k), c, neg_c, x: false, signed, pp: PIn::TRUE, pu };
                    let f = translate(&op, &cb).expect("a fast form");
                    let before = regs.clone();
                    (f.run)(&mut regs, &f);
                    for l in 0..LANES {
                        let va = if a_row { before.r[0][l] } else { ka };
                        let vc = if c_row { before.r[2][l] as u64 | (before.r[3][l] as u64) << 32 } else { kc };
                        let (want, _) = general(va, 1 << k, vc, neg_c, false, signed, false);
                        let got = regs.r[4][l] as u64 | (regs.r[5][l] as u64) << 32;
                        assert_eq!(got, want, "k {} signed {} a {:#x} c {:#x} neg {}", k, signed, va, vc, neg_c);
                    }
                    // The destination pair SrcC's (an address stepped in place).
                    if c_row {
                        let op = Op::ImadWide { d: Dst64::R(2, 3), a, b: Src::Imm(1 << k), c, neg_c, x: false, signed, pp: PIn::TRUE, pu };
                        let f = translate(&op, &cb).expect("a fast form");
                        let mut same = before.clone();
                        (f.run)(&mut same, &f);
                        assert!(same.r[2] == regs.r[4] && same.r[3] == regs.r[5], "in place: k {} signed {}", k, signed);
                    }
                    // The shift form itself, whichever form was chosen (2^31 takes the general one).
                    if k < 31 {
                        let mut shl = before.clone();
                        (kinds!(imad_wide_shl, !a_row, !c_row))(&mut shl, &f);
                        assert!(shl.r[4] == regs.r[4] && shl.r[5] == regs.r[5], "k {} signed {}", k, signed);
                        shl_runs += 1;
                    }
                }
            }
        }
        assert_eq!(shl_runs, 31 * 2 * 4);
    }

    /// ISETP with a uniform register SrcB against the same with its value
    /// as an immediate: every comparison, signedness and combination, a
    /// SrcA row with the edge values around SrcB's.
    #[test]
    fn isetp_by_a_uniform_register_is_the_immediate_form() {
        let cb = ConstBanks::new();
        let mut next64 = crate::test_rng::xorshift64(0x5851_f42d_4c95_7f2du64);
        let mut regs = Regs::new();
        for k in [0u32, 1, 128, u32::MAX, SIGN, SIGN - 1] {
            regs.r[0] = rows(|l| match l % 4 {
                0 => k,
                1 => k.wrapping_add(1),
                2 => k.wrapping_sub(1),
                _ => next64() as u32,
            });
            regs.ur[3] = k;
            regs.p[1] = next64() as u32;
            for cmp in [Cmp::Eq, Cmp::Ne, Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge] {
                for signed in [false, true] {
                    for bop in [BoolOp::And, BoolOp::Or, BoolOp::Xor] {
                        let pp = PIn { uniform: false, idx: 1, not: false };
                        let (pu, pv) = (PDst { uniform: false, idx: 0 }, PDst { uniform: false, idx: 2 });
                        let op = |b| Op::Isetp { a: Src::R(0), b, signed, x: false, cmp, bop, pp, pq: PIn::TRUE, pu, pv };
                        let (fu, fi) = (translate(&op(Src::U(3)), &cb).expect("a fast form"), translate(&op(Src::Imm(k)), &cb).unwrap());
                        let (mut ru, mut ri) = (regs.clone(), regs.clone());
                        (fu.run)(&mut ru, &fu);
                        (fi.run)(&mut ri, &fi);
                        assert_eq!(ru.p, ri.p, "k {k:#x} {cmp:?} signed {signed} {bop:?}");
                        assert_ne!(ri.p, regs.p);
                    }
                }
            }
        }
    }

    /// `shf_row` (SHF by a broadcast amount) against `shf_by`, lane by
    /// lane, for every amount up to 64, direction, signedness and word.
    #[test]
    fn shf_by_one_amount_is_the_general_funnel_shift() {
        let mut next64 = crate::test_rng::xorshift64(0x1234_5678_9abc_def1u64);
        let mut next = || next64() as u32;
        let a: Row = rows(|l| if l < 3 { [0, u32::MAX, SIGN][l] } else { next() });
        let c: Row = rows(|l| if l < 4 { [0, u32::MAX, SIGN, 1][l] } else { next() });
        for n in 0..=64 {
            for (right, signed, hi) in [
                (false, false, false),
                (false, false, true),
                (true, false, false),
                (true, false, true),
                (true, true, false),
                (true, true, true),
            ] {
                let got = shf_row(&a, &c, n, right, signed, hi);
                for l in 0..LANES {
                    assert_eq!(
                        got[l],
                        shf_by(a[l], c[l], n, right, hi, signed),
                        "n {} right {} signed {} hi {} lane {}",
                        n,
                        right,
                        signed,
                        hi,
                        l
                    );
                }
            }
        }
    }

    /// `imad_lo_shl` (IMAD with SrcB a broadcast power of two) against the
    /// general semantics, lane by lane, SrcA and SrcC rows or broadcast,
    /// SrcC negated or not; and the general fast form for other constants.
    #[test]
    fn imad_by_a_power_of_two_is_the_general_product() {
        let cb = ConstBanks::new();
        let mut regs = Regs::new();
        let mut next64 = crate::test_rng::xorshift64(0x2545_f491_4f6c_dd1du64);
        let mut next = || next64() as u32;
        for b in (0..32).map(|k| 1u32 << k).chain([0, 3, 0xffff_ffff, 0x8000_0001]) {
            for (a_row, c_row, neg_c) in [(true, true, false), (true, true, true), (false, true, false), (true, false, true)] {
                for row in 0..3 {
                    regs.r[row] = rows(|l| if l < 3 { [0, u32::MAX, SIGN][l] } else { next() });
                }
                let (ka, kc) = (next(), next());
                let a = if a_row { Src::R(0) } else { Src::Imm(ka) };
                let c = if c_row { Src::R(1) } else { Src::Imm(kc) };
                let pu = PDst { uniform: false, idx: P_DUMP };
                let op = Op::Imad { d: Dst::R(2), a, b: Src::Imm(b), c, neg_c, hi: false, x: false, signed: false, pp: PIn::TRUE, pu };
                let f = translate(&op, &cb).expect("a fast form");
                let before = regs.clone();
                (f.run)(&mut regs, &f);
                for l in 0..LANES {
                    let va = if a_row { before.r[0][l] } else { ka };
                    let vc = if c_row { before.r[1][l] } else { kc };
                    let (want, _) = crate::alu_int::imad(va, b, vc, neg_c, false, false, false, false);
                    assert_eq!(regs.r[2][l], want, "b {:#x} a {:#x} c {:#x} neg {}", b, va, vc, neg_c);
                }
                if b.is_power_of_two() {
                    let mut shl = before.clone();
                    (kinds!(imad_lo_shl, !a_row, !c_row))(&mut shl, &f);
                    assert!(shl.r[2] == regs.r[2], "b {:#x}", b);
                }
            }
        }
    }
}
