//! Fills the scheduling control bits (`stall`, `wsb`, `req`) so that every
//! instruction reads and writes registers only once their producers are
//! done, under the rules of `docs/latencies.md` (which the simulator's strict
//! mode checks).
//!
//! Straight-line code is tracked exactly: a fixed-latency result becomes
//! ready `latency` cycles after its producer issues, and the stall of the
//! instruction just before a consumer is raised until the consumer issues no
//! earlier. A variable-latency result gets a write scoreboard (0–5, round
//! robin); its first consumer waits on it with `req`. Control flow is
//! handled conservatively: a branch, call, return or exit waits for every
//! outstanding result before it issues and stalls until all are ready, and
//! the first instruction of every block (a possible branch target) waits on
//! every scoreboard.

use ursa_emit::latency::{class_of_form, LatencyClass};
use ursa_emit::{control, forms, optypes, Inst, RegFile};

use crate::ir::code::{Code, Item};

/// Scoreboards the compiler uses.
const SCOREBOARDS: u8 = 6;
const MAX_STALL: u64 = 15;

/// The control fields (group `ALL`) sit at the same index in every form:
/// read and written by index, without resolving a handle each time.
const STALL: usize = control::STALL.index as usize;
const WSB: usize = control::WSB.index as usize;
const REQ: usize = control::REQ.index as usize;

/// A register a dependence can be carried by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Loc {
    R(u32),
    U(u32),
    P(u32),
    UP(u32),
}

/// Registers an instruction reads (inputs, the guard included) into
/// `reads` and those it writes (outputs) into `writes`, one `Loc` per
/// register. Both are cleared first; `refs` is scratch (kept to reuse its
/// allocation).
fn locs(i: &Inst, refs: &mut Vec<ursa_emit::RegRef>, reads: &mut Vec<Loc>, writes: &mut Vec<Loc>) {
    refs.clear();
    reads.clear();
    writes.clear();
    let nr = i.reg_refs_into(refs);
    for (k, r) in refs.iter().enumerate() {
        let out = if k < nr { &mut *reads } else { &mut *writes };
        out.extend(r.regs().map(|n| match r.file {
            RegFile::R => Loc::R(n),
            RegFile::UR => Loc::U(n),
            RegFile::P => Loc::P(n),
            RegFile::UP => Loc::UP(n),
        }));
    }
}

fn is_control(i: &Inst) -> bool {
    [optypes::BRA::ID, optypes::UBRA::ID, optypes::CALL::ID, optypes::RET::ID, optypes::EXIT::ID, optypes::BPT::ID]
        .contains(&i.def().optype)
}

impl Loc {
    /// A dense index: R, then UR, P, UP, each with room beyond its
    /// encodable range (a multi-register reference near the top).
    fn index(self) -> usize {
        match self {
            Loc::R(n) => n as usize * 4,
            Loc::U(n) => n as usize * 4 + 1,
            Loc::P(n) => n as usize * 4 + 2,
            Loc::UP(n) => n as usize * 4 + 3,
        }
    }
}

/// The outstanding results by register: a dense table plus the list of
/// occupied slots (what a hash map did, without hashing; the order of the
/// entries never matters here).
#[derive(Default)]
struct PendingMap {
    slot: Vec<Option<Pending>>,
    keys: Vec<usize>,
}

impl PendingMap {
    /// Emptied, keeping the storage; the table is grown on demand (after
    /// `pack_regs` the registers are few and low).
    fn clear(&mut self) {
        self.slot.clear();
        self.keys.clear();
    }
    fn get(&self, l: &Loc) -> Option<&Pending> {
        self.slot.get(l.index()).and_then(|p| p.as_ref())
    }
    fn insert(&mut self, l: Loc, p: Pending) {
        let i = l.index();
        if i >= self.slot.len() {
            self.slot.resize(i + 1, None);
        }
        if self.slot[i].is_none() {
            self.keys.push(i);
        }
        self.slot[i] = Some(p);
    }
    fn values(&self) -> impl Iterator<Item = &Pending> + '_ {
        self.keys.iter().filter_map(|&i| self.slot[i].as_ref())
    }
    fn retain(&mut self, mut keep: impl FnMut(&Pending) -> bool) {
        let slot = &mut self.slot;
        self.keys.retain(|&i| match &slot[i] {
            Some(p) if keep(p) => true,
            _ => {
                slot[i] = None;
                false
            }
        });
    }
}

#[derive(Clone, Copy)]
enum Pending {
    /// Ready at this cycle.
    Fixed(u64),
    /// Released by this scoreboard.
    Board(u8),
}

