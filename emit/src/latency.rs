//! The latency table (docs/latencies.md): how many cycles after issue an
//! instruction's results may be read, and whether they are signalled through
//! a write scoreboard. The simulator's timing model and strict hazard checker
//! and the compiler's scheduler (the pass that fills `stall`, `wsb`, `req`)
//! both use this table; it is the single source of these numbers.
//!
//! The classes and their members are declared in the description
//! (`__DefLatency` in `emit/spec/project.isa`); `build.rs` generates
//! [`LatencyClass`] from them and records each optype's class
//! (`Optype::latency`). The build rejects an optype in no class or in two,
//! and a class whose `fixed`/`variable` disagrees with `$wsb` in the syntax
//! lines of its optypes.

pub use crate::tables::LatencyClass;
use crate::FormId;

/// The class of an optype (index into `ISA.optypes`).
pub fn class_of_optype(optype: u16) -> LatencyClass {
    LatencyClass::ALL[crate::ISA.optypes[optype as usize].latency as usize]
}

/// The class of an opcode form.
pub fn class_of_form(form: FormId) -> LatencyClass {
    class_of_optype(form.def().optype)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{optypes, ISA};

    #[test]
    fn classes_match_the_description() {
        assert_eq!(LatencyClass::ALL.len(), ISA.latencies.len());
        for (c, l) in LatencyClass::ALL.iter().zip(ISA.latencies.iter()) {
            assert_eq!(format!("{:?}", c), l.name);
            assert_eq!(c.latency(), l.cycles);
            assert_eq!(c.variable(), l.variable);
        }
    }

    #[test]
    fn every_class_is_used_and_latencies_are_positive() {
        for c in LatencyClass::ALL {
            assert!(c.latency() > 0);
            assert!((0..ISA.optypes.len()).any(|o| class_of_optype(o as u16) == c), "{:?} has no optype", c);
        }
        // The numbers of docs/latencies.md.
        assert_eq!(class_of_optype(optypes::IADD::ID).latency(), 4);
        assert_eq!(class_of_optype(optypes::IMAD_WIDE::ID).latency(), 5);
        assert_eq!(class_of_optype(optypes::UIADD::ID).latency(), 2);
        assert_eq!(class_of_optype(optypes::ULDC::ID), LatencyClass::Uniform);
        assert_eq!(class_of_optype(optypes::MUFU::ID).latency(), 16);
        assert_eq!(class_of_optype(optypes::LDG::ID).latency(), 200);
        assert_eq!(class_of_form(crate::forms::IADD_RR), LatencyClass::Alu);
        assert!(class_of_optype(optypes::SETUGPR::ID).variable());
        assert!(!class_of_optype(optypes::SETGPR::ID).variable());
    }

    /// `variable()` agrees with `$wsb` in every syntax line (also checked
    /// by the build).
    #[test]
    fn variable_matches_the_syntax() {
        let mut checked = 0;
        for f in ISA.forms.iter() {
            let class = class_of_optype(f.optype);
            for p in f.patterns.iter() {
                assert_eq!(p.wsb, class.variable(), "{} (class {:?}): syntax line {}", f.name, class, p.line);
                checked += 1;
            }
        }
        assert!(checked > 300, "only {} patterns checked", checked);
    }
}
