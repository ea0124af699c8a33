//! Constructors for `isle/lower/control.isle`: traps.

use ursa_emit::forms;

use crate::lower::{InstOutput, Lower, Pred};
use crate::vcode::Bundle;
use ursa_emit::forms::BPT_I;
use ursa_emit::mods;

impl Lower<'_> {
    /// `@P BPT.TRAP code` (or `@!P` with `negate`): stops the thread where the
    /// predicate holds. The code is the byte of the CLIF trap code of the
    /// instruction being lowered (`int_ovf`, `int_divz`, `user1`, …), so a
    /// trap report can name it (`docs/abi.md`, "Traps").
    pub fn trap_if(&mut self, p: Pred, negate: bool) -> InstOutput {
        let code = self.cur_inst.and_then(|i| self.f.dfg.insts[i].trap_code()).map_or(0, |c| c.as_raw().get() as u64);
        self.emit_b(
            Bundle::new()
                .inst(forms::BPT_I)
                .set(BPT_I::MODE, mods::BptMode::TRAP)
                .set(BPT_I::CODE, code)
                .use_(BPT_I::PG, p)
                .set(BPT_I::PG_NOT, negate),
        );
        InstOutput::new()
    }
}
