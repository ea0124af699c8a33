//! Machine code with virtual registers: what instruction selection produces
//! and register allocation consumes.
//!
//! A [`MInst`] is one unit for the register allocator. Most are one machine
//! instruction (an `emit` [`Inst`] whose register fields are filled in after
//! allocation); instruction selection builds some as short fixed sequences
//! ("bundles", e.g. a 64-bit add is `IADD` + `IADD.X`) whose pieces share one
//! operand list, and `split_bundles` (backend) splits them into one `MInst`
//! per piece before allocation (`docs/architecture.md`). Control
//! flow (branches, returns, calls) and the function's argument definition are
//! pseudo-instructions, expanded by `encode` once the layout is known.

use smallvec::SmallVec;
use ursa_emit::model::Kind;
use ursa_emit::typed::{Handle, Reads, RegRole, Role, Writes};
use ursa_emit::{FormId, Inst};

/// The register files values live in, as the allocator sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// A 32-bit general register `Rn`.
    R,
    /// An even-aligned general register pair `R[n:n+1]` holding a 64-bit value.
    RPair,
    /// A predicate `Pn`.
    P,
}

/// A virtual register. Its class is kept in [`VCode::classes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(pub u32);

/// How an operand meets the allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Read at the start of the instruction.
    Use,
    /// Written at the end; may share a register with a use.
    Def,
    /// Written before all uses are read (multi-piece bundles): never shares a
    /// register with a use of the same instruction.
    EarlyDef,
    /// Scratch for the instruction only: conflicts with every use and def.
    Temp,
    /// Written at the end into the register of use operand `k` of the same
    /// instruction, which dies there: the next version of a pair whose other
    /// half an earlier instruction wrote (`split_bundles`), or of a field an
    /// instruction reads and writes.
    Reuse(u8),
}

/// A register operand of an [`MInst`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Opnd {
    pub vreg: VReg,
    pub kind: OpKind,
    /// A fixed physical register: `Some(n)` is `Rn` (or the pair starting at
    /// `Rn`, or `Pn`, by class).
    pub fixed: Option<u8>,
}

/// Where an operand's allocated register goes: field `field` of piece
/// `piece` gets the register number, plus one for the high half of a pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixup {
    pub piece: u8,
    pub field: u8,
    pub opnd: u8,
    pub hi: bool,
}

/// A symbol-relative value to patch into a piece (call targets, function addresses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymRef {
    pub piece: u8,
    pub symbol: String,
}

/// Pseudo-instructions whose final form depends on layout or frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pseudo {
    /// Plain machine instruction(s).
    None,
    /// Function entry: defines the incoming arguments (and the return
    /// address) in their ABI registers. Emits nothing.
    Args,
    /// Return: uses the results and the return address in their ABI
    /// registers; emits the epilogue and `RET`.
    Ret,
    /// Unconditional jump to `targets[0]`.
    Jump,
    /// Conditional branch on predicate operand 0 (negated when `negate`):
    /// to `targets[0]` when true, else `targets[1]`. With `uniform` the
    /// predicate is that uniform predicate `UPn` instead (no operand; set by
    /// `opt_uniform`) and the branch is a `UBRA`.
    Brif { negate: bool, uniform: Option<u8> },
    /// Compare operand 0 (a 32-bit index) against 0, 1, …: to
    /// `targets[1 + i]` when the index is `i`, else to `targets[0]` (the
    /// default, first as in Cranelift's jump tables).
    Table,
    /// A call: the pieces are the call sequence; a direct call's target is in `sym`.
    Call,
    /// A load or store relative to the stack pointer at entry (incoming
    /// stack arguments below it, stack results above it): the `ofs` field of
    /// piece 0 gets `frame size + offset` (known after allocation).
    FrameRel { offset: i32 },
    /// A tail call (`return_call`, `return_call_indirect`), a terminator:
    /// the operands are the register arguments (fixed to their ABI pairs),
    /// the return address (fixed, passed on), then the `stack` stack-passed
    /// arguments in order (any registers), then for an indirect call the
    /// target address pair. Emits the stores of the stack arguments, the
    /// epilogue and a `BRA` to the callee (`sym` for a direct call).
    TailCall { stack: u16, indirect: bool },
    /// Stop the thread with a trap (`BPT.TRAP code`, the CLIF trap code's
    /// byte: `docs/abi.md`, "Traps").
    Trap { code: u16 },
    /// End of a kernel: epilogue and `EXIT`.
    Exit,
}

