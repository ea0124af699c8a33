//! Constructors for `isle/lower/preds.isle`: boolean trees kept in
//! predicate registers.
//!
//! A *boolean tree* is a value built from `icmp`/`fcmp` results (the
//! leaves, at most [`MAX_LEAVES`]) by `band`, `bor`, `bxor`, `bnot`,
//! `uextend` and `sextend`. Every value of it has bit 0 = the logic of its
//! leaves, and the bits above bit 0 the same logic on the leaves' upper bits
//! (all zero): so they are all zero, or all one (under an odd `bnot`), known
//! from the tree's shape. "Nonzero" is then bit 0 when the upper bits are
//! zero (the only trees `bool_tree_pred` takes; an extension only of such a
//! value).
//!
//! The predicate of bit 0 is built from the bottom: an operation with a
//! comparison among its operands (through `bnot`s and extensions) is that
//! comparison's ISETP / FSETP / DSETP (ISETP + ISETP.X for an i64) with the
//! predicate of the other operand as its combining input
//! (`ISETP.LT.AND P1, PT, Ra, Rb, P0`: `P1 = (a < b) & P0`); any other
//! operation is a PLOP3 of its operands' predicates. A `bnot` costs
//! nothing: it is pushed down to the leaves (the complementary comparison,
//! `a < b` → `a >= b`, `FloatCC::complement` for the unordered cases) and
//! into the combining input's `!` and PLOP3's table by De Morgan.
//!
//! So `brif (band (icmp slt a, n), (icmp slt b, n))` is `ISETP.LT P0, PT,
//! a, n, PT; ISETP.LT.AND P0, PT, b, n, P0` and the branch: two instructions
//! instead of the nine of the integer path (SEL of each comparison, LOP3,
//! zero-extension, ISETP.NE).
//!
//! As an integer (`bool_tree_int`): the predicate of "bit 0 clear", then
//! `SEL d, upper, upper | 1, p` — one SEL (upper zero: `RZ`). Taken only
//! where no value inside the tree has another user: otherwise that user
//! materializes the inner values anyway and the LOP3 of their registers
//! (`bitops.rs`) is one instruction.

use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::ir::condcodes::CondCode;
use cranelift_codegen::ir::{types, Inst, InstructionData, Opcode, Value, ValueDef};
use ursa_emit::forms::SEL_RI;
use ursa_emit::mods::{BoolOp, LOPOp};
use ursa_emit::optypes::{DSETP, FSETP, ISETP};
use ursa_emit::typed::R;

use crate::lower::{generated, Lower, Pred};
use crate::machine::{LUT_A, LUT_B};
use crate::rules::float::{SETP_LOP, SETP_PP, SETP_PP_NOT};
use crate::rules::ops::Pieces;
use crate::vcode::{Bundle, Class, VReg};

/// Comparisons in one tree at most: each is one compare instruction
/// wherever the tree is read, so a bigger tree read in several places
/// would repeat more than the integer path costs.
pub const MAX_LEAVES: u32 = 4;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Logic {
    And,
    Or,
    Xor,
}

impl Logic {
    fn eval(self, a: bool, b: bool) -> bool {
        match self {
            Logic::And => a & b,
            Logic::Or => a | b,
            Logic::Xor => a ^ b,
        }
    }
    fn lut(self, a: u8, b: u8) -> u8 {
        match self {
            Logic::And => a & b,
            Logic::Or => a | b,
            Logic::Xor => a ^ b,
        }
    }
}

/// One node of a boolean tree.
enum Node {
    Cmp(Inst),
    Not(Value),
    Ext(Value),
    Bin(Logic, Value, Value),
}

