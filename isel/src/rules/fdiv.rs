//! Constructors for `isle/lower/fdiv.isle`: correctly rounded `fdiv` and
//! `sqrt` of f32 and f64 without a divide instruction (docs/float.md,
//! "Division and square root").
//!
//! Each sequence is one allocator-level bundle, written below as assembly
//! with *template registers*: the numbers name the operands, not machine
//! registers. `Template::new` parses the text once with the assembler's
//! instruction parser; `Template::bundle` binds every register field to a
//! virtual register: the inputs (read only), the result (written, may be
//! written again by guarded slow-path pieces) and scratch registers of the
//! bundle (pairs or single registers, predicates). Two template registers
//! `R2k`, `R2k+1` declared as a pair are the low and high word of one pair.
//!
//! The fast path runs inline and ends with `@!P BRA .slow` on a predicate it
//! computes; the pieces after that line handle what the fast path cannot
//! round. `encode` lays them out after the function's last block, followed by
//! a branch back to the instruction after the `BRA` (`MInst::cold_from`).

use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;
use std::sync::OnceLock;

use ursa_emit::{parse_inst, Inst, NoLabels, RegFile, RegSlot};

use crate::lower::Lower;
use crate::vcode::{takes_reg, Bundle, Class, OpKind, VReg};

/// What a template register stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Operand `k` of the CLIF instruction (read only).
    In(usize),
    /// The result.
    Out,
    /// Scratch register number `k` of the bundle.
    Tmp(usize),
}

/// What one register field of a piece is bound to, resolved when the
/// template is made: the register (`role`; a predicate is a scratch
/// register), read or written as `kind`, the high half of a pair (`hi`).
#[derive(Clone, Copy, Debug)]
struct Binding {
    field: usize,
    role: Role,
    kind: OpKind,
    hi: bool,
}

/// A parsed sequence and the register each of its fields is bound to.
pub struct Template {
    pieces: Vec<Inst>,
    /// Per piece, its register fields' bindings (each field once, in the
    /// order of the piece's written registers, then its read ones).
    bindings: Vec<Vec<Binding>>,
    temps: Vec<Class>,
    /// The first out-of-line piece (after the `BRA .slow` line).
    cold_from: Option<u8>,
}