/// One allocator-level instruction.
///
/// The fields every instruction uses are inline; the successor blocks, their
/// arguments and the symbol, which only terminators, calls and function
/// addresses have, are in one boxed [`Extra`], absent otherwise (the passes
/// move instructions around a lot, and a small `MInst` is cheap to move).
#[derive(Clone, Debug)]
pub struct MInst {
    pub pieces: SmallVec<[Inst; 2]>,
    pub opnds: SmallVec<[Opnd; 4]>,
    pub fixups: SmallVec<[Fixup; 6]>,
    pub pseudo: Pseudo,
    /// Clobbers every allocatable register (calls).
    pub clobbers_all: bool,
    /// The CLIF instruction this came from, for messages.
    pub origin: Option<u32>,
    /// Out-of-line tail: pieces `k..` are laid out after the function's
    /// last block (a cold block ending with a branch back), and piece
    /// `k - 1` is the guarded `BRA` that enters them (`encode` gives both
    /// branches their targets). The allocator still sees one instruction.
    pub cold_from: Option<u8>,
    /// The pieces are guarded by `if_convert` and every reader of their
    /// results runs under the same guard: a write the guard skips leaves a
    /// value nobody reads, so the register's old value need not survive it
    /// (`pack_regs`).
    pub predicated: bool,
    /// Targets, block arguments and symbol; `None` while all are empty.
    extra: Option<Box<Extra>>,
}

/// The parts of an [`MInst`] few instructions have ([`MInst::targets`],
/// [`MInst::args`], [`MInst::sym`]; [`MInst::extra_mut`] to add to them).
#[derive(Clone, Debug, Default)]
pub struct Extra {
    /// Successor blocks of a terminator, with the block arguments passed to each.
    pub targets: SmallVec<[BlockId; 2]>,
    pub args: SmallVec<[SmallVec<[VReg; 4]>; 2]>,
    /// Direct-call target / function-address symbol.
    pub sym: Option<SymRef>,
}

impl MInst {
    pub fn new(pseudo: Pseudo) -> MInst {
        MInst {
            pieces: SmallVec::new(),
            opnds: SmallVec::new(),
            fixups: SmallVec::new(),
            pseudo,
            clobbers_all: false,
            origin: None,
            cold_from: None,
            predicated: false,
            extra: None,
        }
    }

    /// Successor blocks of a terminator (empty for other instructions).
    #[inline]
    pub fn targets(&self) -> &[BlockId] {
        self.extra.as_ref().map_or(&[], |e| &e.targets[..])
    }

    /// [`MInst::targets`], to rewrite in place.
    #[inline]
    pub fn targets_mut(&mut self) -> &mut [BlockId] {
        self.extra.as_mut().map_or(&mut [], |e| &mut e.targets[..])
    }

    /// The block arguments passed to each target (`args()[k]` to `targets()[k]`).
    #[inline]
    pub fn args(&self) -> &[SmallVec<[VReg; 4]>] {
        self.extra.as_ref().map_or(&[], |e| &e.args[..])
    }

    /// [`MInst::args`], to rewrite in place.
    #[inline]
    pub fn args_mut(&mut self) -> &mut [SmallVec<[VReg; 4]>] {
        self.extra.as_mut().map_or(&mut [], |e| &mut e.args[..])
    }

    /// Direct-call target / function-address symbol.
    #[inline]
    pub fn sym(&self) -> Option<&SymRef> {
        self.extra.as_ref().and_then(|e| e.sym.as_ref())
    }

