//! The post-layout code: the machine instructions of one function in their
//! final order, blocks as index ranges, with the facts the passes after
//! register allocation need that the instruction itself does not hold
//! (branch targets, call symbols, implicit ABI registers). `lower_vcode`
//! produces it; `insert_reconvergence`, `pack_regs`, `opt_branches`,
//! `opt_idle_regions` and `calc_instr_deps` rewrite it; `encode` turns it
//! into bytes.

use ursa_emit::Inst;
use ursa_isel::vcode::BlockId;

use crate::regalloc::assignment::SLOT_REG_BASE;

#[derive(Clone, Debug)]
pub struct Item {
    pub inst: Inst,
    /// Branch target (BRA_I `target` field), resolved at the end.
    pub target: Option<BlockId>,
    /// A block address the instruction names without branching there (the
    /// `target` field of `BSSY`): resolved like a branch target, but not an
    /// edge of the control flow for the passes that follow branches.
    pub label: Option<BlockId>,
    /// Symbol for a call relocation (CALL_I `target` field).
    pub call: Option<String>,
    /// General registers the instruction reads or writes without naming them
    /// in a field: the ABI registers of a call's arguments and results, a
    /// return's results. `pack_regs` keeps them where they are.
    pub implicit: Implicit,
    /// A guarded instruction whose results only readers under the same
    /// guard read (`MInst::predicated`): its writes start new values.
    pub predicated: bool,
    /// The CLIF instruction it was lowered from (`MInst::origin`), for the
    /// line table; `None` for what the layout adds (the allocator's moves,
    /// prologue, epilogue, branches, convergence barriers).
    pub origin: Option<u32>,
}

/// Registers an instruction uses by convention rather than by field.
#[derive(Clone, Debug, Default)]
pub struct Implicit {
    pub reads: Vec<u32>,
    pub writes: Vec<u32>,
}

/// The machine code of one function before branch resolution.
pub struct Code {
    pub items: Vec<Item>,
    /// Index of the first item of each block.
    pub block_start: Vec<usize>,
    /// The block of this code where each VCode block starts (join points and
    /// cold blocks of out-of-line bundle parts make them differ); empty:
    /// the same numbers.
    pub vblocks: Vec<usize>,
    pub frame_size: u32,
    /// Copies `lower_vcode` dropped because their two sides got one register.
    pub dropped_copies: usize,
}

impl Code {
    /// The blocks as item ranges, with successors (into `ranges` and
    /// `succs`, replacing their contents).
    pub fn blocks(&self, ranges: &mut Vec<(usize, usize)>, succs: &mut Vec<smallvec::SmallVec<[usize; 2]>>) {
        let n = self.items.len();
        let nb = self.block_start.len();
        ranges.clear();
        ranges.extend((0..nb).map(|b| (self.block_start[b], if b + 1 < nb { self.block_start[b + 1] } else { n })));
        succs.clear();
        succs.resize(nb, smallvec::SmallVec::new());
        for b in 0..nb {
            let (s, e) = ranges[b];
            let mut falls = true;
            for it in &self.items[s..e] {
                if let Some(t) = it.target {
                    succs[b].push(t.0 as usize);
                    if !it.inst.is_guarded() {
                        falls = false;
                    }
                }
            }
            if let Some(last) = self.items[s..e].last() {
                let op = last.inst.def().optype;
                if ([ursa_emit::optypes::RET::ID, ursa_emit::optypes::EXIT::ID, ursa_emit::optypes::BPT::ID].contains(&op)
                    || is_tail_jump(last))
                    && !last.inst.is_guarded()
                {
                    falls = false;
                }
            }
            if falls && b + 1 < nb {
                succs[b].push(b + 1);
            }
        }
    }
}

/// The one way to make an [`Item`]: `Item::new(i)` (no target, label, call
/// or implicit registers), then the steps that add them.
impl Item {
    #[inline]
    pub fn new(i: Inst) -> Item {
        Item { inst: i, target: None, label: None, call: None, implicit: Implicit::default(), predicated: false, origin: None }
    }
    /// A branch to block `b`.
    #[inline]
    pub fn to(mut self, b: BlockId) -> Item {
        self.target = Some(b);
        self
    }
    /// Names block `b` without branching there (`BSSY`).
    #[inline]
    pub fn labelled(mut self, b: BlockId) -> Item {
        self.label = Some(b);
        self
    }
    /// The call relocation's symbol, if any.
    #[inline]
    pub fn calling(mut self, sym: Option<String>) -> Item {
        self.call = sym;
        self
    }
    /// The registers it reads or writes without naming them.
    #[inline]
    pub fn using(mut self, implicit: Implicit) -> Item {
        self.implicit = implicit;
        self
    }
    /// The CLIF instruction it comes from ([`Item::origin`](Item#structfield.origin)).
    #[inline]
    pub fn from_clif(mut self, origin: Option<u32>) -> Item {
        self.origin = origin;
        self
    }
    /// See [`Item::predicated`](Item#structfield.predicated).
    #[inline]
    pub fn predicated(mut self, p: bool) -> Item {
        self.predicated = p;
        self
    }
}

