//! Machine code with virtual registers: what instruction selection produces
//! and register allocation consumes.
//!
//! A [`MInst`] is one unit for the register allocator. Most are one machine
//! instruction (an `emit` [`Inst`] whose register fields are filled in after
//! allocation); instruction selection builds some as short fixed sequences
//! ("bundles", e.g. a 64-bit add is `IADD` + `IADD.X`) whose pieces share one
//! operand list, and `lower_bundles` (backend) splits them into one `MInst`
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
    /// half an earlier instruction wrote (`lower_bundles`), or of a field an
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
///
/// The operand lists read like slices (`m.opnds[k]`, `m.fixups.iter()`);
/// only the methods of this module change them ([`Bundle`] to build,
/// [`MInst::bind`], [`MInst::unbind`], [`MInst::replace_piece`], … to
/// rewrite), so the operand rules (one operand per value of a bundle, early
/// defs in a bundle of several pieces, a fixup naming a piece and an
/// operand that exist) hold everywhere.
#[derive(Debug)]
pub struct MInst {
    pub pieces: SmallVec<[Inst; 2]>,
    /// The register operands, in the allocator's order.
    pub opnds: List<[Opnd; 4]>,
    /// Which field of which piece gets which operand's register.
    pub fixups: List<[Fixup; 6]>,
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
    /// The pieces are guarded by `opt_if_convert` and every reader of their
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

/// A list of an [`MInst`] (its operands, its fixups): a slice to read,
/// changed only by this module.
pub struct List<A: smallvec::Array>(SmallVec<A>);

impl<A: smallvec::Array> std::fmt::Debug for List<A>
where
    A::Item: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<A: smallvec::Array> std::ops::Deref for List<A> {
    type Target = [A::Item];
    #[inline]
    fn deref(&self) -> &[A::Item] {
        &self.0
    }
}

impl<A: smallvec::Array> List<A> {
    #[inline]
    pub fn as_slice(&self) -> &[A::Item] {
        &self.0
    }
}

impl<'a, A: smallvec::Array> IntoIterator for &'a List<A> {
    type Item = &'a A::Item;
    type IntoIter = std::slice::Iter<'a, A::Item>;
    #[inline]
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// By hand rather than derived: a [`List`] is not `Clone`, so no pass can
/// give one instruction another's list. (The operand lists hold plain
/// data: copied as slices, at once.)
impl Clone for MInst {
    fn clone(&self) -> MInst {
        MInst {
            pieces: self.pieces.clone(),
            opnds: List(SmallVec::from_slice(&self.opnds.0)),
            fixups: List(SmallVec::from_slice(&self.fixups.0)),
            pseudo: self.pseudo.clone(),
            clobbers_all: self.clobbers_all,
            origin: self.origin,
            cold_from: self.cold_from,
            predicated: self.predicated,
            extra: self.extra.clone(),
        }
    }
}

impl MInst {
    pub fn new(pseudo: Pseudo) -> MInst {
        MInst {
            pieces: SmallVec::new(),
            opnds: List(SmallVec::new()),
            fixups: List(SmallVec::new()),
            pseudo,
            clobbers_all: false,
            origin: None,
            cold_from: None,
            predicated: false,
            extra: None,
        }
    }

    /// A plain instruction of the one piece `i`, no register field bound yet.
    #[inline]
    pub fn plain(i: Inst) -> MInst {
        let mut m = MInst::new(Pseudo::None);
        m.pieces.push(i);
        m
    }

    /// Appends operand `v` (`kind`, fixed to register `fixed`), a new one
    /// even where `v` is an operand already: a pseudo's ABI or stack
    /// operand, a scratch, a result, a value read by no field. Its index.
    #[inline]
    pub fn add_operand(&mut self, v: VReg, kind: OpKind, fixed: Option<u8>) -> u8 {
        self.opnds.0.push(Opnd { vreg: v, kind, fixed });
        self.opnds.0.len() as u8 - 1
    }

    /// The use of `v` (no fixed register), added once. Its index.
    #[inline]
    pub fn use_operand(&mut self, v: VReg) -> u8 {
        match self.opnds.iter().position(|o| o.kind == OpKind::Use && o.vreg == v && o.fixed.is_none()) {
            Some(k) => k as u8,
            None => self.add_operand(v, OpKind::Use, None),
        }
    }