impl Template {
    /// Parses `text` (one instruction per line, `//` comments). `inputs`
    /// and `output` give the template registers of the operands and the
    /// result with their classes; every other register the text names is a
    /// scratch register (a pair if `pairs` lists its even number).
    fn new(text: &str, inputs: &[(u32, Class)], output: (u32, Class), pairs: &[u32]) -> Template {
        let mut t = Template { pieces: Vec::new(), bindings: Vec::new(), temps: Vec::new(), cold_from: None };
        // Template general register (the low one of a pair) → role and
        // class; template predicate → scratch register number.
        let mut regs: HashMap<u32, (Role, Class)> = HashMap::default();
        let mut preds: HashMap<u32, usize> = HashMap::default();
        for (k, &(r, c)) in inputs.iter().enumerate() {
            regs.insert(r, (Role::In(k), c));
        }
        regs.insert(output.0, (Role::Out, output.1));
        // Every scratch half is first written by an unguarded piece, so that
        // its value starts inside the bundle (a guarded first write would
        // make `pack_regs` keep whatever the register held before).
        let mut first_written: Vec<u32> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            // `@!Pn BRA .slow`: the pieces after it are laid out of line.
            let cold = line.contains("BRA .slow");
            let line = &line.replace(".slow", "0x0");
            if cold {
                assert!(t.cold_from.is_none(), "fdiv template: two out-of-line parts");
                t.cold_from = Some(t.pieces.len() as u8 + 1);
            }
            let inst = parse_inst(line, 0, None, &NoLabels).unwrap_or_else(|e| panic!("fdiv template line {}: `{}`: {:?}", n + 1, line, e));
            let mut fields = Vec::new();
            // Writes first: a scratch register must be written before it is read.
            let refs = inst.reg_writes().into_iter().map(|r| (r, true)).chain(inst.reg_reads().into_iter().map(|r| (r, false)));
            for (r, write) in refs {
                let field = match r.slot {
                    RegSlot::Field(f) => f as usize,
                    RegSlot::Guard => inst.def().guard.expect("a guard read has a guard field") as usize,
                };
                match r.file {
                    RegFile::R => {
                        let base = r.num & !1;
                        let key = if regs.get(&base).is_some_and(|x| x.1 == Class::RPair) || pairs.contains(&base) { base } else { r.num };
                        let hi = key != r.num;
                        if write && !first_written.contains(&r.num) {
                            first_written.push(r.num);
                            let scratch = !matches!(regs.get(&key).map(|x| x.0), Some(Role::In(_)) | Some(Role::Out));
                            assert!(
                                !scratch || !inst.is_guarded(),
                                "fdiv template line {}: the first write of scratch R{} is guarded",
                                n + 1,
                                r.num
                            );
                        }
                        if !regs.contains_key(&key) {
                            assert!(write, "fdiv template line {}: scratch R{} read before it is written", n + 1, r.num);
                            let class = if pairs.contains(&key) { Class::RPair } else { Class::R };
                            regs.insert(key, (Role::Tmp(t.temps.len()), class));
                            t.temps.push(class);
                        }
                        if write {
                            assert!(!matches!(regs[&key].0, Role::In(_)), "fdiv template line {}: writes input R{}", n + 1, r.num);
                        }
                        fields.push((field, RegFile::R, key, hi));
                        if r.count == 2 {
                            assert!(
                                !hi && regs[&key].1 == Class::RPair,
                                "fdiv template line {}: R[{}:{}] is not a declared pair",
                                n + 1,
                                r.num,
                                r.num + 1
                            );
                        }
                    }
                    RegFile::P => {
                        if !preds.contains_key(&r.num) {
                            assert!(write, "fdiv template line {}: P{} read before it is written", n + 1, r.num);
                            preds.insert(r.num, t.temps.len());
                            t.temps.push(Class::P);
                        }
                        fields.push((field, RegFile::P, r.num, false));
                    }
                    f => panic!("fdiv template line {}: register file {:?}", n + 1, f),
                }
            }
            // Each field bound once (outputs were listed first; a field both
            // read and written, none in these templates, would be twice),
            // its role checked here rather than at every use.
            let mut bindings: Vec<Binding> = Vec::new();
            for (field, file, key, hi) in fields {
                if bindings.iter().any(|b| b.field == field) {
                    continue;
                }
                let writes = inst.field_roles(field).1;
                let (role, kind) = match file {
                    RegFile::P => (Role::Tmp(preds[&key]), if writes { OpKind::Temp } else { OpKind::Use }),
                    _ => match (regs[&key].0, writes) {
                        (Role::Out, true) => (Role::Out, OpKind::Def),
                        (Role::Tmp(k), true) => (Role::Tmp(k), OpKind::Temp),
                        (role, _) => (role, OpKind::Use),
                    },
                };
                assert!(
                    takes_reg(&inst, field, kind),
                    "fdiv template line {}: field {} is not a register it {}",
                    n + 1,
                    field,
                    if kind == OpKind::Use { "reads" } else { "writes" }
                );
                bindings.push(Binding { field, role, kind, hi });
            }
            t.pieces.push(inst);
            t.bindings.push(bindings);
        }
        t
    }

    /// The bundle for operands `ins` and result `out`.
    fn bundle(&self, lower: &mut Lower, ins: &[VReg], out: VReg) -> Bundle {
        let temps: SmallVec<[VReg; 16]> = self.temps.iter().map(|&c| lower.temp(c)).collect();
        let mut b = Bundle::new().cold_from(self.cold_from);
        for (inst, bindings) in self.pieces.iter().zip(&self.bindings) {
            b = b.piece(inst.clone());
            for x in bindings {
                let v = match x.role {
                    Role::In(k) => ins[k],
                    Role::Out => out,
                    Role::Tmp(k) => temps[k],
                };
                b = b.reg_at(x.field, v, x.kind, x.hi);
            }
        }
        b
    }
}

// ---- the sequences (docs/float.md) -------------------------------------------
//
// f32: operands R8 (a), R9 (b); result R20. Computed in binary64 (exact
// conversions, DFMA refinement of the MUFU.RCP.F64 / MUFU.RSQ.F64 seed) and
// rounded once to binary32 by F2F.F32.F64.
// f64 division: a = R[8:9], b = R[10:11], result R[12:13].
// f64 square root: a = R[8:9], result R[18:19].

