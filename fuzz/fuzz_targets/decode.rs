//! Instruction decoding: the input as 16-byte words. The property is `ursa_cli::fuzz_props::decode_words`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ursa_cli::fuzz_props::decode_words(data);
});