    /// The operand of `v` as `kind` in a bundle: a register written by an
    /// earlier piece and read by a later one is one operand (the value
    /// flows inside the bundle), and so are two reads or two writes.
    #[inline]
    fn bundle_operand(&mut self, v: VReg, kind: OpKind, fixed: Option<u8>) -> u8 {
        match self.opnds.iter().position(|o| o.vreg == v && o.fixed == fixed && (same_role(o.kind, kind) || kind == OpKind::Use)) {
            Some(k) => k as u8,
            None => self.add_operand(v, kind, fixed),
        }
    }

    /// Field `field` of piece `piece` gets the register of operand `opnd`
    /// (its high half with `hi`).
    #[inline]
    pub fn bind(&mut self, piece: u8, field: u8, opnd: u8, hi: bool) {
        debug_assert!((piece as usize) < self.pieces.len() && (opnd as usize) < self.opnds.len(), "a fixup names no piece or operand");
        debug_assert!(self.pieces[piece as usize].def().fields[field as usize].kind.is_register(), "a fixup names no register field");
        self.fixups.0.push(Fixup { piece, field, opnd, hi });
    }

    /// Removes fixup `k` (its field keeps what the piece holds); the
    /// operand stays, to [`MInst::retain_operands`].
    pub fn unbind(&mut self, k: usize) -> Fixup {
        self.fixups.0.remove(k)
    }

    /// Operand `k` made to name `v` (its kind and fixed register kept).
    pub fn set_operand_vreg(&mut self, k: usize, v: VReg) {
        self.opnds.0[k].vreg = v;
    }

    /// Every operand's virtual register through `f`.
    pub fn rename(&mut self, mut f: impl FnMut(VReg) -> VReg) {
        for o in self.opnds.0.iter_mut() {
            o.vreg = f(o.vreg);
        }
    }

    /// Keeps the operands for which `keep(index, operand, named)` holds
    /// (`named`: a fixup binds it), renumbering the fixups and reuses;
    /// a dropped operand must be one no fixup or reuse names.
    pub fn retain_operands(&mut self, mut keep: impl FnMut(usize, &Opnd, bool) -> bool) {
        let n = self.opnds.len();
        let mut renum: SmallVec<[u8; 8]> = SmallVec::new();
        for (k, o) in self.opnds.iter().enumerate() {
            let named = self.fixups.iter().any(|f| f.opnd as usize == k);
            if !keep(k, o, named) {
                debug_assert!(!named, "an operand a fixup names is dropped");
                // The first dropped one: number the operands from here on.
                renum.extend(0..k as u8);
                renum.push(u8::MAX);
                let mut next = k as u8;
                for (j, o) in self.opnds.iter().enumerate().skip(k + 1) {
                    let named = self.fixups.iter().any(|f| f.opnd as usize == j);
                    if keep(j, o, named) {
                        renum.push(next);
                        next += 1;
                    } else {
                        debug_assert!(!named, "an operand a fixup names is dropped");
                        renum.push(u8::MAX);
                    }
                }
                break;
            }
        }
        if renum.len() < n {
            return;
        }
        let mut k = 0;
        self.opnds.0.retain(|_| {
            k += 1;
            renum[k - 1] != u8::MAX
        });
        for f in self.fixups.0.iter_mut() {
            f.opnd = renum[f.opnd as usize];
        }
        for o in self.opnds.0.iter_mut() {
            if let OpKind::Reuse(u) = o.kind {
                o.kind = OpKind::Reuse(renum[u as usize]);
            }
        }
    }

    /// Piece `pi` becomes `with`: fixup `drop` (of that piece) goes, the
    /// piece's other fixups move to field `map(field)`. `false`, and `self`
    /// unchanged, where `map` has no field for one of them.
    pub fn replace_piece(&mut self, pi: usize, with: Inst, drop: Option<usize>, mut map: impl FnMut(u8) -> Option<u8>) -> bool {
        let mut fields: SmallVec<[u8; 6]> = SmallVec::with_capacity(self.fixups.len());
        for (j, f) in self.fixups.iter().enumerate() {
            fields.push(if f.piece as usize != pi || Some(j) == drop {
                f.field
            } else {
                match map(f.field) {
                    Some(x) => x,
                    None => return false,
                }
            });
        }
        for (f, x) in self.fixups.0.iter_mut().zip(fields) {
            f.field = x;
        }
        if let Some(k) = drop {
            self.fixups.0.remove(k);
        }
        self.pieces[pi] = with;
        true
    }