const DIV_F32: &str = "
    // A = a, B = b in binary64 (exact, subnormals included)
    F2F.F64.F32 R[10:11], R8 ;
    F2F.F64.F32 R[12:13], R9 ;
    // y0 = seed of 1/B (high word; low word 0), y1 = y0 (1 + e + e^2), e = 1 - B y0
    MUFU.RCP.F64 R15, R13 ;
    MOV R14, RZ ;
    DFMA R[16:17], -R[12:13], R[14:15], 1 ;
    DFMA R[16:17], R[16:17], R[16:17], R[16:17] ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    // q = A y1, r = A - B q (exact), q' = q + r y1, rounded once to binary32
    DMUL R[16:17], R[10:11], R[14:15] ;
    DFMA R[18:19], -R[12:13], R[16:17], R[10:11] ;
    DFMA R[16:17], R[14:15], R[18:19], R[16:17] ;
    F2F.F32.F64 R20, R[16:17] ;
    // P1: b finite and nonzero; P0: a and b finite and nonzero
    FSETP.GT.AND P1, PT, |R9|, 0, PT ;
    FSETP.LT.AND P1, PT, |R9|, +INF, P1 ;
    FSETP.GT.AND P0, PT, |R8|, 0, P1 ;
    FSETP.LT.AND P0, PT, |R8|, +INF, P0 ;
    @!P0 BRA .slow ;
    // out of line: zeros, infinities, NaNs: a * (b finite nonzero ? b : 1/b)
    MUFU.RCP R21, R9 ;
    SEL R21, R9, R21, P1 ;
    FMUL R20, R8, R21 ;
    FSETP.NAN.AND P2, PT, R20, R20, PT ;
    @P2 MOV R20, 0x7fc00000 ;
";

const SQRT_F32: &str = "
    // A = a in binary64; y = seed of 1/sqrt(A); g = A y, h = y/2
    F2F.F64.F32 R[10:11], R8 ;
    {rsq_seed}
    // one coupled Newton step: r = 1/2 - g h, g += g r, h += h r
    {rsq_step}
    // residual d = A - g g (exact), g' = g + d h, rounded once to binary32
    DFMA R[16:17], -R[14:15], R[14:15], R[10:11] ;
    DFMA R[14:15], R[16:17], R[12:13], R[14:15] ;
    F2F.F32.F64 R20, R[14:15] ;
    // P0: a positive and finite (subnormals included)
    FSETP.GT.AND P0, PT, R8, 0, PT ;
    FSETP.LT.AND P0, PT, R8, +INF, P0 ;
    @!P0 BRA .slow ;
    // out of line: sqrt(+-0) = +-0, sqrt(+inf) = +inf, negative or NaN: NaN
    MOV R20, R8 ;
    FSETP.LTU.AND P1, PT, R8, 0, PT ;
    @P1 MOV R20, 0x7fc00000 ;
";

// Fragments shared by the sequences: a `{name key=value …}` line of a
// sequence is replaced by the fragment, with `$key` replaced by the value and
// `$g` by the guard (`@PT` for none).

/// The Newton-Raphson core of the f64 division, used by the fast path on
/// a / b and by the slow path on m_a / m_b. Scratch: R[14:15] (y), R[16:17],
/// R[18:19] (the remainder r).
const DIV_CORE_F64: &str = "
    // y0 = seed of 1/b (high word; low word 1 breaks exact ties, see docs)
    $g MUFU.RCP.F64 R15, $bhi ;
    $g MOV R14, 0x1 ;
    // y1 = y0 (1 + e + e^2), e = 1 - b y0; y2 = y1 + y1 (1 - b y1)
    $g DFMA R[16:17], -$b, R[14:15], 1 ;
    $g DFMA R[16:17], R[16:17], R[16:17], R[16:17] ;
    $g DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    $g DFMA R[16:17], -$b, R[14:15], 1 ;
    $g DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    // q = a y2, r = a - b q (exact), q' = q + r y2 (Markstein)
    $g DMUL R[16:17], $a, R[14:15] ;
    $g DFMA R[18:19], -$b, R[16:17], $a ;
    DFMA $q, R[14:15], R[18:19], R[16:17] ;