    /// The targets, arguments and symbol, to add to (created empty when absent).
    pub fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }

    /// Whether fixup `f` names half `h` (0 low, 1 high) of its operand's
    /// register(s): a `.hi` fixup the high half; any other the low half, and
    /// the high half too where its field is 64 bits wide (a pair read or
    /// written whole).
    pub fn names_half(&self, f: &Fixup, h: u32) -> bool {
        if f.hi {
            return h == 1;
        }
        let p = &self.pieces[f.piece as usize];
        h == 0 || p.def().bitwidth_of(f.field as usize, p.values()) > 32
    }

    pub fn is_terminator(&self) -> bool {
        matches!(
            self.pseudo,
            Pseudo::Ret | Pseudo::Exit | Pseudo::Jump | Pseudo::Brif { .. } | Pseudo::Table | Pseudo::Trap { .. } | Pseudo::TailCall { .. }
        )
    }
}

/// A basic block of machine instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

#[derive(Clone, Debug, Default)]
pub struct VBlock {
    pub params: Vec<VReg>,
    pub insts: Vec<MInst>,
    pub succs: Vec<BlockId>,
    pub preds: Vec<BlockId>,
    /// The CLIF block this came from (None for an edge-split block).
    pub clif: Option<u32>,
}

/// Where a stack slot lives in the frame.
#[derive(Clone, Copy, Debug)]
pub struct SlotLayout {
    pub offset: u32,
    pub size: u32,
}

/// A lowered function.
#[derive(Clone, Debug, Default)]
pub struct VCode {
    pub name: String,
    pub blocks: Vec<VBlock>,
    pub classes: Vec<Class>,
    /// Bytes of the frame reserved for CLIF stack slots (at `[R1 + 0]`).
    pub slots_size: u32,
    pub slots: Vec<SlotLayout>,
    /// Does the function call others (then it needs a frame for the return address).
    pub makes_calls: bool,
    /// Bytes of stack-passed arguments the function receives (8 per
    /// argument past the eighth), just below the stack pointer at entry; the
    /// frame reserves them at its top (`docs/abi.md`).
    pub incoming_bytes: u32,
}

impl VCode {
    /// Checks that every register operand of `m` names a virtual register of
    /// the field's file and width: a general register (or pair) for an `R`
    /// field, a predicate for a `P` field, a pair for a 64-bit operand and
    /// for a high half. The message names the form, the field and the register.
    pub fn check_operands(&self, m: &MInst) -> Result<(), String> {
        for fx in &m.fixups {
            let p = &m.pieces[fx.piece as usize];
            let f = &p.def().fields[fx.field as usize];
            let v = m.opnds[fx.opnd as usize].vreg;
            let class = self.class(v);
            // The field's width (its generated rule) only where the class
            // does not settle it.
            let pair = || p.reg_field_bits(fx.field as usize) > 32;
            let ok = match f.kind {
                Kind::Reg => match class {
                    Class::R => !fx.hi && !pair(),
                    Class::RPair => !fx.hi || !pair(),
                    Class::P => false,
                },
                Kind::Pred => class == Class::P && !fx.hi,
                _ => false,
            };
            if !ok {
                return Err(format!(
                    "{} field `{}` ({:?}{}) given {}{} of class {:?}",
                    p.form().name(),
                    f.name,
                    f.kind,
                    if f.kind == Kind::Reg {
                        format!(", {} bits", p.def().bitwidth_of(fx.field as usize, p.values()))
                    } else {
                        String::new()
                    },
                    v,
                    if fx.hi { ".hi" } else { "" },
                    class
                ));
            }
        }
        Ok(())
    }

    pub fn new_vreg(&mut self, class: Class) -> VReg {
        self.classes.push(class);
        VReg(self.classes.len() as u32 - 1)
    }

    pub fn class(&self, v: VReg) -> Class {
        self.classes[v.0 as usize]
    }
}

/// A set of virtual registers, by number (a [`BitSet`](crate::bitset::BitSet):
/// the passes over [`VCode`] test membership far more often than they add).
pub type VRegSet = crate::bitset::BitSet<VReg>;

impl crate::bitset::Member for VReg {
    #[inline]
    fn index(self) -> usize {
        self.0 as usize
    }
    #[inline]
    fn from_index(i: usize) -> Self {
        VReg(i as u32)
    }
}

/// Builds one [`MInst`] piece by piece: `Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, d).use_(IADD_RR::RA, a)…`.
pub struct Bundle {
    /// Boxed: each step of the chain moves the builder, and a pointer is
    /// cheaper to move than a whole `MInst`.
    pub m: Box<MInst>,
}