    /// The pieces become `pieces`; fixup `j` moves to `to(j)` (piece, field,
    /// high half) or goes (`None`); operands that only the fixups gone named
    /// go too (those no fixup named, the fixed ones, stay), and a single piece
    /// writes its results as plain defs (the rule of [`Bundle::build`]).
    pub fn reshape(&mut self, pieces: SmallVec<[Inst; 2]>, mut to: impl FnMut(usize) -> Option<(u8, u8, bool)>) {
        let old: SmallVec<[Fixup; 6]> = std::mem::take(&mut self.fixups.0);
        self.pieces = pieces;
        for (j, f) in old.iter().enumerate() {
            if let Some((piece, field, hi)) = to(j) {
                self.bind(piece, field, f.opnd, hi);
            }
        }
        self.retain_operands(|k, _, named| named || !old.iter().any(|f| f.opnd as usize == k));
        if self.pieces.len() == 1 {
            for o in self.opnds.0.iter_mut() {
                if o.kind == OpKind::EarlyDef {
                    o.kind = OpKind::Def;
                }
            }
        }
    }

    /// Guards every piece with predicate `p` (`@!p` when `not`), one use
    /// operand bound to each piece's guard field.
    pub fn guard(&mut self, p: VReg, not: bool) {
        self.predicated = true;
        let k = self.add_operand(p, OpKind::Use, None);
        for pi in 0..self.pieces.len() {
            let piece = &mut self.pieces[pi];
            let g = piece.def().guard.expect("guardable") as u8;
            let gn = piece.def().guard_not.expect("a guard has a .not field") as usize;
            piece.set_at(gn, not as u64);
            self.bind(pi as u8, g, k, false);
        }
    }

    /// Drops every operand and fixup (a branch whose predicate became a
    /// uniform one named in its pseudo).
    pub fn clear_operands(&mut self) {
        self.opnds.0.clear();
        self.fixups.0.clear();
    }

    /// Result `d` is written into the register of `from`, which dies here
    /// (the next version of a pair whose other half an earlier instruction
    /// wrote): a use of `from` bound to no field is added, and `d`'s
    /// operand becomes [`OpKind::Reuse`] of it.
    pub fn reuse(&mut self, d: VReg, from: VReg) {
        let u = self.add_operand(from, OpKind::Use, None);
        let k = self.opnds.iter().position(|o| o.vreg == d && o.kind != OpKind::Use).expect("reuse: no result of that register");
        self.opnds.0[k].kind = OpKind::Reuse(u);
    }