";

/// The reciprocal-square-root seed of A = R[10:11] (low word 1) and the
/// start of the coupled iteration: g = A y (R[14:15]), h = y/2 (R[12:13]).
const RSQ_SEED: &str = "
    MUFU.RSQ.F64 R13, R11 ;
    MOV R12, 0x1 ;
    DMUL R[14:15], R[10:11], R[12:13] ;
    DMUL R[12:13], R[12:13], 0.5 ;
";

/// One coupled Newton step: r = 1/2 - g h, g += g r, h += h r.
const RSQ_STEP: &str = "
    DFMA R[16:17], -R[14:15], R[12:13], 0.5 ;
    DFMA R[14:15], R[14:15], R[16:17], R[14:15] ;
    DFMA R[12:13], R[12:13], R[16:17], R[12:13] ;
";

/// |x| as m 2^e with m in [1, 2) (slow path of the f64 division, under P2):
/// the pair `$m` (`$lo`, `$hi`) gets |x| (`$xlo`, `$xhi`), scaled by 2^54
/// when subnormal (P3), `$e` its biased exponent (54 less when scaled), then
/// the exponent field is set to 1023.
const NORMALIZE: &str = "
    LOP3.LUT $hi, $xhi, 0x7fffffff, RZ, 0xc0, !PT ;
    MOV $lo, $xlo ;
    ISETP.LT.U32.AND P3, PT, $hi, 0x00100000, P2 ;
    @P3 DMUL $m, $m, 1.8014398509481984e16 ;
    SHF.R.U32 $e, $hi, 0x14, RZ ;
    @P3 IADD $e, $e, -0x36 ;
    @P2 LOP3.LUT $hi, $hi, 0x000fffff, RZ, 0xc0, !PT ;
    @P2 IADD $hi, $hi, 0x3ff00000 ;
";

/// `text` with its fragment lines expanded.
fn expand(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let Some(spec) = line.trim().strip_prefix('{').and_then(|l| l.strip_suffix('}')) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let mut words = spec.split_whitespace();
        let body = match words.next() {
            Some("div_core") => DIV_CORE_F64,
            Some("rsq_seed") => RSQ_SEED,
            Some("rsq_step") => RSQ_STEP,
            Some("normalize") => NORMALIZE,
            _ => panic!("fdiv template: unknown fragment `{}`", line),
        };
        // Longest keys first, so that `$bhi` is not read as `$b` + "hi".
        let mut args: Vec<(String, String)> = vec![("$g".into(), "@PT".into())];
        for w in words {
            let (k, v) = w.split_once('=').unwrap_or_else(|| panic!("fdiv template: `{}`: `{}` is not key=value", line, w));
            args.retain(|(x, _)| x.as_str() != format!("${}", k));
            args.push((format!("${}", k), v.to_string()));
        }
        args.sort_by_key(|(k, _)| std::cmp::Reverse(k.len()));
        for l in body.lines() {
            let mut l = l.to_string();
            for (k, v) in &args {
                l = l.replace(k.as_str(), v);
            }
            out.push_str(&l.replace("@PT ", ""));
            out.push('\n');
        }
    }
    out
}