impl Bundle {
    pub fn new() -> Bundle {
        Bundle { m: Box::new(MInst::new(Pseudo::None)) }
    }

    pub fn pseudo(p: Pseudo) -> Bundle {
        Bundle { m: Box::new(MInst::new(p)) }
    }

    /// Starts a new machine instruction of form `form`.
    pub fn inst(mut self, form: FormId) -> Self {
        self.m.pieces.push(Inst::new(form));
        self
    }

    fn last(&mut self) -> (u8, &mut Inst) {
        let n = self.m.pieces.len() as u8 - 1;
        (n, self.m.pieces.last_mut().expect("Bundle: no instruction started"))
    }

    /// Sets a field of the last instruction (immediates, modifiers, fixed
    /// registers such as `R::Z`, `P::T`); panics if the value does not fit.
    pub fn set<K: Role>(mut self, h: impl Handle<K>, v: K::Value) -> Self {
        let (_, i) = self.last();
        if let Err(e) = i.try_set(h, v) {
            panic!("lowering built a bad instruction: {}", e);
        }
        self
    }

    fn opnd(&mut self, v: VReg, kind: OpKind, fixed: Option<u8>) -> u8 {
        // A register written earlier in the bundle and read by a later piece
        // is one operand: the value flows inside the bundle.
        if let Some(k) =
            self.m.opnds.iter().position(|o| o.vreg == v && o.fixed == fixed && (same_role(o.kind, kind) || kind == OpKind::Use))
        {
            return k as u8;
        }
        self.m.opnds.push(Opnd { vreg: v, kind, fixed });
        self.m.opnds.len() as u8 - 1
    }

    fn reg<K: RegRole>(mut self, h: impl Handle<K>, v: VReg, kind: OpKind, hi: bool) -> Self {
        let (piece, i) = self.last();
        let field = h.resolve(i.form()).index_in(i.form()) as u8;
        let opnd = self.opnd(v, kind, None);
        self.m.fixups.push(Fixup { piece, field, opnd, hi });
        self
    }

    /// Field `h` reads `v` (a 32-bit register, a predicate, or the low
    /// register of a pair used as a 64-bit operand).
    pub fn use_<K: Reads>(self, h: impl Handle<K>, v: VReg) -> Self {
        self.reg(h, v, OpKind::Use, false)
    }
    /// Field `h` reads the high half of pair `v`.
    pub fn use_hi<K: Reads>(self, h: impl Handle<K>, v: VReg) -> Self {
        self.reg(h, v, OpKind::Use, true)
    }
    /// Field `h` writes `v`.
    pub fn def<K: Writes>(self, h: impl Handle<K>, v: VReg) -> Self {
        self.reg(h, v, OpKind::Def, false)
    }
    /// Field `h` writes the high half of pair `v`.
    pub fn def_hi<K: Writes>(self, h: impl Handle<K>, v: VReg) -> Self {
        self.reg(h, v, OpKind::Def, true)
    }
    /// Field `h` writes and later pieces read `v`, a scratch of this bundle only.
    pub fn temp<K: Writes>(self, h: impl Handle<K>, v: VReg) -> Self {
        self.reg(h, v, OpKind::Temp, false)
    }
    pub fn temp_hi<K: Writes>(self, h: impl Handle<K>, v: VReg) -> Self {
        self.reg(h, v, OpKind::Temp, true)
    }

    /// Field number `field` of the last instruction (an instruction parsed
    /// from text, whose register fields come from [`Inst::reg_reads`] /
    /// [`Inst::reg_writes`]) reads or writes `v`, as `kind` says. Panics
    /// unless the field is a register the instruction reads (for a use) or
    /// writes (otherwise).
    pub fn reg_at(mut self, field: usize, v: VReg, kind: OpKind, hi: bool) -> Self {
        let (piece, i) = self.last();
        let (reads, writes) = i.field_roles(field);
        let f = &i.def().fields[field];
        if !f.kind.is_register() || (kind == OpKind::Use && !reads) || (kind != OpKind::Use && !writes) {
            panic!("{}: field `{}` is not a register it {}", i.form().name(), f.name, if kind == OpKind::Use { "reads" } else { "writes" });
        }
        let opnd = self.opnd(v, kind, None);
        self.m.fixups.push(Fixup { piece, field: field as u8, opnd, hi });
        self
    }

