//! The latency table (docs/latencies.md): how many cycles after issue an
//! instruction's results may be read, and whether they are signalled through
//! a write scoreboard. The simulator's timing model and strict hazard checker
//! and the compiler's scheduler (the pass that fills `stall`, `wsb`, `req`)
//! both use this table; it is the single source of these numbers.
//!
//! An instruction has variable latency exactly when its syntax line carries
//! `$wsb` ([`crate::syntax::Pattern::wsb`]); [`LatencyClass::variable`] agrees
//! with that for every optype (checked by a test below).

/// Latency classes (see docs/latencies.md for the numbers and the members).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LatencyClass {
    /// Integer ALU: IADD, LOP3, SHF, MOV, SEL, ISETP, SETGPR, GETGPR, ... (fixed)
    Alu,
    /// Integer multiply: IMAD, IMAD.WIDE, IMUL, IDP (fixed)
    Mul,
    /// Fixed-latency XU bit ops: POPC, FLO, BREV, BMSK, SGXT
    XuFixed,
    /// Uniform datapath ALU: every UDP instruction without `$wsb` (fixed)
    Uniform,
    /// F32 arithmetic and compares (fixed)
    Fp32,
    /// Branches, barriers, stores and other fixed-latency control
    Control,
    /// MUFU (variable)
    Mufu,
    /// DADD/DMUL/DFMA (variable)
    Dfma,
    /// DMNMX/DSETP (variable)
    Dcmp,
    /// Conversions and FRND (variable)
    Conv,
    /// R2UR, SETUGPR, GETUGPR, S2UR (variable)
    Transfer,
    /// S2R (variable)
    SpecialReg,
    /// LDG, LD, ATOM (variable)
    GlobalMem,
    /// LDS (variable)
    SharedMem,
    /// LDL (variable)
    LocalMem,
    /// LDC (variable)
    ConstMem,
    /// SHFL (variable)
    Shuffle,
}

impl LatencyClass {
    /// Every class, in declaration order.
    pub const ALL: [LatencyClass; 17] = [
        LatencyClass::Alu,
        LatencyClass::Mul,
        LatencyClass::XuFixed,
        LatencyClass::Uniform,
        LatencyClass::Fp32,
        LatencyClass::Control,
        LatencyClass::Mufu,
        LatencyClass::Dfma,
        LatencyClass::Dcmp,
        LatencyClass::Conv,
        LatencyClass::Transfer,
        LatencyClass::SpecialReg,
        LatencyClass::GlobalMem,
        LatencyClass::SharedMem,
        LatencyClass::LocalMem,
        LatencyClass::ConstMem,
        LatencyClass::Shuffle,
    ];

    /// Cycles from issue until the result can be read.
    pub const fn latency(self) -> u16 {
        match self {
            LatencyClass::Alu => 4,
            LatencyClass::Mul => 5,
            LatencyClass::XuFixed => 6,
            LatencyClass::Uniform => 2,
            LatencyClass::Fp32 => 4,
            LatencyClass::Control => 4,
            LatencyClass::Mufu => 16,
            LatencyClass::Dfma => 8,
            LatencyClass::Dcmp => 6,
            LatencyClass::Conv => 12,
            LatencyClass::Transfer => 6,
            LatencyClass::SpecialReg => 10,
            LatencyClass::GlobalMem => 200,
            LatencyClass::SharedMem => 24,
            LatencyClass::LocalMem => 40,
            LatencyClass::ConstMem => 8,
            LatencyClass::Shuffle => 12,
        }
    }

    /// Whether results are signalled through a write scoreboard (the syntax
    /// line carries `$wsb`); otherwise they are written `latency()` cycles
    /// after issue.
    pub const fn variable(self) -> bool {
        !matches!(
            self,
            LatencyClass::Alu
                | LatencyClass::Mul
                | LatencyClass::XuFixed
                | LatencyClass::Uniform
                | LatencyClass::Fp32
                | LatencyClass::Control
        )
    }
}