const DIV_F64: &str = "
    {div_core a=R[8:9] b=R[10:11] bhi=R11 q=R[12:13]}
    // P0: |a| >= 2^-967 and finite-range, 2^-1022 <= |b| < 2^1017,
    // 2^-1022 <= |q'| < 2^1025 (high words compared as binary32 values)
    FSETP.GE.AND P0, PT, |R9|, 0x03800000, PT ;
    FSETP.GE.AND P0, PT, |R11|, 0x00100000, P0 ;
    FSETP.LT.AND P0, PT, |R11|, +INF, P0 ;
    FSETP.GE.AND P0, PT, |R13|, 0x00100000, P0 ;
    @!P0 BRA .slow ;
    // out of line. Zeros, infinities, NaNs: a * (b finite nonzero ? b : 1/b),
    // NaN made canonical. P1: b finite nonzero; P2: a and b finite nonzero.
    DSETP.GT.AND P1, PT, |R[10:11]|, 0, PT ;
    DSETP.LT.AND P1, PT, |R[10:11]|, +INF, P1 ;
    DSETP.GT.AND P2, PT, |R[8:9]|, 0, P1 ;
    DSETP.LT.AND P2, PT, |R[8:9]|, +INF, P2 ;
    MUFU.RCP.F64 R21, R11 ;
    MOV R20, RZ ;
    SEL R20, R10, R20, P1 ;
    SEL R21, R11, R21, P1 ;
    DMUL R[12:13], R[8:9], R[20:21] ;
    DSETP.NAN.AND P3, PT, R[12:13], R[10:11], PT ;
    @P3 MOV R12, RZ ;
    @P3 MOV R13, 0x7ff80000 ;
    // Finite nonzero operands: m_a / m_b with m_a, m_b in [1,2) (subnormals
    // scaled by 2^54 first), e = exponent difference
    {normalize xhi=R9 xlo=R8 hi=R21 lo=R20 m=R[20:21] e=R24}
    {normalize xhi=R11 xlo=R10 hi=R23 lo=R22 m=R[22:23] e=R25}
    @P2 IADD R24, R24, -R25 ;
    // the fast path's core on m_a / m_b -> q' = RN(m_a / m_b), and r' = m_a - m_b q'
    {div_core g=@P2 a=R[20:21] b=R[22:23] bhi=R23 q=R[26:27]}
    @P2 DFMA R[18:19], -R[22:23], R[26:27], R[20:21] ;
    // result exponent field = exponent field of q' + e; below 1: subnormal zone
    SHF.R.U32 R28, R27, 0x14, RZ ;
    @P2 IADD R28, R28, R24 ;
    @P2 IMNMX R24, R24, -0x47e, !PT ;
    @P2 IMNMX R24, R24, 0x44c, PT ;
    ISETP.LT.AND P4, PT, R28, 0x1, P2 ;
    // subnormal zone: t = q' 2^(1074+e) counts units of 2^-1074; a tie
    // t = n + 1/2 is decided by the sign of r'; result = t 2^-1074 (one rounding)
    LEA R29, R24, 0x83100000, 0x14 ;
    @P4 MOV R28, RZ ;
    @P4 DMUL R[28:29], R[26:27], R[28:29] ;
    @P4 FRND.F64.RM R[16:17], R[28:29] ;
    @P4 DADD R[14:15], R[28:29], -R[16:17] ;
    DSETP.EQ.AND P3, PT, R[14:15], 0.5, P4 ;
    DSETP.GT.AND P1, PT, R[18:19], 0, P3 ;
    DSETP.LT.AND P0, PT, R[18:19], 0, P3 ;
    @P1 DADD R[28:29], R[16:17], 1 ;
    @P0 DADD R[28:29], R[16:17], RZ ;
    @P4 MOV R14, 0x1 ;
    @P4 MOV R15, RZ ;
    @P4 DMUL R[12:13], R[28:29], R[14:15] ;
    // normal zone: q' 2^e1 2^e2 (e clamped to [-1150, 1100], e1 = e >> 1),
    // exact unless it overflows to infinity
    PLOP3 P3, P2, !P4, PT, 0x80 ;
    @P3 SHF.R.S32.HI R25, RZ, 0x1, R24 ;
    @P3 IADD R24, R24, -R25 ;
    @P3 LEA R29, R25, 0x3ff00000, 0x14 ;
    @P3 MOV R28, RZ ;
    @P3 DMUL R[26:27], R[26:27], R[28:29] ;
    @P3 LEA R29, R24, 0x3ff00000, 0x14 ;
    @P3 DMUL R[12:13], R[26:27], R[28:29] ;
    // sign: sign(a) xor sign(b)
    @P2 LOP3.LUT R28, R9, R11, RZ, 0x3c, !PT ;
    @P2 LOP3.LUT R13, R28, 0x80000000, R13, 0x6a, !PT ;
";

