//! The Ursa compiler: from Cranelift IR to machine code (filled by the compiler issue).
