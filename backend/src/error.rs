//! Why a function could not be compiled.

use std::fmt;

/// Why a function could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The Cranelift verifier rejected the function.
    Verifier(String),
    /// Something the compiler does not support (named instruction or type).
    Unsupported(String),
    /// An internal failure (a compiler bug): reported, never a panic.
    Internal(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Verifier(m) => write!(f, "verifier errors:\n{}", m),
            Error::Unsupported(m) => write!(f, "unsupported: {}", m),
            Error::Internal(m) => write!(f, "internal compiler error: {}", m),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The error with the code printed before it (`--print-after`) appended.
    pub(crate) fn with_printed(self, printed: &str) -> Error {
        let add = |m: String| format!("{}\n; the code printed before the error:\n{}", m, printed.trim_end());
        match self {
            Error::Verifier(m) => Error::Verifier(add(m)),
            Error::Unsupported(m) => Error::Unsupported(add(m)),
            Error::Internal(m) => Error::Internal(add(m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Error;

    #[test]
    fn an_error_keeps_the_code_printed_before_it() {
        let e = Error::Internal("instruction 5 does not encode".into()).with_printed("; after lower\nfunction %f:\n\n");
        assert_eq!(
            e.to_string(),
            "internal compiler error: instruction 5 does not encode\n; the code printed before the error:\n; after lower\nfunction %f:"
        );
    }
}