impl Lower<'_> {
    /// What `v` is as a node of a boolean tree (`None`: not one).
    fn bool_node(&self, v: Value) -> Option<Node> {
        let dfg = &self.f.dfg;
        let ValueDef::Result(i, _) = dfg.value_def(dfg.resolve_aliases(v)) else { return None };
        match dfg.insts[i] {
            InstructionData::IntCompare { args, .. } => {
                matches!(dfg.value_type(args[0]), types::I8 | types::I16 | types::I32 | types::I64).then_some(Node::Cmp(i))
            }
            InstructionData::FloatCompare { args, .. } => {
                matches!(dfg.value_type(args[0]), types::F32 | types::F64).then_some(Node::Cmp(i))
            }
            InstructionData::Unary { opcode: Opcode::Bnot, arg } => Some(Node::Not(arg)),
            InstructionData::Unary { opcode: Opcode::Uextend | Opcode::Sextend, arg } => Some(Node::Ext(arg)),
            InstructionData::Binary { opcode, args } => {
                let op = match opcode {
                    Opcode::Band => Logic::And,
                    Opcode::Bor => Logic::Or,
                    Opcode::Bxor => Logic::Xor,
                    _ => return None,
                };
                Some(Node::Bin(op, args[0], args[1]))
            }
            _ => None,
        }
    }

    /// How many instructions and block arguments read `v` (counted once
    /// per function, when first asked).
    fn use_count(&mut self, v: Value) -> u32 {
        let f = self.f;
        let counts = self.use_counts.get_or_insert_with(|| {
            // (At its final size at once: counting never grows it.)
            let mut n: SecondaryMap<Value, u32> = SecondaryMap::with_capacity(f.dfg.num_values());
            n.resize(f.dfg.num_values());
            for b in f.layout.blocks() {
                for i in f.layout.block_insts(b) {
                    for a in f.dfg.inst_values(i) {
                        n[f.dfg.resolve_aliases(a)] += 1;
                    }
                }
            }
            n
        });
        counts[f.dfg.resolve_aliases(v)]
    }

    /// `only_use` (`bitops.isle`): `v` when exactly one instruction or
    /// block argument reads it.
    pub fn only_use(&mut self, v: Value) -> Option<Value> {
        (self.use_count(v) == 1).then_some(v)
    }

    /// Whether the upper bits of tree `v` are all one (`None`: `v` is no
    /// boolean tree, has more than [`MAX_LEAVES`] leaves, or — with
    /// `single` — a value below the root with another user).
    fn bool_shape(&mut self, v: Value, root: bool, single: bool, leaves: &mut u32) -> Option<bool> {
        // (The node first: most values are none, and the use counts are
        // made only when a tree asks for them.)
        let node = self.bool_node(v)?;
        if single && !root && self.use_count(v) != 1 {
            return None;
        }
        match node {
            Node::Cmp(_) => {
                *leaves += 1;
                (*leaves <= MAX_LEAVES).then_some(false)
            }
            Node::Not(x) => Some(!self.bool_shape(x, false, single, leaves)?),
            // An extension of all-one upper bits is not all one.
            Node::Ext(x) => (!self.bool_shape(x, false, single, leaves)?).then_some(false),
            Node::Bin(op, a, b) => {
                let ua = self.bool_shape(a, false, single, leaves)?;
                let ub = self.bool_shape(b, false, single, leaves)?;
                Some(op.eval(ua, ub))
            }
        }
    }

    /// The comparison `v` is, through `bnot`s and extensions, and whether
    /// an odd number of `bnot`s inverts it.
    fn as_leaf(&self, mut v: Value) -> Option<(Inst, bool)> {
        let mut neg = false;
        loop {
            match self.bool_node(v)? {
                Node::Cmp(i) => return Some((i, neg)),
                Node::Not(x) => {
                    neg = !neg;
                    v = x;
                }
                Node::Ext(x) => v = x,
                Node::Bin(..) => return None,
            }
        }
    }

    /// The predicate of bit 0 of tree `v` (checked by `bool_shape`),
    /// inverted with `neg`.
    fn bool_emit(&mut self, v: Value, neg: bool) -> Pred {
        match self.bool_node(v).expect("bool_emit: checked by bool_shape") {
            Node::Cmp(i) => self.cmp_leaf(i, neg, None),
            Node::Not(x) => self.bool_emit(x, !neg),
            Node::Ext(x) => self.bool_emit(x, neg),
            Node::Bin(op, a, b) => {
                let (leaf, other) = match (self.as_leaf(b), self.as_leaf(a)) {
                    (Some(l), _) => (Some(l), a),
                    (None, Some(l)) => (Some(l), b),
                    (None, None) => (None, a),
                };
                if let Some((cmp, cmp_neg)) = leaf {
                    let q = self.bool_emit(other, false);
                    // not (x & y) = !x | !y, not (x | y) = !x & !y, not (x ^ y) = x ^ !y.
                    let (op, leaf_neg, q_not) = match (op, neg) {
                        (Logic::And, true) => (Logic::Or, true, true),
                        (Logic::Or, true) => (Logic::And, true, true),
                        (op, neg) => (op, neg, false),
                    };
                    return self.cmp_leaf(cmp, cmp_neg ^ leaf_neg, Some((op, q, q_not)));
                }
                let pa = self.bool_emit(a, false);
                let pb = self.bool_emit(b, false);
                let lut = op.lut(LUT_A, LUT_B);
                let d = self.temp(Class::P);
                self.emit_b(Bundle::new().plop3(d, pa, Some(pb), if neg { !lut } else { lut }));
                d
            }
        }
    }

    /// The compare instruction(s) of comparison `i` (its complement with
    /// `neg`), through the `icmp_pred` / `fcmp_pred` rules; with `combine`
    /// = (op, q, q_not) its result is joined with `q` (`!q`) by the compare
    /// instruction's own boolean input.
    fn cmp_leaf(&mut self, i: Inst, neg: bool, combine: Option<(Logic, Pred, bool)>) -> Pred {
        let p = match self.f.dfg.insts[i] {
            InstructionData::IntCompare { cond, args, .. } => {
                let cc = if neg { cond.complement() } else { cond };
                generated::constructor_icmp_pred(self, &cc, args[0], args[1])
            }
            InstructionData::FloatCompare { cond, args, .. } => {
                let cc = if neg { cond.complement() } else { cond };
                generated::constructor_fcmp_pred(self, &cc, args[0], args[1])
            }
            _ => unreachable!("cmp_leaf of a comparison only"),
        };
        let Some((op, q, q_not)) = combine else { return p };
        // The compare that writes `p` is the last instruction pushed (after
        // any extension or constant of its operands); its last piece (the
        // ISETP.X of a pair) takes the combining input.
        let m = self.cur.pop().expect("cmp_leaf: the compare was pushed");
        let isetp = m.pieces.last().is_some_and(|x| x.def().optype == ISETP::ID);
        let setp = m.pieces.last().is_some_and(|x| x.def().optype == FSETP::ID || x.def().optype == DSETP::ID);
        if !isetp && !setp {
            // A test that is no compare instruction (a narrow sign or
            // inequality test: one LOP3 with a predicate output) has no
            // boolean input: one PLOP3 joins it.
            self.cur.push(m);
            let d = self.temp(Class::P);
            let lut = op.lut(LUT_A, if q_not { !LUT_B } else { LUT_B });
            self.emit_b(Bundle::new().plop3(d, p, Some(q), lut));
            return d;
        }
        let b = Bundle::rewrite(m);
        let b = if isetp {
            let bop = match op {
                Logic::And => BoolOp::AND,
                Logic::Or => BoolOp::OR,
                Logic::Xor => BoolOp::XOR,
            };
            b.set(ISETP::BOOLOP, bop).use_(ISETP::PP, q).set(ISETP::PP_NOT, q_not)
        } else {
            let lop = match op {
                Logic::And => LOPOp::AND,
                Logic::Or => LOPOp::OR,
                Logic::Xor => LOPOp::XOR,
            };
            b.set(SETP_LOP, lop).use_(SETP_PP, q).set(SETP_PP_NOT, q_not)
        };
        self.emit_b(b);
        p
    }

    /// `bool_tree_pred` (`preds.isle`): the predicate "`v` is nonzero" of a
    /// boolean tree whose upper bits are zero.
    pub fn bool_tree_pred(&mut self, v: Value) -> Option<Pred> {
        let mut leaves = 0;
        if self.bool_shape(v, true, false, &mut leaves)? {
            return None;
        }
        Some(self.bool_emit(v, false))
    }

    /// `bool_tree_int` (`preds.isle`): the 32-bit value of boolean tree `i`
    /// as one SEL on its predicate, where nothing inside the tree has
    /// another user.
    pub fn bool_tree_int(&mut self, i: Inst) -> Option<VReg> {
        let v = *self.f.dfg.inst_results(i).first()?;
        let mut leaves = 0;
        let ones = self.bool_shape(v, true, true, &mut leaves)?;
        let upper = if ones { 0xffff_fffe } else { 0 };
        // `clear`: bit 0 is 0, the value is `upper`; else `upper | 1`.
        let clear = self.bool_emit(v, true);
        let d = self.temp(Class::R);
        let b = Bundle::new().inst(ursa_emit::forms::SEL_RI).def(SEL_RI::RD, d);
        let b = if ones { b.use_(SEL_RI::RA, self.mov_imm(upper)) } else { b.set(SEL_RI::RA, R::Z) };
        self.emit_b(b.set(SEL_RI::VB, (upper | 1) as u64).use_(SEL_RI::PP, clear));
        Some(d)
    }

    /// `bool_from_pred` (`preds.isle`): 1 where `p` holds, else 0, as
    /// `SEL d, RZ, 0x1, !p`.
    pub fn bool_from_pred(&mut self, p: Pred) -> VReg {
        self.bool_of(p, true)
    }

    /// 1 where `p` does not hold, 0 where it does: `SEL d, RZ, 0x1, p`.
    pub fn bool_from_not_pred(&mut self, p: Pred) -> VReg {
        self.bool_of(p, false)
    }

    /// `SEL d, RZ, 0x1` on `!p` (`not`) or `p`.
    fn bool_of(&mut self, p: Pred, not: bool) -> VReg {
        let d = self.temp(Class::R);
        self.emit_b(
            Bundle::new()
                .inst(ursa_emit::forms::SEL_RI)
                .def(SEL_RI::RD, d)
                .set(SEL_RI::RA, R::Z)
                .set(SEL_RI::VB, 1)
                .use_(SEL_RI::PP, p)
                .set(SEL_RI::PP_NOT, not),
        );
        d
    }
}
