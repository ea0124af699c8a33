//! Constructors for `isle/lower/control.isle`: traps.

use ursa_emit::forms;

use crate::lower::{InstOutput, Lower, Pred};
use crate::vcode::Bundle;

impl Lower<'_> {
    /// `@P BPT.TRAP` (or `@!P` with `negate`): stops the thread where the
    /// predicate holds.
    pub fn trap_if(&mut self, p: Pred, negate: bool) -> InstOutput {
        self.emit_b(Bundle::new().inst(forms::BPT_I).named("mode", "TRAP").set("code", 0).use_("pg", p).set("pg.not", negate as u64));
        InstOutput::new()
    }
}