const SQRT_F64: &str = "
    // small a (below 2^-799, subnormals included): A = a 2^1000, result 2^-500
    FSETP.LT.AND P1, PT, R9, 0x0e000000, PT ;
    DMUL R[10:11], R[8:9], 1 ;
    @P1 DMUL R[10:11], R[8:9], 1.0715086071862673e301 ;
    // y = seed of 1/sqrt(A) (low word 1); g = A y, h = y/2
    {rsq_seed}
    // two coupled Newton steps: r = 1/2 - g h, g += g r, h += h r
    {rsq_step}
    {rsq_step}
    // residual d = A - g g (exact), g' = g + d h (one rounding)
    DFMA R[16:17], -R[14:15], R[14:15], R[10:11] ;
    DFMA R[18:19], R[16:17], R[12:13], R[14:15] ;
    @P1 DMUL R[18:19], R[18:19], 3.054936363499605e-151 ;
    // P0: a positive and finite
    DSETP.GT.AND P0, PT, R[8:9], 0, PT ;
    DSETP.LT.AND P0, PT, R[8:9], +INF, P0 ;
    @!P0 BRA .slow ;
    // out of line: sqrt(+-0) = +-0, sqrt(+inf) = +inf, negative or NaN: NaN
    MOV R18, R8 ;
    MOV R19, R9 ;
    DSETP.LTU.AND P2, PT, R[8:9], 0, PT ;
    @P2 MOV R18, RZ ;
    @P2 MOV R19, 0x7ff80000 ;
";

fn div_f32() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| Template::new(&expand(DIV_F32), &[(8, Class::R), (9, Class::R)], (20, Class::R), &[10, 12, 14, 16, 18]))
}

fn sqrt_f32() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| Template::new(&expand(SQRT_F32), &[(8, Class::R)], (20, Class::R), &[10, 12, 14, 16]))
}

fn div_f64() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        Template::new(&expand(DIV_F64), &[(8, Class::RPair), (10, Class::RPair)], (12, Class::RPair), &[14, 16, 18, 20, 22, 26, 28])
    })
}

fn sqrt_f64() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| Template::new(&expand(SQRT_F64), &[(8, Class::RPair)], (18, Class::RPair), &[10, 12, 14, 16]))
}

impl Lower<'_> {
    fn from_template(&mut self, t: &Template, ins: &[VReg], class: Class) -> VReg {
        let d = self.temp(class);
        let b = t.bundle(self, ins, d);
        self.emit_b(b);
        d
    }

    pub fn fdiv_f32(&mut self, a: VReg, b: VReg) -> VReg {
        self.from_template(div_f32(), &[a, b], Class::R)
    }

    pub fn sqrt_f32(&mut self, a: VReg) -> VReg {
        self.from_template(sqrt_f32(), &[a], Class::R)
    }

    pub fn fdiv_f64(&mut self, a: VReg, b: VReg) -> VReg {
        self.from_template(div_f64(), &[a, b], Class::RPair)
    }

    pub fn sqrt_f64(&mut self, a: VReg) -> VReg {
        self.from_template(sqrt_f64(), &[a], Class::RPair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The core is expanded with the guard and registers of each use.
    #[test]
    fn div_f64_core_expansion() {
        let t = expand(DIV_F64);
        assert!(t.contains("    MUFU.RCP.F64 R15, R11 ;\n    MOV R14, 0x1 ;"), "{}", t);
        assert!(
            t.contains("    @P2 DFMA R[18:19], -R[22:23], R[16:17], R[20:21] ;\n    DFMA R[26:27], R[14:15], R[18:19], R[16:17] ;"),
            "{}",
            t
        );
        assert!(t.contains("    DMUL R[16:17], R[8:9], R[14:15] ;"), "{}", t);
        assert!(!t.contains('{') && !t.contains('$') && !t.contains("@PT"), "{}", t);
        assert_eq!(expand(SQRT_F64).matches("DFMA R[16:17], -R[14:15], R[12:13], 0.5 ;").count(), 2);
    }

    /// Every template parses, names only declared pairs, and reads no
    /// scratch register before writing it (checked by `Template::new`).
    #[test]
    fn templates_parse() {
        assert_eq!(div_f32().pieces.len() > 10, true);
        for t in [div_f32(), sqrt_f32(), div_f64(), sqrt_f64()] {
            assert!(t.temps.iter().filter(|&&c| c == Class::P).count() <= 5, "too many predicates");
        }
    }
}
