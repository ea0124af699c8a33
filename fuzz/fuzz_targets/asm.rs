//! Assembly text. The property is `ursa_cli::fuzz_props::asm_text`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ursa_cli::fuzz_props::asm_text(data);
});