/// A `BRA` out of the function: a tail call's jump (direct, with a call
/// relocation, or through a register). Branches inside the function have a
/// block target.
pub fn is_tail_jump(it: &Item) -> bool {
    it.target.is_none() && it.inst.def().optype == ursa_emit::optypes::BRA::ID
}

/// The laid-out code as assembly text, blocks as labels `.LB<n>:` (register
/// numbers as the last pass left them).
impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut starts = self.block_start.iter().enumerate().peekable();
        for (k, it) in self.items.iter().enumerate() {
            while let Some(&(b, &s)) = starts.peek() {
                if s != k {
                    break;
                }
                writeln!(f, ".LB{}:", b)?;
                starts.next();
            }
            let text = inst_text(&it.inst);
            let target = it.target.or(it.label).map(|t| format!(" -> .LB{}", t.0)).unwrap_or_default();
            let call = it.call.as_ref().map(|c| format!(" -> %{}", c)).unwrap_or_default();
            writeln!(f, "    {}{}{}", text, target, call)?;
        }
        Ok(())
    }
}

/// One instruction as assembly text (without its label or the `;`), also
/// when it does not encode yet.
pub fn inst_text(inst: &Inst) -> String {
    ursa_emit::format_inst(inst, None, &ursa_emit::NoLabels).map(|t| t.trim_end_matches(" ;").to_string()).unwrap_or_else(|e| {
        match above_file(inst) {
            // A spill slot still named above the file (before pack_regs):
            // the form and its general registers.
            Some(regs) => format!("{} {}", inst.form().name(), regs),
            None => format!("<{}: {}>", inst.form().name(), e),
        }
    })
}

/// `writes R256 reads R132`: the general registers of an instruction that
/// names a register above the file (a spill slot kept in a register, before
/// `pack_regs`); None for any other instruction.
pub fn above_file(i: &Inst) -> Option<String> {
    let (ws, rs) = (i.reg_writes(), i.reg_reads());
    let names = |refs: &[ursa_emit::RegRef]| -> String {
        refs.iter().filter(|x| x.file == ursa_emit::RegFile::R).map(|x| format!("R{}", x.num)).collect::<Vec<_>>().join(", ")
    };
    let high = ws.iter().chain(rs.iter()).any(|x| x.file == ursa_emit::RegFile::R && x.num >= SLOT_REG_BASE);
    high.then(|| format!("writes {} reads {}", names(&ws), names(&rs)))
}

/// Hand-built code for the unit tests of the passes after layout.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Code, Item};
    use ursa_emit::{format_inst, parse_inst, NoLabels};
    use ursa_isel::vcode::BlockId;

    /// Code from assembly lines; `>` before a line marks a block start,
    /// `-> N` after it a branch to block N (`TARGET` in the text).
    pub fn code(lines: &[&str]) -> Code {
        let mut items = Vec::new();
        let mut block_start = Vec::new();
        for l in lines {
            let (l, start) = match l.strip_prefix('>') {
                Some(r) => (r, true),
                None => (*l, items.is_empty()),
            };
            if start {
                block_start.push(items.len());
            }
            let (text, target) = match l.split_once("->") {
                Some((t, b)) => (t.trim(), Some(BlockId(b.trim().parse().unwrap()))),
                None => (l.trim(), None),
            };
            let text = if target.is_some() { text.replace("TARGET", "0x0") } else { text.to_string() };
            let mut it = Item::new(parse_inst(&text, 0, None, &NoLabels).unwrap_or_else(|e| panic!("{}: {:?}", text, e)));
            it.target = target;
            items.push(it);
        }
        Code { items, block_start, vblocks: Vec::new(), frame_size: 0, dropped_copies: 0 }
    }

    /// The instructions as assembly, without the final ` ;`.
    pub fn text(c: &Code) -> Vec<String> {
        c.items.iter().map(|it| format_inst(&it.inst, None, &NoLabels).unwrap().trim_end_matches(" ;").to_string()).collect()
    }
}
