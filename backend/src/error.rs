//! Why a function could not be compiled.
//!
//! Every pass reports failure as an [`Error`]: what kind of failure it is
//! (the input is invalid, uses something the compiler does not support, or
//! the compiler has a bug), which pass gave up, the instruction concerned
//! and a message. The passes say the instruction and the message; the
//! pipeline ([`crate::compile`]) stamps the pass.

use crate::pipeline::Pass;
use std::fmt;

/// Why a function could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The Cranelift verifier rejected the function (its report).
    Verifier(String),
    /// Something the compiler does not support.
    Unsupported(Diagnostic),
    /// An internal failure (a compiler bug): reported, never a panic.
    Internal(Diagnostic),
}

/// Where and why a pass gave up.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostic {
    /// The pass that gave up (`None`: the checks of the input before the
    /// first pass).
    pub pass: Option<Pass>,
    /// The instruction concerned, as printed (CLIF or machine code).
    pub inst: Option<String>,
    /// What went wrong.
    pub message: String,
    /// The output of the passes `--print-after` asked for, up to the failure.
    pub printed: Option<String>,
}

impl Diagnostic {
    fn new(message: impl Into<String>) -> Diagnostic {
        Diagnostic { message: message.into(), ..Diagnostic::default() }
    }
}

impl Error {
    /// Something the compiler does not support.
    pub fn unsupported(message: impl Into<String>) -> Error {
        Error::Unsupported(Diagnostic::new(message))
    }

    /// A compiler bug.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::Internal(Diagnostic::new(message))
    }

    /// The error about instruction `inst` (printed).
    pub fn at(mut self, inst: impl fmt::Display) -> Error {
        if let Some(d) = self.diagnostic_mut() {
            d.inst = Some(inst.to_string());
        }
        self
    }

    /// The error given up by `pass` (kept if a pass was already named).
    pub fn in_pass(mut self, pass: Pass) -> Error {
        if let Some(d) = self.diagnostic_mut() {
            d.pass.get_or_insert(pass);
        }
        self
    }

    /// The diagnostic, for the errors of a pass.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            Error::Verifier(_) => None,
            Error::Unsupported(d) | Error::Internal(d) => Some(d),
        }
    }

    fn diagnostic_mut(&mut self) -> Option<&mut Diagnostic> {
        match self {
            Error::Verifier(_) => None,
            Error::Unsupported(d) | Error::Internal(d) => Some(d),
        }
    }

    /// The pass that gave up.
    pub fn pass(&self) -> Option<Pass> {
        self.diagnostic().and_then(|d| d.pass)
    }

    /// The message without the kind, pass, instruction or printed code.
    pub fn message(&self) -> &str {
        match self {
            Error::Verifier(m) => m,
            Error::Unsupported(d) | Error::Internal(d) => &d.message,
        }
    }

    /// The error with the code printed before it (`--print-after`).
    pub(crate) fn with_printed(mut self, printed: &str) -> Error {
        match &mut self {
            Error::Verifier(m) => {
                *m = format!("{}\n; the code printed before the error:\n{}", m, printed.trim_end());
            }
            Error::Unsupported(d) | Error::Internal(d) => d.printed = Some(printed.trim_end().to_string()),
        }
        self
    }
}

impl From<ursa_isel::LowerError> for Error {
    fn from(e: ursa_isel::LowerError) -> Error {
        Error::Unsupported(Diagnostic { inst: e.inst, message: e.msg, ..Diagnostic::default() })
    }
}

impl fmt::Display for Diagnostic {
    /// `MESSAGE: `INSTRUCTION`` (the pass is said by [`Error`]'s display).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(i) = &self.inst {
            write!(f, ": `{}`", i)?;
        }
        if let Some(p) = &self.printed {
            write!(f, "\n; the code printed before the error:\n{}", p)?;
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Verifier(m) => write!(f, "verifier errors:\n{}", m),
            Error::Unsupported(d) => write!(f, "unsupported: {}", d),
            Error::Internal(d) => match d.pass {
                Some(p) => write!(f, "internal compiler error in pass {}: {}", p.name(), d),
                None => write!(f, "internal compiler error: {}", d),
            },
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::Error;
    use crate::Pass;

    #[test]
    fn an_error_keeps_the_code_printed_before_it() {
        let e = Error::internal("instruction 5 does not encode").with_printed("; after lower\nfunction %f:\n\n");
        assert_eq!(
            e.to_string(),
            "internal compiler error: instruction 5 does not encode\n; the code printed before the error:\n; after lower\nfunction %f:"
        );
    }

    #[test]
    fn an_error_names_its_pass_and_instruction() {
        let e = Error::internal("2 results rewritten for 1").at("v3 = iadd v1, v2").in_pass(Pass::legalize_i128);
        assert_eq!(e.pass(), Some(Pass::legalize_i128));
        assert_eq!(e.message(), "2 results rewritten for 1");
        assert_eq!(e.to_string(), "internal compiler error in pass legalize_i128: 2 results rewritten for 1: `v3 = iadd v1, v2`");
        // The first pass named stays (a helper run by a later pass).
        assert_eq!(e.in_pass(Pass::lower).pass(), Some(Pass::legalize_i128));
        let u = Error::unsupported("`fadd.f16` is not supported").in_pass(Pass::lower);
        assert_eq!(u.to_string(), "unsupported: `fadd.f16` is not supported");
        assert_eq!(Error::Verifier("x".into()).in_pass(Pass::lower).pass(), None);
    }
}