    /// An operand with no field (fixed-register ABI operands of pseudos).
    pub fn fixed(mut self, v: VReg, kind: OpKind, reg: u8) -> Self {
        self.m.opnds.push(Opnd { vreg: v, kind, fixed: Some(reg) });
        self
    }

    /// Finishes: in a bundle of several pieces, defs become early defs, so
    /// no piece can overwrite an input a later piece still reads.
    pub fn build(self) -> MInst {
        *self.build_boxed()
    }

    /// [`Bundle::build`], the instruction left in its box.
    pub fn build_boxed(mut self) -> Box<MInst> {
        if self.m.pieces.len() > 1 {
            for o in self.m.opnds.iter_mut() {
                if o.kind == OpKind::Def && o.fixed.is_none() {
                    o.kind = OpKind::EarlyDef;
                }
            }
        }
        self.m
    }
}

impl Default for Bundle {
    fn default() -> Self {
        Bundle::new()
    }
}

fn same_role(a: OpKind, b: OpKind) -> bool {
    match (a, b) {
        (OpKind::Use, OpKind::Use) => true,
        (OpKind::Use, _) | (_, OpKind::Use) => false,
        _ => true,
    }
}

impl std::fmt::Display for VReg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "v{}", self.0)
    }
}

/// Register names for one piece of an instruction: its bound fields print
/// as their virtual registers.
struct VRegNames(Vec<(usize, String)>);

impl ursa_emit::Labels for VRegNames {
    fn address(&self, _: &str) -> Option<u64> {
        None
    }
    fn name(&self, _: u64) -> Option<String> {
        None
    }
    fn register(&self, field: usize) -> Option<String> {
        self.0.iter().find(|(f, _)| *f == field).map(|(_, n)| n.clone())
    }
}

impl VCode {
    /// Piece `pi` of `m` in assembly syntax, its bound register fields
    /// printed as virtual registers. Bound fields hold RZ/PT until
    /// allocation, which the printer would leave out where an operand is
    /// optional; they are given distinct stand-in registers first, so every
    /// bound operand is printed.
    fn piece_text(&self, m: &MInst, pi: usize, p: &Inst) -> String {
        let mut shown = p.clone();
        let mut names = Vec::new();
        for (k, x) in m.fixups.iter().filter(|x| x.piece as usize == pi).enumerate() {
            let field = x.field as usize;
            let kind = p.def().fields[field].kind;
            shown.set_at(field, if matches!(kind, Kind::Pred | Kind::UPred) { k as u64 % 7 } else { 4 * (k as u64 + 1) });
            let v = m.opnds[x.opnd as usize].vreg;
            let name = match self.class(v) {
                Class::RPair if x.hi => format!("{}.hi", v),
                Class::RPair if p.def().bitwidth_of(field, p.values()) <= 32 => format!("{}.lo", v),
                _ => self.vreg_text(v),
            };
            names.push((field, name));
        }
        let text = ursa_emit::format_inst(&shown, None, &VRegNames(names))
            .or_else(|_| ursa_emit::format_inst(p, None, &ursa_emit::NoLabels))
            .unwrap_or_else(|e| format!("<{}: {}>", p.form().name(), e));
        text.trim_end_matches(" ;").to_string()
    }

    fn vreg_text(&self, v: VReg) -> String {
        match self.class(v) {
            Class::R => format!("{}", v),
            Class::RPair => format!("{}:pair", v),
            Class::P => format!("{}:p", v),
        }
    }
}

