//! ELF objects. The property is `ursa_cli::fuzz_props::elf_object`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ursa_cli::fuzz_props::elf_object(data);
});