    /// In a bundle of several pieces, defs become early defs, so no piece
    /// can overwrite an input a later piece still reads.
    fn promote_early_defs(&mut self) {
        if self.pieces.len() > 1 {
            for o in self.opnds.0.iter_mut() {
                if o.kind == OpKind::Def && o.fixed.is_none() {
                    o.kind = OpKind::EarlyDef;
                }
            }
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
        self.names_half_of(f, h, || self.is_quad_hi(f))
    }

    /// [`MInst::names_half`] with [`MInst::is_quad_hi`] of `f` given (asked
    /// only for a `.hi` fixup's low half).
    #[inline]
    pub fn names_half_of(&self, f: &Fixup, h: u32, quad_hi: impl FnOnce() -> bool) -> bool {
        if f.hi {
            // The high pair of a quad (both its halves), else a pair's high half.
            return h == 1 || quad_hi();
        }
        let p = &self.pieces[f.piece as usize];
        h == 0 || p.def().bitwidth_of(f.field as usize, p.values()) > 32
    }

    /// Per piece, the fields a fixup binds to the low half of its operand
    /// (not `.hi`), as bit sets: [`MInst::is_quad_hi`] of a `.hi` fixup is
    /// its field's bit in its piece's set. (A form has fewer than 64 fields.)
    pub fn low_fields(&self) -> SmallVec<[u64; 4]> {
        let mut low: SmallVec<[u64; 4]> = smallvec::smallvec![0; self.pieces.len()];
        for f in self.fixups.iter().filter(|f| !f.hi) {
            low[f.piece as usize] |= 1 << f.field;
        }
        low
    }

    /// Whether `.hi` fixup `f` names the high pair of a quad: another
    /// fixup binds the low pair to the same field.
    #[inline]
    pub fn is_quad_hi(&self, f: &Fixup) -> bool {
        self.fixups.iter().any(|g| !g.hi && g.piece == f.piece && g.field == f.field)
    }

    /// The register quads `R[n:n+3]` of `m`'s 128-bit fields ([`Bundle::use_quad`],
    /// [`Bundle::def_quad`]): (operand of the low pair, operand of the high
    /// pair). The low pair's register must be a multiple of 4 and the high
    /// pair's that plus 2.
    #[inline]
    pub fn quads(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.fixups.iter().filter(|f| f.hi).filter_map(move |f| {
            self.fixups.iter().find(|g| !g.hi && g.piece == f.piece && g.field == f.field).map(|g| (g.opnd as usize, f.opnd as usize))
        })
    }

    /// Whether `m` reads or writes a register quad.
    #[inline]
    pub fn has_quad(&self) -> bool {
        self.quads().next().is_some()
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
    /// Some instruction reads or writes a register quad ([`MInst::quads`]):
    /// the allocators look for them only then.
    pub has_quads: bool,
    /// Pairs made to carry a 32-bit value in the low word of an ABI slot
    /// for regalloc2 (`assign_regs_regalloc2::pair_abi_values`: it cannot
    /// fix a single register there): nothing writes their high half, which
    /// `check_assignment` verifies.
    pub abi_low_pairs: Vec<VReg>,
}

/// A register operand of the wrong file or width for its field (a bug of
/// the pass that built the instruction).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandError {
    pub form: &'static str,
    pub field: String,
    pub kind: Kind,
    /// The field's width, for a register field.
    pub bits: Option<u32>,
    pub vreg: VReg,
    /// The high half of the register was named.
    pub hi: bool,
    pub class: Class,
}

impl std::fmt::Display for OperandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bits = self.bits.map(|b| format!(", {} bits", b)).unwrap_or_default();
        let hi = if self.hi { ".hi" } else { "" };
        write!(f, "{} field `{}` ({:?}{}) given {}{} of class {:?}", self.form, self.field, self.kind, bits, self.vreg, hi, self.class)
    }
}

impl std::error::Error for OperandError {}

impl VCode {
    /// Checks that every register operand of `m` names a virtual register of
    /// the field's file and width: a general register (or pair) for an `R`
    /// field, a predicate for a `P` field, a pair for a 64-bit operand and
    /// for a high half. The error names the form, the field and the register.
    pub fn check_operands(&self, m: &MInst) -> Result<(), OperandError> {
        for fx in &m.fixups {
            let p = &m.pieces[fx.piece as usize];
            let f = &p.def().fields[fx.field as usize];
            let v = m.opnds[fx.opnd as usize].vreg;
            let class = self.class(v);
            // The field's width (its generated rule) only where the class
            // does not settle it.
            let pair = || p.reg_field_is_wide(fx.field as usize);
            debug_assert_eq!(pair(), p.reg_field_bits(fx.field as usize) > 32);
            let quad = || p.reg_field_bits(fx.field as usize) > 64;
            let ok = match f.kind {
                Kind::Reg => match class {
                    Class::R => !fx.hi && !pair(),
                    // A 128-bit field names two pairs, the high one `.hi`.
                    Class::RPair => !fx.hi || !pair() || (quad() && m.is_quad_hi(fx)),
                    Class::P => false,
                },
                Kind::Pred => class == Class::P && !fx.hi,
                _ => false,
            };
            if !ok {
                return Err(OperandError {
                    form: p.form().name(),
                    field: f.name.to_string(),
                    kind: f.kind,
                    bits: (f.kind == Kind::Reg).then(|| p.def().bitwidth_of(fx.field as usize, p.values())),
                    vreg: v,
                    hi: fx.hi,
                    class,
                });
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

/// Builds one [`MInst`] piece by piece: `Bundle::new().inst(forms::IADD_RR).def(IADD_RR::RD, d).use_(IADD_RR::RA, a)…`,
/// or goes on with an existing one ([`Bundle::rewrite`]). The register
/// steps bind fields of the last piece.
pub struct Bundle {
    /// Boxed: each step of the chain moves the builder, and a pointer is
    /// cheaper to move than a whole `MInst`.
    m: Box<MInst>,
}

impl Bundle {
    pub fn new() -> Bundle {
        Bundle { m: Box::new(MInst::new(Pseudo::None)) }
    }

    pub fn pseudo(p: Pseudo) -> Bundle {
        Bundle { m: Box::new(MInst::new(p)) }
    }

    /// Goes on building `m`: further pieces and operands join the ones it has.
    pub fn rewrite(m: MInst) -> Bundle {
        Bundle { m: Box::new(m) }
    }

    /// Starts a new machine instruction of form `form`.
    pub fn inst(self, form: FormId) -> Self {
        self.piece(Inst::new(form))
    }

    /// Starts a new machine instruction that is `i` (one made or parsed
    /// elsewhere; its register fields bound with [`Bundle::reg_at`]).
    pub fn piece(mut self, i: Inst) -> Self {
        self.m.pieces.push(i);
        self
    }

    /// Pieces `k..` are an out-of-line tail ([`MInst::cold_from`]).
    pub fn cold_from(mut self, k: Option<u8>) -> Self {
        self.m.cold_from = k;
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

    fn reg<K: RegRole>(mut self, h: impl Handle<K>, v: VReg, kind: OpKind, hi: bool) -> Self {
        let (piece, i) = self.last();
        let field = h.resolve(i.form()).index_in(i.form()) as u8;
        let opnd = self.m.bundle_operand(v, kind, None);
        self.m.bind(piece, field, opnd, hi);
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
    /// The 128-bit field `h` reads the quad of pairs `lo` and `hi` (two
    /// distinct values: the allocator places `hi` two registers above `lo`).
    pub fn use_quad<K: Reads, H: Handle<K> + Copy>(self, h: H, lo: VReg, hi: VReg) -> Self {
        debug_assert!(lo != hi, "a quad of one pair twice");
        self.reg(h, lo, OpKind::Use, false).reg(h, hi, OpKind::Use, true)
    }
    /// The 128-bit field `h` writes the quad of pairs `lo` and `hi`.
    pub fn def_quad<K: Writes, H: Handle<K> + Copy>(self, h: H, lo: VReg, hi: VReg) -> Self {
        self.reg(h, lo, OpKind::Def, false).reg(h, hi, OpKind::Def, true)
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
    /// [`Inst::reg_writes`]) reads or writes `v`, as `kind` says. The caller
    /// checks once, when it reads the text, that the field is a register the
    /// instruction reads (for a use) or writes (otherwise): [`takes_reg`].
    pub fn reg_at(mut self, field: usize, v: VReg, kind: OpKind, hi: bool) -> Self {
        let (piece, i) = self.last();
        debug_assert!(takes_reg(i, field, kind), "{}: field {} is not a register for {:?}", i.form().name(), field, kind);
        let opnd = self.m.bundle_operand(v, kind, None);
        self.m.bind(piece, field as u8, opnd, hi);
        self
    }

    /// An operand with no field, fixed to register `reg` (the ABI operands of pseudos).
    pub fn fixed(mut self, v: VReg, kind: OpKind, reg: u8) -> Self {
        self.m.add_operand(v, kind, Some(reg));
        self
    }

    /// An operand with no field and no fixed register (a branch's
    /// predicate, a table's index and scratch, a tail call's stack
    /// arguments and target).
    pub fn operand(mut self, v: VReg, kind: OpKind) -> Self {
        self.m.add_operand(v, kind, None);
        self
    }

    /// Result `d` continues pair `from` in its register ([`MInst::reuse`]).
    pub fn reuse(mut self, d: VReg, from: VReg) -> Self {
        self.m.reuse(d, from);
        self
    }

    /// Finishes: in a bundle of several pieces, defs become early defs, so
    /// no piece can overwrite an input a later piece still reads.
    pub fn build(self) -> MInst {
        *self.build_boxed()
    }

    /// [`Bundle::build`], the instruction left in its box.
    pub fn build_boxed(mut self) -> Box<MInst> {
        self.m.promote_early_defs();
        self.m
    }
}

impl Default for Bundle {
    fn default() -> Self {
        Bundle::new()
    }
}

/// Whether field `field` of `i` is a register `i` reads (for `kind` a
/// use) or writes (any other kind): what [`Bundle::reg_at`] may bind.
pub fn takes_reg(i: &Inst, field: usize, kind: OpKind) -> bool {
    let (reads, writes) = i.field_roles(field);
    i.def().fields[field].kind.is_register() && if kind == OpKind::Use { reads } else { writes }
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
            if x.hi && m.is_quad_hi(x) {
                // The low pair's name stands for the quad.
                continue;
            }
            let name = match self.class(v) {
                Class::RPair if p.def().bitwidth_of(field, p.values()) > 64 => {
                    let hi = m.fixups.iter().find(|y| y.hi && y.piece == x.piece && y.field == x.field);
                    format!("{}+{}:quad", v, hi.map_or(v, |y| m.opnds[y.opnd as usize].vreg))
                }
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

    use super::*;
    use ursa_emit::forms::{self, IADD_RR, MOV_R};

    /// `IADD d.lo, c, a.lo, b.lo` + `IADD.X d.hi, a.hi, b.hi, c`: a bundle
    /// of two pieces, the carry written by one and read by the other.
    fn add64() -> (MInst, [VReg; 4]) {
        let (a, b, c, d) = (VReg(0), VReg(1), VReg(2), VReg(3));
        let m = Bundle::new()
            .inst(forms::IADD_RR)
            .def(IADD_RR::RD, d)
            .def(IADD_RR::PU, c)
            .use_(IADD_RR::RA, a)
            .use_(IADD_RR::RB, b)
            .inst(forms::IADD_RR)
            .use_hi(IADD_RR::RA, a)
            .use_hi(IADD_RR::RB, b)
            .use_(IADD_RR::PP, c)
            .def_hi(IADD_RR::RD, d)
            .build();
        (m, [a, b, c, d])
    }

    #[test]
    fn a_bundle_has_one_operand_per_value_and_writes_early() {
        let (m, [a, b, c, d]) = add64();
        let ops: Vec<(VReg, OpKind)> = m.opnds.iter().map(|o| (o.vreg, o.kind)).collect();
        assert_eq!(ops, [(d, OpKind::EarlyDef), (c, OpKind::EarlyDef), (a, OpKind::Use), (b, OpKind::Use)]);
        // The carry read by the second piece is the operand the first writes.
        assert!(m.fixups.iter().any(|f| f.piece == 1 && f.opnd == 1));
        assert_eq!(m.fixups.len(), 8);
    }

    #[test]
    fn reshaping_to_one_piece_drops_its_operands_and_writes_late() {
        let (mut m, [a, b, _, d]) = add64();
        // Keep the first piece without its carry output.
        let first = m.pieces[0].clone();
        let pu = IADD_RR::PU.index as u8;
        let to: Vec<Option<(u8, u8, bool)>> =
            m.fixups.iter().map(|f| (f.piece == 0 && f.field != pu).then_some((0, f.field, f.hi))).collect();
        m.reshape(smallvec::smallvec![first], |j| to[j]);
        let ops: Vec<(VReg, OpKind)> = m.opnds.iter().map(|o| (o.vreg, o.kind)).collect();
        assert_eq!(ops, [(d, OpKind::Def), (a, OpKind::Use), (b, OpKind::Use)]);
        // The fixups name the renumbered operands.
        let named: Vec<VReg> = m.fixups.iter().map(|f| m.opnds[f.opnd as usize].vreg).collect();
        assert_eq!(named, [d, a, b]);
    }

    #[test]
    fn retained_operands_keep_their_fixups_and_reuses() {
        let (x, y, z) = (VReg(0), VReg(1), VReg(2));
        let mut m = Bundle::new().inst(forms::MOV_R).def(MOV_R::RD, z).use_(MOV_R::RB, y).operand(x, OpKind::Use).reuse(z, y).build();
        // Operands: z (reuse of 3), y, x, y (unbound); drop x.
        m.retain_operands(|_, o, _| o.vreg != x);
        let ops: Vec<(VReg, OpKind)> = m.opnds.iter().map(|o| (o.vreg, o.kind)).collect();
        assert_eq!(ops, [(z, OpKind::Reuse(2)), (y, OpKind::Use), (y, OpKind::Use)]);
        assert_eq!(m.fixups.iter().map(|f| f.opnd).collect::<Vec<_>>(), [0, 1]);
    }

    #[test]
    fn a_piece_is_replaced_only_when_every_field_maps() {
        let (mut m, _) = add64();
        let before: Vec<Fixup> = m.fixups.to_vec();
        let other = m.pieces[1].clone();
        assert!(!m.replace_piece(0, other.clone(), None, |f| (f != IADD_RR::RB.index as u8).then_some(f)));
        assert_eq!(m.fixups.to_vec(), before);
        // Dropping the fixup of RB and keeping the other fields.
        let rb = m.fixups.iter().position(|f| f.piece == 0 && f.field == IADD_RR::RB.index as u8).unwrap();
        assert!(m.replace_piece(0, other, Some(rb), Some));
        assert_eq!(m.fixups.len(), before.len() - 1);
        assert_eq!(m.pieces[0], m.pieces[1]);
    }
}
