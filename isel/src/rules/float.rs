//! Constructors for `isle/lower/float.isle`, `fcmp.isle` and `fconv.isle`:
//! f32 and f64 constants, arithmetic, comparisons and conversions
//! (docs/float.md).

use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};

use crate::lower::Lower;

impl Lower<'_> {
    pub fn ieee32_bits(&mut self, k: Ieee32) -> u32 {
        k.bits()
    }
    pub fn ieee64_bits(&mut self, k: Ieee64) -> u64 {
        k.bits()
    }
}