/// The virtual-register code as text (`ursa compile --print-after`): per block
/// its parameters, then each instruction — a machine instruction in assembly
/// syntax with its virtual registers in place of registers (`v7` a 32-bit
/// register, `v8:pair` a pair as a 64-bit operand, `v8.lo`/`v8.hi` one half
/// of it, `v9:p` a predicate; the further pieces of a bundle on lines of their
/// own starting with `+`, then `; v8 written early, v9 scratch` where a bundle
/// says so), or a pseudo-instruction (its operands as `!` early, `~` scratch,
/// `@Rn` fixed).
impl std::fmt::Display for VCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "function %{}:", self.name.trim_start_matches('%'))?;
        for (bi, b) in self.blocks.iter().enumerate() {
            let params: Vec<String> = b.params.iter().map(|&v| self.vreg_text(v)).collect();
            writeln!(f, "block{}({}):", bi, params.join(", "))?;
            for m in &b.insts {
                let opnd = |k: usize| {
                    let o = m.opnds[k];
                    let mark = match o.kind {
                        OpKind::Use | OpKind::Def | OpKind::Reuse(_) => "",
                        OpKind::EarlyDef => "!",
                        OpKind::Temp => "~",
                    };
                    let fixed = o.fixed.map(|n| format!("@R{}", n)).unwrap_or_default();
                    format!("{}{}{}", mark, self.vreg_text(o.vreg), fixed)
                };
                let targets: Vec<String> = m
                    .targets()
                    .iter()
                    .enumerate()
                    .map(|(k, t)| {
                        let args: Vec<String> = m.args().get(k).map(|a| a.iter().map(|&v| format!("{}", v)).collect()).unwrap_or_default();
                        format!("block{}({})", t.0, args.join(", "))
                    })
                    .collect();
                let all: Vec<String> = (0..m.opnds.len()).map(opnd).collect();
                match &m.pseudo {
                    Pseudo::None | Pseudo::Call | Pseudo::FrameRel { .. } => {
                        for (pi, p) in m.pieces.iter().enumerate() {
                            let text = self.piece_text(m, pi, p);
                            let sym = m.sym().filter(|s| s.piece as usize == pi).map(|s| format!(" %{}", s.symbol)).unwrap_or_default();
                            let lead = if pi == 0 { "    " } else { "    + " };
                            writeln!(f, "{}{}{}", lead, text, sym)?;
                        }
                        let notes: Vec<String> = m
                            .opnds
                            .iter()
                            .filter_map(|o| {
                                let what = match o.kind {
                                    OpKind::EarlyDef => "written early".to_string(),
                                    OpKind::Temp => "scratch".to_string(),
                                    OpKind::Reuse(k) => format!("in the register of {}", m.opnds[k as usize].vreg),
                                    OpKind::Use | OpKind::Def => return None,
                                };
                                Some(format!("{} {}", o.vreg, what))
                            })
                            .collect();
                        if !notes.is_empty() && m.pseudo == Pseudo::None {
                            writeln!(f, "    ; {}", notes.join(", "))?;
                        }
                        if m.pseudo != Pseudo::None {
                            writeln!(f, "    ; {:?} uses/defs {}", m.pseudo, all.join(", "))?;
                        }
                    }
                    Pseudo::Args => writeln!(f, "    args{}", all.iter().map(|a| format!(" {}", a)).collect::<Vec<_>>().join(","))?,
                    Pseudo::Ret => writeln!(f, "    ret {}", all.join(", "))?,
                    Pseudo::TailCall { stack, .. } => {
                        let sym = m.sym().map(|s| format!(" %{}", s.symbol)).unwrap_or_default();
                        writeln!(f, "    tail_call{} {} ({} on the stack)", sym, all.join(", "), stack)?
                    }
                    Pseudo::Exit => writeln!(f, "    exit")?,
                    Pseudo::Trap { code } => writeln!(f, "    trap {:?}", code)?,
                    Pseudo::Jump => writeln!(f, "    jump {}", targets.join(", "))?,
                    Pseudo::Brif { negate, uniform } => {
                        let up = uniform.map(|u| format!("UP{}", u)).into_iter();
                        let all: Vec<String> = up.chain(all.iter().cloned()).collect();
                        writeln!(f, "    brif {}{}, {}", if *negate { "!" } else { "" }, all.join(", "), targets.join(", "))?
                    }
                    Pseudo::Table => writeln!(f, "    br_table {}, {}", all.join(", "), targets.join(", "))?,
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// The passes move instructions around a lot: the rare parts stay
    /// behind the box (288 bytes with them inline, 192 without).
    #[test]
    fn minst_stays_small() {
        assert!(std::mem::size_of::<super::MInst>() <= 192, "MInst is {} bytes", std::mem::size_of::<super::MInst>());
    }
}