/// The class of an instruction, by its optype name (`ursa_emit::ISA.optypes[i].name`).
///
/// Uniform-datapath optypes are recognised by their `U` prefix (ULDC, UIADD,
/// … UF2FP); the three uniform optypes without it — SETUGPR, GETUGPR (group
/// UDP) and S2UR (group EXTU) — are register transfers and named explicitly.
/// Every other name not listed is an integer-ALU instruction.
pub fn class_of(optype_name: &str) -> LatencyClass {
    use LatencyClass::*;
    match optype_name {
        "IMAD" | "IMAD_WIDE" | "IMUL" | "IDP2A" | "IDP4A" => Mul,
        "POPC" | "FLO" | "BREV" | "BMSK" | "SGXT" => XuFixed,
        "MUFU" => Mufu,
        "DADD" | "DMUL" | "DFMA" => Dfma,
        "DMNMX" | "DSETP" => Dcmp,
        "FRND" | "I2F" | "F2I" | "F2F" => Conv,
        "R2UR" | "SETUGPR" | "GETUGPR" | "S2UR" => Transfer,
        "S2R" => SpecialReg,
        "LDG" | "LD" | "ATOM" => GlobalMem,
        "LDS" => SharedMem,
        "LDL" => LocalMem,
        "LDC" => ConstMem,
        "SHFL" => Shuffle,
        "FADD" | "FMUL" | "FFMA" | "FMNMX" | "FSETP" => Fp32,
        "BRA" | "CALL" | "RET" | "EXIT" | "NOP" | "BPT" | "LEPC" | "BSSY" | "BSYNC" | "BREAK" | "BMOV" | "STG" | "STS" | "STL" | "ST"
        | "MEMBAR" | "BAR" | "VOTE" => Control,
        o if o.starts_with('U') => Uniform,
        _ => Alu,
    }
}

/// The class of an opcode form.
pub fn class_of_form(form: crate::FormId) -> LatencyClass {
    class_of(&form.optype().name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ISA;

    /// Optype names the table lists explicitly (docs/latencies.md); every
    /// other optype must fall into the ALU or uniform default for a reason.
    const ALU_DEFAULT: &[&str] = &[
        "IADD", "LEA", "IABS", "IMNMX", "P2R", "R2P", "ISETP", "ISET", "SEL", "LOP3", "PLOP3", "SHF", "MOV", "PRMT", "I2I", "I2IP",
        "SETGPR", "GETGPR",
    ];

    #[test]
    fn every_optype_has_a_class_matching_its_syntax() {
        let mut checked = 0;
        for (i, o) in ISA.optypes.iter().enumerate() {
            let class = class_of(&o.name);
            let forms: Vec<_> = o.forms.iter().map(|&f| &ISA.forms[f as usize]).collect();
            assert!(!forms.is_empty(), "{} has no forms", o.name);
            for f in &forms {
                assert_eq!(f.optype as usize, i);
                let uniform = f.group == "UDP" || f.group == "EXTU";
                // Uniform optypes: a `U` name is Uniform or Transfer; the
                // others must be named in class_of.
                if uniform && !o.name.starts_with('U') {
                    assert!(
                        matches!(o.name.as_ref(), "SETUGPR" | "GETUGPR" | "S2UR"),
                        "uniform optype {} does not start with U and is not handled by name",
                        o.name
                    );
                }
                if uniform {
                    assert!(matches!(class, LatencyClass::Uniform | LatencyClass::Transfer), "{}: {:?}", o.name, class);
                }
                if class == LatencyClass::Alu {
                    assert!(ALU_DEFAULT.contains(&o.name.as_ref()), "{} falls into the ALU class by default", o.name);
                }
                // variable() agrees with `$wsb` in every syntax line of the form.
                // UF2FP has no syntax at all (E74) and is never assembled.
                if f.patterns.is_empty() {
                    assert_eq!(o.name, "UF2FP", "{} has no syntax pattern", f.name);
                    continue;
                }
                for p in f.patterns.iter() {
                    assert_eq!(
                        p.wsb,
                        class.variable(),
                        "{} (class {:?}): syntax line {} has $wsb = {}, the table says variable = {}",
                        f.name,
                        class,
                        p.line,
                        p.wsb,
                        class.variable()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 300, "only {} patterns checked", checked);
    }

    #[test]
    fn every_class_is_used_and_latencies_are_positive() {
        for c in LatencyClass::ALL {
            assert!(c.latency() > 0);
            assert!(ISA.optypes.iter().any(|o| class_of(&o.name) == c), "{:?} has no optype", c);
        }
        // The numbers of docs/latencies.md.
        assert_eq!(class_of("IADD").latency(), 4);
        assert_eq!(class_of("IMAD_WIDE").latency(), 5);
        assert_eq!(class_of("UIADD").latency(), 2);
        assert_eq!(class_of("ULDC"), LatencyClass::Uniform);
        assert_eq!(class_of("MUFU").latency(), 16);
        assert_eq!(class_of("LDG").latency(), 200);
        assert!(class_of("SETUGPR").variable());
        assert!(!class_of("SETGPR").variable());
    }
}