/// The tables of [`emit::calc_instr_deps`], kept per thread and reused from one
/// function to the next (cleared, never shrunk), as `pack_regs` keeps its own.
#[derive(Default)]
struct Scratch {
    is_start: Vec<bool>,
    pending: PendingMap,
    /// Per instruction: its register references (from the model), the
    /// registers it reads or writes (`touched`), those it writes (`outs`).
    refs: Vec<ursa_emit::RegRef>,
    touched: Vec<Loc>,
    outs: Vec<Loc>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// Sets the control bits of every instruction of `code` (inserting NOPs
/// where a wait is longer than one stall field can hold).
pub fn calc_instr_deps(code: &mut Code) {
    SCRATCH.with(|s| calc_with(code, &mut s.borrow_mut()))
}

fn calc_with(code: &mut Code, s: &mut Scratch) {
    let Scratch { is_start, pending, refs, touched, outs } = s;
    let n = code.items.len();
    is_start.clear();
    is_start.resize(n + 1, false);
    for &s in &code.block_start {
        is_start[s] = true;
    }
    // NOPs to insert before item k, as (k, NOP), in order; the items are
    // edited in place.
    let mut nops: Vec<(usize, Inst)> = Vec::new();
    pending.clear();
    let mut next_board: u8 = 0;
    // Cycle at which the next instruction issues (relative).
    let mut t: u64 = 0;
    for k in 0..n {
        let (done, rest) = code.items.split_at_mut(k);
        let it = &mut rest[0];
        let mut req: u8 = 0;
        if is_start[k] && k > 0 {
            // A branch target: whatever is outstanding from any predecessor
            // has been waited for by that predecessor; fall-through waits here.
            req = (1 << SCOREBOARDS) - 1;
        }
        locs(&it.inst, refs, touched, outs);
        touched.extend_from_slice(outs);
        let control = is_control(&it.inst);
        let mut need = t;
        if control {
            for p in pending.values() {
                match p {
                    Pending::Fixed(r) => need = need.max(*r),
                    Pending::Board(b) => req |= 1 << b,
                }
            }
        } else {
            for l in touched.iter() {
                match pending.get(l) {
                    Some(Pending::Fixed(r)) => need = need.max(*r),
                    Some(Pending::Board(b)) => req |= 1 << b,
                    None => {}
                }
            }
        }
        if is_start[k] && k > 0 {
            for p in pending.values() {
                if let Pending::Fixed(r) = p {
                    need = need.max(*r);
                }
            }
        }
        // Delay issue by raising the previous instruction's stall (or NOPs).
        if need > t {
            let mut extra = need - t;
            if let Some(prev) = done.last_mut() {
                let s = prev.inst.get_at(STALL).max(1);
                let add = extra.min(MAX_STALL - s);
                prev.inst.set_at(STALL, s + add);
                extra -= add;
            }
            while extra > 0 {
                let mut nop = Inst::new(forms::NOP_X);
                let s = extra.min(MAX_STALL);
                nop.set(control::STALL, s);
                nops.push((k, nop));
                extra -= s;
            }
            t = need;
        }
        // Waiting on a scoreboard releases everything it covers.
        if req != 0 {
            pending.retain(|p| !matches!(p, Pending::Board(b) if req & (1 << *b) != 0));
        }
        if control || (is_start[k] && k > 0) {
            pending.retain(|p| !matches!(p, Pending::Fixed(r) if *r <= t));
        }
        // Record this instruction's results.
        let class = class_of_form(it.inst.form());
        let issue = t;
        if class.variable() {
            let b = next_board;
            next_board = (next_board + 1) % SCOREBOARDS;
            // Anything still on this board must be waited for first.
            let stale = pending.values().any(|p| matches!(p, Pending::Board(x) if *x == b));
            if stale {
                req |= 1 << b;
                pending.retain(|p| !matches!(p, Pending::Board(x) if *x == b));
            }
            it.inst.set_at(WSB, b as u64);
            for &l in outs.iter() {
                pending.insert(l, Pending::Board(b));
            }
        } else {
            let ready = issue + latency(class);
            for &l in outs.iter() {
                pending.insert(l, Pending::Fixed(ready));
            }
        }
        it.inst.set_at(REQ, req as u64);
        let mut stall = it.inst.get_at(STALL).max(1);
        if control && !class.variable() && !outs.is_empty() {
            // A control instruction's own results (CALL's return address)
            // are read on the other side of the transfer, where nothing is
            // tracked: be done before the next instruction issues.
            stall = stall.max(latency(class));
        }
        it.inst.set_at(STALL, stall);
        t = issue + stall;
    }
    if !nops.is_empty() {
        insert_nops(code, nops);
    }
    // A stall on the instruction before a block start counts for the
    // fall-through path only; branches into the block have drained already
    // (they are control instructions).
}

/// Inserts each NOP before its item; a block starting at that item starts
/// at its NOPs.
fn insert_nops(code: &mut Code, nops: Vec<(usize, Inst)>) {
    let n = code.items.len();
    // Per item: its index once the NOPs before it are in.
    let mut new_index = Vec::with_capacity(n + 1);
    let mut out: Vec<Item> = Vec::with_capacity(n + nops.len());
    let mut nops = nops.into_iter().peekable();
    for (k, it) in std::mem::take(&mut code.items).into_iter().enumerate() {
        new_index.push(out.len());
        while let Some((_, nop)) = nops.next_if(|&(at, _)| at == k) {
            out.push(Item::new(nop));
        }
        out.push(it);
    }
    new_index.push(out.len());
    for s in code.block_start.iter_mut() {
        *s = new_index[*s];
    }
    code.items = out;
}

fn latency(c: LatencyClass) -> u64 {
    c.latency() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::code::testing::{code, text};

    fn deps(lines: &[&str]) -> Vec<String> {
        let mut c = code(lines);
        calc_instr_deps(&mut c);
        text(&c)
    }

    #[test]
    fn a_fixed_latency_result_is_waited_for_with_the_stall_before_its_reader() {
        // IADD has 4 cycles of latency (docs/latencies.md): its reader issues
        // 4 cycles after it; independent instructions issue back to back.
        assert_eq!(
            deps(&["IADD R0, R1, R2 ;", "IADD R3, R0, R0 ;", "IADD R5, R6, R7 ;"]),
            ["IADD R0, R1, R2 &stall=4", "IADD R3, R0, R0 &stall=1", "IADD R5, R6, R7 &stall=1"]
        );
        // One independent instruction in between covers one of the cycles;
        // IMAD's 5 cycles are waited for in full.
        assert_eq!(
            deps(&["IMAD R0, R1, R2, RZ ;", "IADD R5, R6, R7 ;", "IADD R3, R0, R0 ;"]),
            ["IMAD R0, R1, R2, RZ &stall=1", "IADD R5, R6, R7 &stall=4", "IADD R3, R0, R0 &stall=1"]
        );
        // A write after a read needs no wait; a write after a write does.
        assert_eq!(deps(&["IADD R0, R1, R2 ;", "IADD R0, R3, R3 ;"]), ["IADD R0, R1, R2 &stall=4", "IADD R0, R3, R3 &stall=1"]);
    }

    #[test]
    fn a_variable_latency_result_gets_a_scoreboard_its_reader_waits_on() {
        assert_eq!(
            deps(&["LDL R0, [R1] ;", "IADD R2, R3, R4 ;", "IADD R5, R0, R0 ;", "IADD R6, R0, R0 ;"]),
            [
                "LDL R0, [R1] &stall=1 &wsb=0",
                "IADD R2, R3, R4 &stall=1",
                // The first reader waits on board 0, the second need not.
                "IADD R5, R0, R0 &stall=1 &req=1",
                "IADD R6, R0, R0 &stall=1",
            ]
        );
    }

    #[test]
    fn scoreboards_are_reused_round_robin_after_a_wait() {
        // Six boards: the seventh load takes board 0 again and must first
        // wait for the load still on it.
        let lines: Vec<String> = (0..7).map(|k| format!("LDL R{}, [R1+0x{:x}] ;", 10 + k, 4 * k)).collect();
        let t = deps(&lines.iter().map(|s| s.as_str()).collect::<Vec<_>>());
        for (k, l) in t.iter().enumerate().take(6) {
            assert!(l.ends_with(&format!("&wsb={}", k)), "{}", l);
        }
        assert_eq!(t[6], "LDL R16, [R1+0x18] &stall=1 &wsb=0 &req=1");
    }

    #[test]
    fn nops_go_before_their_item_and_start_its_block() {
        // No wait of the current latency classes is long enough to need a
        // NOP (a stall field holds 15 cycles): the insertion is tested alone.
        let mut c = code(&["IADD R0, R1, R2 ;", "IADD R3, R0, R0 ;", ">IADD R4, R0, R3 ;"]);
        let nop = |s: u64| {
            let mut n = Inst::new(forms::NOP_X);
            n.set(control::STALL, s);
            n
        };
        insert_nops(&mut c, vec![(1, nop(15)), (2, nop(3)), (2, nop(2))]);
        assert_eq!(text(&c), ["IADD R0, R1, R2", "NOP &stall=15", "IADD R3, R0, R0", "NOP &stall=3", "NOP &stall=2", "IADD R4, R0, R3"]);
        assert_eq!(c.block_start, [0, 3]);
    }

    #[test]
    fn control_flow_waits_for_everything_outstanding() {
        let t = deps(&[
            "LDL R8, [R1] ;",
            "IADD R0, R2, R2 ;",
            "ISETP.NE.AND.U32 P0, R0, 0x0, PT ;",
            "@P0 BRA TARGET ; -> 1",
            ">IADD R3, R3, R3 ;",
            "RET R[20:21] ;",
        ]);
        assert_eq!(t[1], "IADD R0, R2, R2 &stall=4");
        // The branch waits for the predicate (4 cycles) and the load (board 0).
        assert_eq!(t[2], "ISETP.NE.AND.U32 P0, R0, 0x0, PT &stall=4");
        assert_eq!(t[3], "@P0 BRA 0x0 &stall=1 &req=1");
        // A block start (a branch target) waits on every board.
        assert_eq!(t[4], "IADD R3, R3, R3 &stall=4 &req=63");
        assert_eq!(t[5], "RET R[20:21] &stall=1");
    }
}
